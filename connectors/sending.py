"""Whether a request has started to leave: the proof that a submission which failed was never sent.

A submission watches its sending (:func:`watch_sending`); every client of :class:`~connectors.http.ApiClient`
reports each request it hands to its transport (:func:`note_request`, an httpx ``request`` event hook), except
the token requests of the auth flow (marked with :data:`TOKEN_REQUEST_EXTENSION`), which carry nothing of the
submission. A failure of any kind (a refused token, a body our own code refuses, a cancellation) that ends
the submission while its watch has seen no request proves that no byte of it left; one after a request was
handed over proves nothing. A transport failure's own proof is its type and the request it belongs to
(:func:`transport_failure`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import httpx

from connectors.errors import TransportFailure

TOKEN_REQUEST_EXTENSION = "postflows.token_request"
"""Set on a token request of the auth flow: handing it over does not start the request it authorizes."""


@dataclass
class SendWatch:
    """``started``: a request of the watched work has been handed to a transport (it may have left)."""

    started: bool = False


_WATCH: ContextVar[SendWatch | None] = ContextVar("postflows_send_watch", default=None)


@contextmanager
def watch_sending() -> Iterator[SendWatch]:
    """Watch the requests handed to a transport by this task (and the tasks it starts) inside the block."""
    watch = SendWatch()
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        _WATCH.reset(token)


async def note_request(request: httpx.Request) -> None:
    """The httpx ``request`` event hook: called just before ``request`` goes to the transport."""
    watch = _WATCH.get()
    if watch is not None and not request.extensions.get(TOKEN_REQUEST_EXTENSION):
        watch.started = True


def install(client: httpx.AsyncClient) -> None:
    """Report the requests of ``client`` to the running watch (once, however often it is installed)."""
    hooks = client.event_hooks
    if note_request not in hooks["request"]:
        hooks["request"] = [*hooks["request"], note_request]
        client.event_hooks = hooks


# Failures raised before any byte of the request was written: the service cannot have seen it.
_NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def transport_failure(exc: httpx.TransportError, api: str, *, request: httpx.Request) -> TransportFailure:
    """The typed error for a transport failure of ``request``, deciding whether it was sent.

    It was not sent when the failure type proves that no byte left, or when the failure belongs to another
    request of the auth flow (a token request) that had to succeed before ``request`` could go out.
    """
    failed = _failed_request(exc)
    sent = not isinstance(exc, _NEVER_SENT) and (failed is None or failed is request)
    detail = str(exc) or "connection failed"
    return TransportFailure(f"{api}: {type(exc).__name__}: {detail}", api=api, sent=sent)


def _failed_request(exc: httpx.TransportError) -> httpx.Request | None:
    try:
        return exc.request
    except RuntimeError:  # the exception was raised without a request attached
        return None
