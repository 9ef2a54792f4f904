"""Reading answers within limits: a body read in chunks no further than its byte limit, and a streamed body
held to its attempt's deadline with failures typed. JSON nesting is measured in :mod:`connectors.jsontext`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing

import httpx

from connectors.errors import ApiError, ResponseTooLarge
from connectors.limits import BodyLimit


async def read_body(
    response: httpx.Response, limit: BodyLimit, *, api: str, cut: bool = False, sent: bool = True
) -> httpx.Response:
    """Read the body of a streamed ``response`` in chunks, never more than ``limit`` of it; return the
    answer holding what was read (``.content``, ``.text`` and ``.json()`` read it).

    ``response`` itself then holds that body, decoded (it loses its Content-Encoding header), as whoever
    kept it sees it (an event hook; httpx reads every answer an auth flow was given); one that was read
    already (an answer made in memory) keeps its body, and a new answer holds the part of it read. A
    ``Content-Length`` over the limit is refused before anything is read. ``cut``: keep the first
    ``limit.max_bytes`` of a longer body instead of refusing it (an error answer, read to be quoted).
    ``sent``: False for an answer read before the request it serves left (a token answer); the refusal
    says so.

    Raises:
        ResponseTooLarge: the body is longer than the limit (not with ``cut``).
    """
    declared = response.headers.get("content-length", "")
    if not cut and declared.isdigit() and int(declared) > limit.max_bytes:
        raise _too_large(response, limit, api, sent)
    held = _held_body(response)
    body = bytearray()
    async with aclosing(_decoded_chunks(response, held)) as chunks:
        async for chunk in chunks:
            body += chunk
            if len(body) > limit.max_bytes:
                if not cut:
                    raise _too_large(response, limit, api, sent)
                del body[limit.max_bytes :]
                break
    content = bytes(body)
    if held is not None:
        return response if content == held else with_body(response, content)
    response.headers.pop("content-encoding", None)
    response.stream = httpx.ByteStream(content)
    await response.aread()  # the response reads its body from the bytes read here
    return response


def _held_body(response: httpx.Response) -> bytes | None:
    """The body ``response`` holds when it was read already, else None."""
    try:
        return response.content
    except httpx.ResponseNotRead:
        return None


async def _decoded_chunks(response: httpx.Response, held: bytes | None) -> AsyncGenerator[bytes, None]:
    """The body of ``response`` decoded as its Content-Encoding says: ``held``, else its stream, read
    through a response of its own so that ``response`` is not iterated; that stream is closed and
    swapped for an empty one when this ends."""
    if held is not None:
        yield held
        return
    reader = httpx.Response(
        response.status_code, headers=response.headers, stream=response.stream, request=response.request
    )
    try:
        async for chunk in reader.aiter_bytes():
            yield chunk
    finally:
        await reader.aclose()
        response.stream = httpx.ByteStream(b"")


def with_body(response: httpx.Response, content: bytes) -> httpx.Response:
    """A read answer with the status, headers, request and extensions of ``response`` and the (decoded)
    body ``content``; it has no Content-Encoding, and its Content-Length is that of ``content``."""
    headers = [
        (name, value)
        for name, value in response.headers.multi_items()
        if name.lower() not in {"content-encoding", "content-length"}
    ]
    return httpx.Response(
        response.status_code,
        headers=headers,
        content=content,
        request=response.request,
        extensions=response.extensions,
        history=response.history,
        default_encoding=response.default_encoding,
    )


def _too_large(response: httpx.Response, limit: BodyLimit, api: str, sent: bool) -> ResponseTooLarge:
    request = response.request
    return ResponseTooLarge(
        f"{api}: the answer to {request.method} {request.url.path} is larger than {limit.describe()}; "
        "it was not read further",
        api=api,
        max_bytes=limit.max_bytes,
        sent=sent,
    )


class GuardedBody(httpx.AsyncByteStream):
    """A response's byte stream as the core hands it on: each chunk must come before the attempt's
    ``deadline`` (event loop time), and a failure while the body streams (a dropped connection, a read
    timeout, the deadline) is raised as the typed error ``failed`` makes of it, so whoever reads the body
    gets the error the retry layers decide by."""

    def __init__(
        self,
        inner: httpx.AsyncByteStream,
        *,
        deadline: float,
        failed: Callable[[httpx.TransportError | TimeoutError], ApiError],
    ) -> None:
        self._inner = inner
        self._deadline = deadline
        self._failed = failed

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = aiter(self._inner)
        while True:
            timer = asyncio.timeout_at(self._deadline)
            try:
                async with timer:
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                return
            except httpx.TransportError as exc:
                raise self._failed(exc) from exc
            except TimeoutError as exc:
                if not timer.expired():
                    raise
                raise self._failed(exc) from exc
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()
