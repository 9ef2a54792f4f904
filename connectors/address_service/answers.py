"""Reading the address web service's answers: every answer's ``Status`` (top level or inside its single
``...Result`` wrapper) raised as its typed error, the wrapped result, and a JSON answer that stands in for a
downloaded file. An answer of an unexpected shape is a :class:`~connectors.errors.MalformedResponse`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from connectors.address_service.errors import API, status_error
from connectors.errors import MalformedResponse
from connectors.jsontext import json_of, parse_json

_STATUS_BODY_LIMIT = 1 << 16  # a Status answer is a few bytes; more is not one, and is not read to the end


def status_of(payload: Any) -> int | None:
    """The ``Status`` of a response: top level, or inside the single ``...Result`` wrapper."""
    if not isinstance(payload, dict):
        return None
    if "Status" in payload:
        return _status_number(payload["Status"])
    for value in payload.values():
        if isinstance(value, dict) and "Status" in value:
            return _status_number(value["Status"])
    return None


def _status_number(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise MalformedResponse(
            f"{API}: the answer's Status {str(value)[:40]!r} is not a number", api=API
        ) from None


def result_of(payload: dict[str, Any], wrapper: str, *also: str) -> dict[str, Any]:
    """The object under ``wrapper`` (or the first of ``also`` the answer has instead)."""
    for name in (wrapper, *also):
        inner = payload.get(name)
        if isinstance(inner, dict):
            return inner
    raise MalformedResponse(f"{API}: response has no {wrapper}", api=API)


def _payload(response: httpx.Response, operation: str) -> Any:
    """The decoded JSON answer to ``operation``; anything else is malformed."""
    try:
        return json_of(response, api=API)
    except ValueError:
        raise MalformedResponse(
            f"{API}: {operation} answered with something that is not JSON", api=API
        ) from None


@contextmanager
def reading(operation: str) -> Iterator[None]:
    """Turn a missing or mistyped field of an answer into :class:`MalformedResponse`."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise MalformedResponse(
            f"{API}: {operation} answered in an unexpected shape ({type(error).__name__}: {error})"[:300],
            api=API,
        ) from None


class JsonAnswer:
    """The check of an answer that must be a JSON object with a zero (or no) ``Status``; keeps the object
    it parsed, so an answer is decoded once."""

    def __init__(self, operation: str) -> None:
        self.operation = operation
        self.payload: dict[str, Any] = {}

    def check(self, response: httpx.Response) -> None:
        payload = _payload(response, self.operation)
        if not isinstance(payload, dict):
            message = f"{API}: {self.operation} returned {type(payload).__name__}, not an object"
            raise MalformedResponse(message, api=API)
        raise_for_status(payload, self.operation)
        self.payload = payload


def raise_for_status(payload: Any, operation: str) -> None:
    """Raise the typed error of the answer's ``Status`` when it is not 0 (an unreadable one is malformed)."""
    try:
        status = status_of(payload)
    except (TypeError, ValueError):
        raise MalformedResponse(f"{API}: {operation} answered with an unreadable Status", api=API) from None
    if status:
        raise status_error(status, operation=operation)


def ping_check(response: httpx.Response) -> None:
    """The check of a ping's HTTP 200, an answer whatever its body: §4.1 shows nothing beyond the status line
    (empty, text, JSON without a Status, JSON that does not parse). Only a body that reads as JSON with a
    Status, whatever its content type, says more: a Status other than 0 is the service's refusal, raised as
    its typed error (a Status that is no number, as :class:`MalformedResponse`)."""
    try:
        payload = parse_json(response.content, api=API)
    except ValueError:  # empty, text, or nested too deep to read: the HTTP 200 is the answer
        return
    raise_for_status(payload, "ping")


async def status_body(response: httpx.Response) -> bytes:
    """The start of a JSON body that stands in for the file, read no further than a Status answer needs."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > _STATUS_BODY_LIMIT:
            break
    return bytes(body)


def json_or_none(body: bytes) -> Any:
    """``body`` decoded as JSON; None when it is not JSON, or nests too deep to read."""
    try:
        return parse_json(body, api=API)
    except ValueError:  # not JSON, or nested too deep to read
        return None
