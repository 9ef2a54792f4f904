"""Answers spoiled after the request was processed: corrupt downloads and statuses the specifications do not
list (the ``corrupt_download`` and ``unlisted_status`` faults of :mod:`sandbox.faults`), and the answer type
the fault middleware keeps a processed request's answer in.

A download is spoiled where the answer carries it: the first ``data`` field (base64, next to the ``size`` of
the decoded bytes) of a document or structure file, or the whole body of a raw stream (the address service's
output file; cut short, it declares its whole length and the connection closes after half of it, as when a
transfer breaks off). A corruption that does not fit the answer (``base64`` of a raw stream, ``zip`` of bytes
that are no archive) leaves it as it was.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Corruption = Literal["size", "base64", "zip"]
CORRUPTIONS: tuple[Corruption, ...] = ("size", "base64", "zip")
ZIP_MAGIC = b"PK\x03\x04"
# The status fields of the three APIs' jobs and orders, with the value an unlisted_status fault gives each
# unless it names one: TokenStatus (§2.6 lists 0-7), an order's statusValue, a purchase's two phases.
STATUS_FIELDS: dict[str, object] = {
    "TokenStatus": 9,
    "statusValue": "ON_HOLD",
    "validationStatus": "ON_HOLD",
    "sortingStatus": "ON_HOLD",
}
_NOT_BASE64 = "!?%&*#"


def json_body(content_type: str, body: bytes) -> Any:
    """``body`` as JSON when ``content_type`` says JSON and it parses; else None."""
    if "json" not in content_type:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


@dataclass
class Answer:
    """A response as the app gave it: HTTP status, headers and the whole body."""

    status: int
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""
    # Set when the body is only the first part of an answer of this length: the connection closes after it.
    declared_length: int | None = None

    @property
    def content_type(self) -> str:
        for name, value in self.headers:
            if name.lower() == b"content-type":
                return value.decode("latin-1").lower()
        return ""

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        return json_body(self.content_type, self.body)

    def with_body(self, body: bytes) -> Answer:
        """This answer carrying ``body`` instead, its Content-Length set to match."""
        headers = [(name, value) for name, value in self.headers if name.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        return Answer(self.status, headers, body)


def corrupt_download(answer: Answer, how: str) -> Answer:
    """``answer`` with its download spoiled ``how``: ``size`` (the decoded document is cut to half while its
    ``size`` still names the whole; a raw stream breaks off after half of its declared length), ``base64``
    (the document's data is no base64) or ``zip`` (bytes of the archive's first member flipped: it opens,
    but its content fails its CRC)."""
    if how not in CORRUPTIONS:
        raise ValueError(f"corrupt_download: {how!r} is none of {', '.join(CORRUPTIONS)}")
    payload = answer.json()
    if payload is None and how == "size":
        cut = answer.with_body(answer.body[: len(answer.body) // 2])
        cut.declared_length = len(answer.body)
        return cut
    if payload is None:
        raw = _spoiled_bytes(answer.body, how)
        return answer if raw is None else answer.with_body(raw)
    document = _first_document(payload)
    if document is None:
        return answer
    data = _spoiled_data(str(document["data"]), how)
    if data is None:
        return answer
    document["data"] = data
    return answer.with_body(json.dumps(payload).encode())


def with_unlisted_status(answer: Answer, value: object = None) -> Answer:
    """``answer`` with every status field of :data:`STATUS_FIELDS` in it set to ``value`` (or that field's
    own unlisted value)."""
    payload = answer.json()
    if payload is None or not _replace_statuses(payload, value):
        return answer
    return answer.with_body(json.dumps(payload).encode())


def _first_document(node: Any) -> dict[str, Any] | None:
    """The first object (depth first) with a string ``data`` field: a document or a structure file."""
    if isinstance(node, dict):
        if isinstance(node.get("data"), str):
            return node
        children: list[Any] = list(node.values())
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        found = _first_document(child)
        if found is not None:
            return found
    return None


def _spoiled_data(data: str, how: str) -> str | None:
    if how == "base64":
        # Characters outside the alphabet, and one character short: neither a strict nor a lenient decoder
        # reads it.
        middle = len(data) // 2
        return data[:middle] + _NOT_BASE64 + data[middle:-1]
    try:
        content = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    spoiled = _spoiled_bytes(content, how)
    return None if spoiled is None else base64.b64encode(spoiled).decode("ascii")


def _spoiled_bytes(content: bytes, how: str) -> bytes | None:
    if how == "size":
        return content[: len(content) // 2]
    if how == "zip" and content.startswith(ZIP_MAGIC):
        return _flip_member_bytes(content)
    return None


def _flip_member_bytes(archive: bytes) -> bytes:
    """The archive with bytes in the middle of its first member's compressed data inverted."""
    name_length = int.from_bytes(archive[26:28], "little")
    extra_length = int.from_bytes(archive[28:30], "little")
    compressed = int.from_bytes(archive[18:22], "little")
    start = 30 + name_length + extra_length
    if compressed < 2:
        compressed = max(2, len(archive) - start)
    first, last = start + compressed // 4, start + max(compressed // 4 + 1, (3 * compressed) // 4)
    spoiled = bytearray(archive)
    for index in range(first, min(last, len(spoiled))):
        spoiled[index] ^= 0xFF
    return bytes(spoiled)


def _replace_statuses(node: Any, value: object) -> bool:
    replaced = False
    if isinstance(node, dict):
        for key in list(node):
            if key in STATUS_FIELDS and not isinstance(node[key], dict | list):
                node[key] = STATUS_FIELDS[key] if value is None else value
                replaced = True
            else:
                replaced = _replace_statuses(node[key], value) or replaced
    elif isinstance(node, list):
        for item in node:
            replaced = _replace_statuses(item, value) or replaced
    return replaced
