"""Documents of the newspaper API (§2.7 document shape, delivery notes, structure files) and raw responses
whose shape the spec does not show: found in a body, decoded and checked against ``size``; never written here.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from connectors.jsontext import parse_json
from connectors.newspaper.errors import API, DocumentInvalid, DocumentSizeMismatch

_EXTENSIONS = {
    "application/pdf": ".pdf",
    "pdf": ".pdf",
    "application/zip": ".zip",
    "application/x-zip-compressed": ".zip",
    "text/csv": ".csv",
    "text/plain": ".txt",
    "application/json": ".json",
    "application/vnd.ms-excel": ".xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
    "application/octet-stream": ".bin",
}


def extension_for(mime_type: str | None) -> str:
    """File extension for a ``mimeType``: a media type (``application/pdf``) or a bare name (``PDF``)."""
    kind = (mime_type or "").split(";", 1)[0].strip().lower()
    if kind in _EXTENSIONS:
        return _EXTENSIONS[kind]
    if "/" in kind:
        return mimetypes.guess_extension(kind) or ".bin"
    if kind.isalnum():
        return f".{kind}"
    return ".bin"


class Document(BaseModel):
    """The document shape ``{mimeType, size, data}``; ``data`` is base64."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    mime_type: str | None = None
    size: int | None = None
    data: str = Field(repr=False)

    @classmethod
    def from_bytes(cls, content: bytes, mime_type: str | None) -> Document:
        """A document received as raw bytes (a delivery note served as PDF)."""
        return cls(mime_type=mime_type, size=len(content), data=base64.b64encode(content).decode("ascii"))

    @property
    def extension(self) -> str:
        return extension_for(self.mime_type)

    def decoded_bytes(self) -> bytes:
        """The document content; raises :class:`DocumentSizeMismatch` when it is not ``size`` bytes long."""
        try:
            content = base64.b64decode("".join(self.data.split()), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise DocumentInvalid(f"document data is not valid base64: {exc}") from exc
        if self.size is not None and len(content) != self.size:
            raise DocumentSizeMismatch(self.size, len(content))
        return content


@dataclass(frozen=True)
class RawResponse:
    """A response body the spec does not show, kept as received: ``body`` is the parsed JSON (or text)."""

    body: Any
    content: bytes = field(repr=False)
    content_type: str = ""

    @classmethod
    def from_response(cls, response: httpx.Response) -> RawResponse:
        content_type = response.headers.get("content-type", "")
        try:
            body: Any = parse_json(response.content, api=API)
        except ValueError:
            body = _text_or_none(response.content)
        return cls(body=body, content=response.content, content_type=content_type)

    @property
    def is_json(self) -> bool:
        try:
            parse_json(self.content, api=API)
        except ValueError:
            return False
        return True

    @property
    def extension(self) -> str:
        """``.json`` for a JSON body, else the extension of its content type."""
        return ".json" if self.is_json else extension_for(self.content_type)


@dataclass(frozen=True)
class DocumentSet:
    """Documents of one response (delivery note, structure files) plus the raw body when it was JSON.

    A JSON body in which no document shape was found (a list of bare base64 strings, a shape the spec does
    not show) has no documents and only ``raw``.
    """

    documents: tuple[Document, ...]
    raw: RawResponse | None = None


def document_from_body(body: Any) -> Document | None:
    """The document of a ``{document: {...}}`` body, or of a body that is the document itself; None when
    the body has no usable document shape (the caller keeps it raw)."""
    if isinstance(body, dict) and isinstance(body.get("document"), dict):
        body = body["document"]
    if isinstance(body, dict) and isinstance(body.get("data"), str):
        return _document_or_none(body)
    return None


def find_documents(body: Any) -> list[Document]:
    """Every document shape anywhere in a JSON body (a gratis delivery note carries partial notes too).

    A shape whose fields do not fit (``size`` not a number) is passed over: the raw body keeps it.
    """
    found = (_document_or_none(item) for item in _document_dicts(body))
    return [document for document in found if document is not None]


def document_set_from_response(response: httpx.Response) -> DocumentSet:
    """A response that is either the document bytes themselves (PDF, ZIP) or JSON with document shapes."""
    content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    raw = RawResponse.from_response(response)
    if content_type == "application/json" or (raw.is_json and not response.content.startswith(b"%PDF")):
        return DocumentSet(documents=tuple(find_documents(raw.body)), raw=raw)
    mime = content_type or ("application/pdf" if response.content.startswith(b"%PDF") else None)
    return DocumentSet(documents=(Document.from_bytes(response.content, mime),))


def _document_dicts(body: Any) -> Iterator[dict[str, Any]]:
    if isinstance(body, dict):
        if isinstance(body.get("data"), str) and ("mimeType" in body or "size" in body):
            yield body
            return
        for value in body.values():
            yield from _document_dicts(value)
    elif isinstance(body, list):
        for item in body:
            yield from _document_dicts(item)


def _document_or_none(shape: dict[str, Any]) -> Document | None:
    try:
        return Document.model_validate(shape)
    except ValidationError:
        return None


def _text_or_none(content: bytes) -> str | None:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return None
