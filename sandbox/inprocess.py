"""Use the sandbox in-process: an httpx transport that serves the ASGI app without a socket.

A fault that drops the connection surfaces as ``httpx.RemoteProtocolError``, as it would over a network; an
answer a served sandbox would hold until the client gives up (``read_timeout``) as ``httpx.ReadTimeout``,
at once.
"""

from __future__ import annotations

import httpx
from starlette.types import Receive, Scope, Send

from sandbox.app import create_app
from sandbox.config import SandboxConfig
from sandbox.faults import IN_PROCESS_KEY, AnswerTimedOut, ConnectionDropped

SANDBOX_ORIGIN = "http://sandbox.postflows.invalid"


class SandboxTransport(httpx.AsyncBaseTransport):
    """Serves requests from the sandbox app in this process."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.app = create_app(self.config)
        self._asgi = httpx.ASGITransport(app=self._in_process)

    async def _in_process(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app({**scope, IN_PROCESS_KEY: True}, receive, send)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return await self._asgi.handle_async_request(request)
        except ConnectionDropped as exc:
            raise httpx.RemoteProtocolError(str(exc), request=request) from exc
        except AnswerTimedOut as exc:
            raise httpx.ReadTimeout(str(exc), request=request) from exc

    async def aclose(self) -> None:
        await self._asgi.aclose()


def address_service_url(origin: str = SANDBOX_ORIGIN) -> str:
    return f"{origin}/address/REST/v1"


def address_assistant_url(origin: str = SANDBOX_ORIGIN) -> str:
    """The address assistant's own base address (the batch service's app, mounted again)."""
    return f"{origin}/assistant/REST/v1"


def newspaper_url(origin: str = SANDBOX_ORIGIN) -> str:
    return f"{origin}/newspaper"


def token_url(origin: str = SANDBOX_ORIGIN) -> str:
    return f"{origin}/auth/OAuth/token"


def commerce_url(origin: str = SANDBOX_ORIGIN) -> str:
    return f"{origin}/commerce"


def auth_url(origin: str = SANDBOX_ORIGIN) -> str:
    return f"{origin}/auth"
