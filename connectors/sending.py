"""Whether a request has started to leave: the proof that a submission which failed was never sent.

A submission watches its sending (:func:`watch_sending`); every client of :class:`~connectors.http.ApiClient`
reports each request it hands to its transport (:func:`note_request`, an httpx ``request`` event hook), except
the token requests of the auth flow (marked with :data:`TOKEN_REQUEST_EXTENSION`), which carry nothing of the
submission. A failure of any kind (a refused token, a body our own code refuses, a cancellation) that ends
the submission while its watch has seen no request proves that no byte of it left; one after a request was
handed over proves nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import httpx

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
