"""Who may use the sandbox's control endpoints (every route under a ``_sandbox`` path segment: fault plan,
request counts, tokens, revocation, ID-token faults, received uploads).

They change what the sandbox answers everyone, so they are open only when nobody else can reach them: the
sandbox is served in-process or listens on a loopback address. Otherwise a request must carry the configured
control token in :data:`CONTROL_TOKEN_HEADER`; without one, or with a wrong one, it is refused with 403. A
wrong token is refused on loopback too, so a client misconfigured for a remote sandbox learns it at once.
"""

from __future__ import annotations

import ipaddress
import json
import secrets

from pydantic import SecretStr
from starlette.types import ASGIApp, Receive, Scope, Send

CONTROL_SEGMENT = "_sandbox"
CONTROL_TOKEN_HEADER = "X-Sandbox-Control-Token"
TOKEN_SETTING = "POSTFLOWS_SANDBOX_CONTROL_TOKEN"


def is_loopback(host: str | None) -> bool:
    """True for an address only this machine reaches (``127.0.0.0/8``, ``::1``, ``localhost``); None means
    served in-process, without a socket."""
    if host is None or host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


def is_control_path(path: str) -> bool:
    return CONTROL_SEGMENT in path.split("/")


class ControlGuard:
    """ASGI middleware refusing control requests the sandbox's listening address and token do not allow."""

    def __init__(self, app: ASGIApp, *, listen_host: str | None, token: SecretStr | None) -> None:
        self.app = app
        self.listen_host = listen_host
        self.open = is_loopback(listen_host)
        self.token = token if token is not None and token.get_secret_value() else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_control_path(scope["path"]):
            refusal = self.refusal(_header(scope, CONTROL_TOKEN_HEADER))
            if refusal is not None:
                await _forbidden(send, refusal)
                return
        await self.app(scope, receive, send)

    def refusal(self, sent: str | None) -> str | None:
        """Why a control request carrying ``sent`` (None: no token header) is refused, or None."""
        if sent is not None:
            expected = self.token.get_secret_value() if self.token is not None else ""
            if expected and secrets.compare_digest(sent.encode(), expected.encode()):
                return None
            if not expected:
                return (
                    f"{CONTROL_TOKEN_HEADER} was sent but this sandbox has no control token "
                    f"(set {TOKEN_SETTING} where it is started)"
                )
            return f"wrong {CONTROL_TOKEN_HEADER}"
        if self.open:
            return None
        how = (
            f"send the token set by {TOKEN_SETTING} in the {CONTROL_TOKEN_HEADER} header"
            if self.token is not None
            else f"start it with {TOKEN_SETTING} set and send that token in the {CONTROL_TOKEN_HEADER} header"
        )
        return (
            f"the sandbox control endpoints (/{CONTROL_SEGMENT}/...) answer without a token only when the "
            f"sandbox listens on loopback; it listens on {self.listen_host}: {how}"
        )


def _header(scope: Scope, name: str) -> str | None:
    wanted = name.lower().encode("latin-1")
    for key, value in scope.get("headers", []):
        if key.lower() == wanted:
            return bytes(value).decode("latin-1")
    return None


async def _forbidden(send: Send, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 403, "headers": headers})
    await send({"type": "http.response.body", "body": body})
