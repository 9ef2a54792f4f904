"""Reading answers within limits: a body read in chunks no further than its byte limit, and a streamed body
held to its attempt's deadline with failures typed. JSON nesting is measured in :mod:`connectors.jsontext`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import httpx

from connectors.errors import ApiError, ResponseTooLarge
from connectors.limits import BodyLimit


async def read_body(
    response: httpx.Response, limit: BodyLimit, *, api: str, cut: bool = False, sent: bool = True
) -> bytes:
    """Read the body of a streamed ``response`` in chunks, never more than ``limit`` of it; the response
    keeps what was read (``response.content``, ``response.json()``).

    A ``Content-Length`` over the limit is refused before anything is read. ``cut``: keep the first
    ``limit.max_bytes`` of a longer body instead of refusing it (an error answer, read to be quoted).
    ``sent``: False for an answer read before the request it serves left (a token answer); the refusal
    says so.

    Raises:
        ResponseTooLarge: the body is longer than the limit (not with ``cut``).
    """
    declared = response.headers.get("content-length", "")
    if not cut and declared.isdigit() and int(declared) > limit.max_bytes:
        raise _too_large(response, limit, api, sent)
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit.max_bytes:
            if not cut:
                raise _too_large(response, limit, api, sent)
            del body[limit.max_bytes :]
            break
    content = bytes(body)
    # What Response.aread() keeps: .content, .text and .json() read it from here.
    response._content = content
    return content


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
