"""The label in an address-label answer, whose shape the spec does not show (§2.13): an ``application/pdf``
answer is the label itself; a JSON answer is kept as received and carries the label as base64 at a
configurable dotted path (a string, or an array of them: one label each). What cannot be found or is not a
PDF is said, never guessed: the label then has no PDF and the answer is still kept.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectors.commerce import ReceivedAnswer
from connectors.jsontext import parse_json
from fileio.files import write_received

PDF_MAGIC = b"%PDF-"

AnswerPlacer = Callable[[Path, bytes], object]
"""Puts an answer as received (its bytes) at a path."""
LABEL_ID_FIELDS: tuple[str, ...] = ("item.identCode", "identCode", "id")
"""Where a JSON answer names its label, the first found: the barcode number public clients read, else an
id."""


@dataclass(frozen=True)
class LabelContent:
    """What one answer holds.

    Attributes:
        received: the answer as received and the extension it is kept with (``json``; ``bin`` for an answer
            that is neither JSON nor a PDF); None for a PDF answer, which is the label itself.
        pdfs: the labels found, as PDF bytes.
        label_id: the label's barcode number or id, when the answer names one.
        problem: why there is no PDF; empty when there is.
    """

    received: tuple[bytes, str] | None
    pdfs: tuple[bytes, ...]
    label_id: str = ""
    problem: str = ""


def label_content(answer: ReceivedAnswer, *, pdf_field: str, setting: str) -> LabelContent:
    """The labels of ``answer``: the answer itself when it is a PDF, else the base64 at ``pdf_field`` of its
    JSON (``setting`` names where that path is set, for the problem a missing field reports)."""
    if answer.media_type == "application/pdf" or answer.content.startswith(PDF_MAGIC):
        if not answer.content.startswith(PDF_MAGIC):
            return LabelContent((answer.content, "bin"), (), problem="the PDF answer is not a PDF")
        return LabelContent(None, (answer.content,))
    try:
        body = parse_json(answer.content, api="commerce")
    except ValueError:
        kind = answer.media_type or "no content type"
        problem = f"the answer is neither JSON nor a PDF ({kind}); kept as received"
        return LabelContent((answer.content, "bin"), (), problem=problem)
    received = (answer.content, "json")
    label_id = _label_id(body)
    value = value_at(body, pdf_field)
    if value is None:
        problem = f"the answer has no label at {pdf_field} ({setting} names where it is)"
        return LabelContent(received, (), label_id, problem)
    texts = value if isinstance(value, list) else [value]
    pdfs: list[bytes] = []
    for number, text in enumerate(texts, start=1):
        where = pdf_field if len(texts) == 1 else f"{pdf_field}[{number - 1}]"
        pdf, problem = _decoded(text, where)
        if problem:
            return LabelContent(received, (), label_id, problem)
        pdfs.append(pdf)
    if not pdfs:
        return LabelContent(received, (), label_id, f"the answer's {pdf_field} is empty")
    return LabelContent(received, tuple(pdfs), label_id)


def label_id_of(answer: ReceivedAnswer) -> str | None:
    """The label's barcode number or id in a JSON answer (:data:`LABEL_ID_FIELDS`); None without one."""
    try:
        body = parse_json(answer.content, api="commerce")
    except ValueError:
        return None
    return _label_id(body) or None


def _label_id(body: Any) -> str:
    return next((found for path in LABEL_ID_FIELDS if (found := _text_at(body, path))), "")


def value_at(body: Any, path: str) -> Any:
    """The value at dotted ``path`` of a JSON value (a number indexes an array); None when absent."""
    node = body
    for part in path.split("."):
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _text_at(body: Any, path: str) -> str | None:
    value = value_at(body, path)
    return value if isinstance(value, str) and value.strip() else None


def _decoded(text: Any, where: str) -> tuple[bytes, str]:
    """The PDF a base64 text holds, or the problem with it."""
    if not isinstance(text, str):
        return b"", f"the answer's {where} is not base64 text"
    try:
        content = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return b"", f"the answer's {where} is not valid base64"
    if not content.startswith(PDF_MAGIC):
        return b"", f"the label at {where} is not a PDF"
    return content, ""


def write_label_files(
    output_dir: Path, stem: str, content: LabelContent, *, place_answer: AnswerPlacer | None = None
) -> tuple[Path | None, list[Path]]:
    """Write the answer as received (``<stem>.json``) and the labels (``<stem>.pdf``, ``<stem>-2.pdf`` …);
    the answer's file (None for a PDF answer) and the labels' files. ``place_answer`` puts the answer itself
    (a PDF answer: the label) where it goes (the kept answer linked there); by default it is written."""
    place = place_answer or _write
    answer_path = None
    if content.received is not None:
        data, extension = content.received
        answer_path = output_dir / f"{stem}.{extension}"
        place(answer_path, data)
    pdf_paths = [output_dir / _pdf_name(stem, number) for number in range(1, len(content.pdfs) + 1)]
    for path, pdf in zip(pdf_paths, content.pdfs, strict=True):
        (place if content.received is None else _write)(path, pdf)  # a PDF answer is its label
    return answer_path, pdf_paths


def _write(path: Path, content: bytes) -> None:
    write_received(path, content)


def _pdf_name(stem: str, number: int) -> str:
    return f"{stem}.pdf" if number == 1 else f"{stem}-{number}.pdf"


def file_names(paths: Sequence[Path]) -> str:
    """The names of ``paths`` in one cell."""
    return "; ".join(path.name for path in paths)
