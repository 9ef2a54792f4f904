"""Newspaper documents: base64 decoding, size check, extension from mimeType, atomic save, raw bodies."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import httpx
import pytest

from connectors.newspaper.documents import (
    Document,
    RawResponse,
    document_from_body,
    document_set_from_response,
    extension_for,
    write_atomically,
)
from connectors.newspaper.errors import DocumentInvalid, DocumentSizeMismatch

PDF = b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\n%%EOF\n"


def encoded(content: bytes) -> str:
    return base64.b64encode(content).decode()


@pytest.mark.parametrize(
    ("mime", "extension"),
    [
        ("application/pdf", ".pdf"),
        ("PDF", ".pdf"),
        ("pdf", ".pdf"),
        ("application/pdf; charset=binary", ".pdf"),
        ("application/zip", ".zip"),
        ("text/csv", ".csv"),
        ("XLSX", ".xlsx"),
        (None, ".bin"),
        ("weird type!", ".bin"),
    ],
)
def test_extension_from_mime_type(mime: str | None, extension: str) -> None:
    assert extension_for(mime) == extension


def test_document_decodes_and_checks_size(tmp_path: Path) -> None:
    document = document_from_body({"document": {"mimeType": "PDF", "size": len(PDF), "data": encoded(PDF)}})
    assert document is not None
    assert document.decoded_bytes() == PDF
    path = document.save(tmp_path / "out", "sort-protocol")
    assert path == tmp_path / "out" / "sort-protocol.pdf"
    assert path.read_bytes() == PDF
    assert os.listdir(tmp_path / "out") == ["sort-protocol.pdf"]


def test_base64_with_line_breaks_is_accepted() -> None:
    wrapped = base64.encodebytes(PDF * 10).decode()
    assert "\n" in wrapped
    assert Document(mime_type="PDF", size=len(PDF) * 10, data=wrapped).decoded_bytes() == PDF * 10


def test_size_mismatch_is_a_typed_error_and_nothing_is_written(tmp_path: Path) -> None:
    document = Document(mime_type="application/pdf", size=len(PDF) + 1, data=encoded(PDF))
    with pytest.raises(DocumentSizeMismatch) as caught:
        document.save(tmp_path, "note")
    assert (caught.value.expected, caught.value.actual) == (len(PDF) + 1, len(PDF))
    assert list(tmp_path.iterdir()) == []


def test_invalid_base64_is_document_invalid() -> None:
    with pytest.raises(DocumentInvalid):
        Document(mime_type="PDF", size=3, data="not*base64").decoded_bytes()


def test_stem_must_be_a_plain_name(tmp_path: Path) -> None:
    document = Document.from_bytes(PDF, "application/pdf")
    with pytest.raises(ValueError):
        document.save(tmp_path, "../escape")


def test_atomic_write_replaces_and_leaves_no_temp_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "file.pdf"
    write_atomically(target, b"old")
    write_atomically(target, b"new")
    assert target.read_bytes() == b"new"

    with pytest.raises(TypeError):
        write_atomically(target, "text is not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.pdf"]


def _response(content: bytes, content_type: str) -> httpx.Response:
    return httpx.Response(
        200,
        content=content,
        headers={"content-type": content_type},
        request=httpx.Request("GET", "https://np.test/x"),
    )


def test_delivery_note_as_pdf_bytes(tmp_path: Path) -> None:
    note = document_set_from_response(_response(PDF, "application/pdf"))
    assert note.raw is None
    assert [document.decoded_bytes() for document in note.documents] == [PDF]
    assert note.save(tmp_path, "delivery-note") == [tmp_path / "delivery-note.pdf"]


def test_pdf_bytes_without_content_type_are_recognised() -> None:
    note = document_set_from_response(_response(PDF, ""))
    assert note.documents[0].mime_type == "application/pdf"


def test_delivery_note_as_json_with_partial_notes(tmp_path: Path) -> None:
    body = {
        "document": {"mimeType": "application/pdf", "size": len(PDF), "data": encoded(PDF)},
        "partialDeliveryNotes": [{"document": {"mimeType": "PDF", "size": 3, "data": encoded(b"abc")}}],
    }
    note = document_set_from_response(_response(json.dumps(body).encode(), "application/json"))
    assert [document.decoded_bytes() for document in note.documents] == [PDF, b"abc"]
    assert note.raw is not None and note.raw.body == body
    paths = note.save(tmp_path, "note-7")
    assert [path.name for path in paths] == ["note-7.pdf", "note-7-2.pdf", "note-7.response.json"]
    assert json.loads(paths[2].read_bytes()) == body


def test_raw_response_keeps_and_saves_the_body(tmp_path: Path) -> None:
    raw = RawResponse.from_response(_response(b'{"items": [1, 2]}', "application/json"))
    assert raw.body == {"items": [1, 2]}
    assert raw.save(tmp_path, "black-list").read_bytes() == b'{"items": [1, 2]}'
    text = RawResponse.from_response(_response(b"accepted", "text/plain"))
    assert text.body == "accepted"
    assert text.save(tmp_path, "email").name == "email.txt"
