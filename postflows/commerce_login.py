"""Signing a user in to the commerce API (authorization code flow) from the command line.

The authorization URL is printed (and opened in a browser on request); a one-shot HTTP listener on the
loopback redirect URI receives the browser's redirect, the ``state`` is checked, the code exchanged and the ID
token checked (:class:`~connectors.commerce.oidc.OidcClient`), and the refresh token goes to the token store,
never to the terminal. A redirect URI that is not a loopback ``http`` address cannot be listened on: the user
then pastes the address the browser was sent to (``--redirect``).

The embedded sandbox has no address a browser could open, so against it this command plays the browser
itself: it follows the authorization URL through the in-process sandbox (which consents automatically) and
delivers the redirect to the listener over the loopback network, as a browser would.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import webbrowser
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx

from connectors.commerce.oidc import AuthorizationRequest, OidcClient, UserTokens
from connectors.errors import LoginFailed
from tasks.commerce.token_store import SavedLogin, TokenStore, now_text

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
MAX_REQUEST_BYTES = 16 * 1024

Browser = Callable[[str], Awaitable[None]]
Say = Callable[[str], None]

_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>postflows</title></head>"
    "<body><p>{text}</p><p>You can close this window.</p></body></html>"
)


@dataclass(frozen=True)
class LoginResult:
    subject: str | None
    username: str | None
    scopes: tuple[str, ...]
    where: str


def is_loopback(redirect_uri: str) -> bool:
    """True for an ``http`` redirect URI on this machine, which a listener here can receive."""
    parts = urlsplit(redirect_uri)
    host = (parts.hostname or "").lower()
    if parts.scheme != "http" or not host:
        return False
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class RedirectListener:
    """Receives one redirect on the loopback address and path of the redirect URI.

    Port 0 in the redirect URI takes a free port (a loopback redirect URI matches on any port, RFC 8252
    §7.3); :attr:`redirect_uri` is the address actually listened on.
    """

    def __init__(self, redirect_uri: str) -> None:
        self._parts = urlsplit(redirect_uri)
        self.path = self._parts.path or "/"
        self.redirect_uri = redirect_uri
        self._received: asyncio.Future[str] | None = None
        self._server: asyncio.Server | None = None

    @contextlib.asynccontextmanager
    async def listening(self) -> AsyncIterator[RedirectListener]:
        loop = asyncio.get_running_loop()
        self._received = loop.create_future()
        host = self._parts.hostname or "127.0.0.1"
        bind = "127.0.0.1" if host == "localhost" else host
        try:
            port = self._parts.port if self._parts.port is not None else 0
            self._server = await asyncio.start_server(self._serve, bind, port)
        except OSError as error:
            raise LoginFailed(
                f"cannot listen on {host}:{self._parts.port} for the redirect ({error.strerror}); "
                "choose another port in POSTFLOWS_COMMERCE_REDIRECT_URI (one the client is registered for)"
            ) from None
        port = int(self._server.sockets[0].getsockname()[1])
        netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self.redirect_uri = urlunsplit(("http", netloc, self.path, "", ""))
        try:
            yield self
        finally:
            self._server.close()
            await self._server.wait_closed()

    async def redirect(self, timeout: float) -> str:
        """The full redirect URL the browser was sent to, once it arrives."""
        assert self._received is not None, "use within listening()"
        try:
            return await asyncio.wait_for(asyncio.shield(self._received), timeout)
        except TimeoutError:
            raise LoginFailed(
                f"no redirect arrived within {timeout:.0f} s; run the command again to sign in"
            ) from None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            writer.close()
            return
        request_line = head[:MAX_REQUEST_BYTES].split(b"\r\n", 1)[0].decode("latin-1")
        method, _, rest = request_line.partition(" ")
        target = rest.rsplit(" ", 1)[0]
        path = urlsplit(target).path
        done = self._received is not None and self._received.done()
        if method != "GET" or path != self.path or done:
            await _respond(writer, 404, "Not the sign-in redirect.")
            return
        assert self._received is not None
        self._received.set_result(f"{self.redirect_uri}?{urlsplit(target).query}")
        await _respond(writer, 200, "Sign-in received; postflows finishes it in the terminal.")


async def _respond(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = _PAGE.format(text=text).encode("utf-8")
    reason = "OK" if status == 200 else "Not Found"
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()


def sandbox_browser(transport: httpx.AsyncBaseTransport) -> Browser:
    """A browser for the in-process sandbox: opens the authorization URL there, follows its redirect to the
    loopback listener over the network."""

    async def visit(url: str) -> None:
        async with httpx.AsyncClient(transport=transport) as sandbox:
            answer = await sandbox.get(url)
        location = answer.headers.get("location")
        if answer.status_code not in (301, 302, 303, 307) or not location:
            raise LoginFailed(
                f"the sandbox answered the authorization request with HTTP {answer.status_code}"
            )
        async with httpx.AsyncClient(timeout=10) as browser:
            await browser.get(location)

    return visit


def system_browser(url: str) -> Awaitable[None]:
    async def open_it() -> None:
        await asyncio.to_thread(webbrowser.open, url)

    return open_it()


@dataclass(frozen=True)
class SignInRequest:
    """What a sign-in asks the authorization server for.

    Attributes:
        redirect_uri: the registered redirect URI.
        scopes: the scopes the user consents to.
        login_hint: suggests the account to the authorization server.
        timeout: seconds to wait for the redirect.
    """

    redirect_uri: str
    scopes: tuple[str, ...]
    login_hint: str | None = None
    timeout: float = 300.0


@dataclass(frozen=True)
class SignInDialogue:
    """How the command and the user talk during a sign-in.

    Attributes:
        say: prints a line for the user (never a token).
        browser: opens the authorization URL (None: the user opens the printed address).
        pasted_redirect: asks the user for the address the browser was redirected to, for a redirect URI
            this machine cannot listen on.
    """

    say: Say
    browser: Browser | None = None
    pasted_redirect: Callable[[], Awaitable[str]] | None = None


async def sign_in(
    oidc: OidcClient, store: TokenStore, request: SignInRequest, dialogue: SignInDialogue
) -> LoginResult:
    """Sign a user in and keep the refresh token in ``store``.

    Args:
        oidc: the authorization server.
        store: where the refresh token goes.
        request: the redirect URI, scopes, account hint and patience of this sign-in.
        dialogue: how the user is told the address and gives back the redirect.
    """
    if is_loopback(request.redirect_uri):
        listener = RedirectListener(request.redirect_uri)
        async with listener.listening():
            begun = oidc.begin(listener.redirect_uri, request.scopes, login_hint=request.login_hint)
            await _show(begun, dialogue)
            redirect = await listener.redirect(request.timeout)
            tokens = await oidc.finish(begun, redirect)
    else:
        if dialogue.pasted_redirect is None:
            raise LoginFailed(
                f"the redirect URI {request.redirect_uri} is not a loopback address this command can listen "
                "on; pass the address your browser was sent to with --redirect"
            )
        begun = oidc.begin(request.redirect_uri, request.scopes, login_hint=request.login_hint)
        await _show(begun, dialogue)
        tokens = await oidc.finish(begun, await dialogue.pasted_redirect())
    return _keep(tokens, store)


async def _show(request: AuthorizationRequest, dialogue: SignInDialogue) -> None:
    dialogue.say("Open this address to sign in (it is valid for this sign-in only):")
    dialogue.say(request.url)
    if dialogue.browser is not None:
        await dialogue.browser(request.url)


def _keep(tokens: UserTokens, store: TokenStore) -> LoginResult:
    if tokens.refresh_token is None:
        raise LoginFailed(
            "the authorization server issued no refresh token, so the sign-in cannot be kept for later runs"
        )
    subject = tokens.id_claims.get("sub")
    store.save(SavedLogin(tokens.refresh_token, subject, tuple(sorted(tokens.scopes)), now_text()))
    username = tokens.id_claims.get("preferred_username") or tokens.id_claims.get("email")
    return LoginResult(subject, username, tuple(sorted(tokens.scopes)), store.where)
