"""Newspaper documents: base64 decoding, size check, extension from mimeType, documents found in answers,
raw bodies kept. Writing them is the tasks' (tests/fileio/test_documents.py)."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from connectors.newspaper.documents import (
    Document,
    DocumentSet,
    RawResponse,
    document_from_body,
    document_set_from_response,
    extension_for,
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


def test_document_decodes_and_checks_size() -> None:
    document = document_from_body({"document": {"mimeType": "PDF", "size": len(PDF), "data": encoded(PDF)}})
    assert document is not None
    assert document.decoded_bytes() == PDF
    assert document.extension == ".pdf"


def test_base64_with_line_breaks_is_accepted() -> None:
    wrapped = base64.encodebytes(PDF * 10).decode()
    assert "\n" in wrapped
    assert Document(mime_type="PDF", size=len(PDF) * 10, data=wrapped).decoded_bytes() == PDF * 10


def test_size_mismatch_is_a_typed_error() -> None:
    document = Document(mime_type="application/pdf", size=len(PDF) + 1, data=encoded(PDF))
    with pytest.raises(DocumentSizeMismatch) as caught:
        document.decoded_bytes()
    assert (caught.value.expected, caught.value.actual) == (len(PDF) + 1, len(PDF))


def test_invalid_base64_is_document_invalid() -> None:
    with pytest.raises(DocumentInvalid):
        Document(mime_type="PDF", size=3, data="not*base64").decoded_bytes()


def test_documents_have_no_way_to_write_themselves() -> None:
    for kind in (Document, DocumentSet, RawResponse):
        assert not hasattr(kind, "save")


def _response(content: bytes, content_type: str) -> httpx.Response:
    return httpx.Response(
        200,
        content=content,
        headers={"content-type": content_type},
        request=httpx.Request("GET", "https://np.test/x"),
    )


def test_delivery_note_as_pdf_bytes() -> None:
    note = document_set_from_response(_response(PDF, "application/pdf"))
    assert note.raw is None
    assert [document.decoded_bytes() for document in note.documents] == [PDF]
    assert [document.extension for document in note.documents] == [".pdf"]


def test_pdf_bytes_without_content_type_are_recognised() -> None:
    note = document_set_from_response(_response(PDF, ""))
    assert note.documents[0].mime_type == "application/pdf"


def test_delivery_note_as_json_with_partial_notes() -> None:
    body = {
        "document": {"mimeType": "application/pdf", "size": len(PDF), "data": encoded(PDF)},
        "partialDeliveryNotes": [{"document": {"mimeType": "PDF", "size": 3, "data": encoded(b"abc")}}],
    }
    note = document_set_from_response(_response(json.dumps(body).encode(), "application/json"))
    assert [document.decoded_bytes() for document in note.documents] == [PDF, b"abc"]
    assert note.raw is not None and note.raw.body == body
    assert json.loads(note.raw.content) == body and note.raw.extension == ".json"


@pytest.mark.parametrize(
    "body",
    [
        ["UEsDBAo=", "JVBERi0xLjQ="],
        {"files": [{"fileName": "az.zip", "content": "UEs="}]},
        {"document": {"mimeType": "PDF", "size": "many", "data": "UEs="}},
    ],
    ids=["list-of-base64", "unknown-shape", "unusable-fields"],
)
def test_answer_without_a_document_shape_keeps_its_raw_body(body: object) -> None:
    content = json.dumps(body).encode()
    answer = document_set_from_response(_response(content, "application/json"))
    assert answer.documents == ()
    assert answer.raw is not None and answer.raw.content == content


def test_raw_response_keeps_the_body() -> None:
    raw = RawResponse.from_response(_response(b'{"items": [1, 2]}', "application/json"))
    assert raw.body == {"items": [1, 2]}
    assert (raw.content, raw.extension) == (b'{"items": [1, 2]}', ".json")
    text = RawResponse.from_response(_response(b"accepted", "text/plain"))
    assert text.body == "accepted"
    assert text.extension == ".txt"
