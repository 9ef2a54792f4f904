"""Address labels (barcode sub-API) and return orders (§4.4): the spec shows neither their paths nor their
fields (§2.13), so the sandbox serves them at ``commerce_paths.barcode_path`` and ``return_order_path`` and
accepts any JSON object; a body that is not a JSON object is 400.

A return order is answered 200 with ``{"id": <new UUID>, "received": [<the body's top-level keys, sorted>]}``.
An address label gets the same and the label: ``"item": {"identCode": <a barcode number>, "label": [<a
one-page PDF, base64>]}``. What of that is a guess: the field ``item.label`` as an array of base64 labels and
``item.identCode`` (the shape public clients of the real barcode service read, and the connector's default
setting); that the label is a PDF (the real service renders the format its request asks for); the ident
code's digits (here: ``99.60.`` and twelve digits from the label's id); and that each request makes a new
label, whatever its body.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

from fastapi import APIRouter, Request

from sandbox.commerce.bodies import json_object
from sandbox.commerce.errors import INVALID_PARAMETER
from sandbox.guesses import is_other, play


def accepting_router(path: str) -> APIRouter:
    """A router accepting any JSON object posted to ``path``."""
    router = APIRouter()

    @router.post(path)
    async def accept(request: Request) -> dict[str, Any]:
        body = await json_object(request, INVALID_PARAMETER)
        return {"id": str(uuid.uuid4()), "received": sorted(body.data)}

    return router


def label_router(path: str) -> APIRouter:
    """A router answering any JSON object posted to ``path`` with a new label."""
    router = APIRouter()

    @router.post(path)
    async def label(request: Request) -> dict[str, Any]:
        body = await json_object(request, INVALID_PARAMETER)
        label_id = uuid.uuid4()
        ident_code = f"99.60.{label_id.int % 10**12:012d}"
        label = base64.b64encode(label_pdf(ident_code)).decode("ascii")
        if is_other(request):  # commerce.label-answer, the other way
            play(request, "commerce.label-answer")
            return {"id": str(label_id), "received": sorted(body.data), "label": {"content": label}}
        return {
            "id": str(label_id),
            "received": sorted(body.data),
            "item": {"identCode": ident_code, "label": [label]},
        }

    return router


def label_pdf(text: str) -> bytes:
    """A valid one-page PDF (A6) that shows ``text`` (ASCII letters, digits and dots)."""
    stream = f"BT /F1 14 Tf 20 380 Td (Sandbox label {text}) Tj ET".encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 298 420] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, content in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, content)
    table = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, table)
    return bytes(out)
