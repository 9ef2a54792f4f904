"""OAuth 2.0 bearer tokens as an ``httpx.Auth``: one cached token per scope set, renewed shortly before
``expires_in`` and once when the API refuses it (401, or the statuses a client names), from a
:class:`TokenSource`: :class:`ClientCredentials` (the client credentials grant, shared by every client built
on it) or :class:`UserSession` (the refresh grant of a user who signed in with the authorization code flow,
see :mod:`connectors.commerce.oidc`). Each request carries the scopes it asked for
(:func:`requested_scopes`), so an error built from its response can name them.

Token requests are built with authlib. The client secret travels only in the form body of the token
request, never in a URL or header, and never appears in a ``repr`` or an error message; refresh tokens are
``SecretStr`` and handed to the caller's store through a callback when the server rotates them. The client
secret and every token received are registered with the process's secret scrubber
(:mod:`core.redaction`).
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import AsyncGenerator, Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from pydantic import SecretStr

from connectors.bodies import read_body
from connectors.errors import AuthFailed, quote_body
from connectors.jsontext import json_of
from connectors.limits import BODY_LIMIT_EXTENSION, RESPONSE_MAX_BYTES, BodyLimit
from connectors.sending import TOKEN_REQUEST_EXTENSION
from core.redaction import REDACTED, redact, register_secret

Clock = Callable[[], float]
ScopeSet = frozenset[str]

DEFAULT_LEEWAY_S = 30.0
# The answers that renew the token when a client names none: 401 means the token was not accepted.
DEFAULT_RENEW_ON = frozenset({401})
# Where the auth flow records the scopes of a request (``request.extensions``); no token goes there.
SCOPES_EXTENSION = "postflows.oauth_scopes"
# The tokens a token response hands out: each is scrubbed from the process's texts from then on.
ISSUED_TOKEN_FIELDS = ("access_token", "refresh_token", "id_token")


@dataclass(frozen=True)
class AccessToken:
    """A bearer token for one scope set; ``expires_at`` is on the clock of its :class:`ClientCredentials`."""

    value: SecretStr = field(repr=False)
    scopes: ScopeSet
    expires_at: float

    @property
    def authorization(self) -> str:
        return f"Bearer {self.value.get_secret_value()}"


class ClientCredentials:
    """A registered OAuth client and its token cache, shared across auth instances and clients.

    Args:
        token_url: absolute address of the token endpoint.
        client_id: the registered client id.
        client_secret: the registered client secret.
        leeway: seconds before ``expires_in`` runs out at which a cached token is no longer used.
        clock: monotonic seconds; tests pass a fake clock.
        api: the API name carried by errors of the token endpoint.
    """

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: SecretStr,
        *,
        leeway: float = DEFAULT_LEEWAY_S,
        clock: Clock = time.monotonic,
        api: str = "oauth",
    ) -> None:
        self.token_url = token_url
        self.client_id = client_id
        self._client_secret = client_secret
        register_secret(client_secret.get_secret_value())
        self.leeway = leeway
        self.clock = clock
        self.api = api
        self._tokens: dict[ScopeSet, AccessToken] = {}
        # Guards the dicts only (clients may live in several threads' event loops); never held across a yield.
        self._guard = threading.Lock()
        # An asyncio.Lock belongs to one event loop, so locks are kept per loop.
        self._async_locks: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[ScopeSet, asyncio.Lock]
        ] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return (
            f"ClientCredentials(token_url={self.token_url!r}, client_id={self.client_id!r}, "
            "client_secret='**********')"
        )

    def valid_token(self, scopes: ScopeSet) -> AccessToken | None:
        """The cached token for ``scopes`` if it is still usable (outside the leeway), else None."""
        with self._guard:
            token = self._tokens.get(scopes)
        if token is not None and self.clock() < token.expires_at:
            return token
        return None

    def invalidate(self, token: AccessToken) -> None:
        """Forget ``token`` unless a newer one has already replaced it."""
        with self._guard:
            if self._tokens.get(token.scopes) is token:
                del self._tokens[token.scopes]

    def token_request(self, scopes: ScopeSet) -> httpx.Request:
        """The token request for ``scopes``: a form POST; the secret is in the body only."""
        return form_post(
            self.token_url,
            "client_credentials",
            client_id=self.client_id,
            client_secret=self._client_secret.get_secret_value(),
            scope=" ".join(sorted(scopes)),
        )

    def accept_token_response(self, scopes: ScopeSet, response: httpx.Response) -> AccessToken:
        """Parse and cache a token response (its body already read); raise :class:`AuthFailed` on refusal."""
        payload = read_token_response(response, api=self.api, what=_scope_text(scopes), redact=self._redact)
        token = AccessToken(
            value=SecretStr(payload["access_token"]),
            scopes=scopes,
            expires_at=self.clock() + lifetime_of(payload) - self.leeway,
        )
        with self._guard:
            self._tokens[scopes] = token
        return token

    def async_lock(self, scopes: ScopeSet) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._guard:
            per_loop = self._async_locks.setdefault(loop, {})
            return per_loop.setdefault(scopes, asyncio.Lock())

    def _redact(self, text: str) -> str:
        return redact_secret(text, self._client_secret)


def redact_secret(text: str, secret: SecretStr) -> str:
    """``text`` without ``secret`` (however short) and without any registered secret."""
    value = secret.get_secret_value()
    return redact(text.replace(value, REDACTED) if value else text)


class TokenSource(Protocol):
    """Where bearer tokens come from: a cache per scope set and the token request that fills it."""

    @property
    def api(self) -> str:
        """The name errors of its token endpoint carry."""
        ...

    def valid_token(self, scopes: ScopeSet) -> AccessToken | None: ...

    def invalidate(self, token: AccessToken) -> None: ...

    def token_request(self, scopes: ScopeSet) -> httpx.Request: ...

    def accept_token_response(self, scopes: ScopeSet, response: httpx.Response) -> AccessToken: ...

    def async_lock(self, scopes: ScopeSet) -> asyncio.Lock: ...


class OAuth2ClientCredentialsAuth(httpx.Auth):
    """Bearer auth for one scope set, with tokens from a shared :class:`TokenSource` (the client credentials
    of :class:`ClientCredentials`, or a signed-in user's :class:`UserSession`).

    The flow: use the cached token or fetch one (token fetches for one scope set are serialised, so
    concurrent calls cause a single token request), send the request, and on an answer in ``renew_on``
    drop that token and send the request exactly once more with a fresh one. A status belongs in
    ``renew_on`` only when it means the request was refused unprocessed (a POST is sent again too).

    Args:
        credentials: where the tokens come from.
        scopes: the scope set each token is asked for; recorded in the request's extensions.
        renew_on: the HTTP statuses that renew the token (default: 401 only).
    """

    def __init__(
        self, credentials: TokenSource, scopes: Iterable[str], *, renew_on: Iterable[int] = DEFAULT_RENEW_ON
    ) -> None:
        self.credentials = credentials
        self.scopes: ScopeSet = frozenset(scopes)
        if not self.scopes:
            raise ValueError("at least one scope is needed")
        self.renew_on = frozenset(renew_on)

    def __repr__(self) -> str:
        return (
            f"OAuth2ClientCredentialsAuth({self.credentials!r}, scopes={sorted(self.scopes)!r}, "
            f"renew_on={sorted(self.renew_on)!r})"
        )

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Refused: the connectors are asynchronous, and a synchronous client would go out unauthenticated."""
        raise TypeError("OAuth2ClientCredentialsAuth works with httpx.AsyncClient only")
        yield request  # pragma: no cover - makes this a generator, as httpx expects

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """The asynchronous flow; token fetches hold a per-scope-set, per-event-loop asyncio lock.

        The answers it reads itself (a token answer, a refusal before the token is renewed) are read within
        the limit the HTTP core gave ``request`` (:data:`~connectors.limits.BODY_LIMIT_EXTENSION`).
        """
        request.extensions[SCOPES_EXTENSION] = tuple(sorted(self.scopes))
        limit = request.extensions.get(BODY_LIMIT_EXTENSION)
        limit = limit if isinstance(limit, BodyLimit) else BodyLimit(RESPONSE_MAX_BYTES)
        api = self.credentials.api
        for attempt in (1, 2):
            token = self.credentials.valid_token(self.scopes)
            if token is None:
                async with self.credentials.async_lock(self.scopes):
                    token = self.credentials.valid_token(self.scopes)
                    if token is None:
                        token_response = yield self.credentials.token_request(self.scopes)
                        # The API request itself has not left yet.
                        answer = await read_body(token_response, limit, api=api, sent=False)
                        token = self.credentials.accept_token_response(self.scopes, answer)
            request.headers["Authorization"] = token.authorization
            response = yield request
            if response.status_code not in self.renew_on or attempt == 2:
                return
            await read_body(response, limit, api=api, cut=True)  # read within the limit, not by httpx whole
            self.credentials.invalidate(token)


def requested_scopes(request: httpx.Request) -> tuple[str, ...]:
    """The scopes the bearer auth asked a token for when it sent ``request``; empty when it did not."""
    scopes = request.extensions.get(SCOPES_EXTENSION, ())
    return tuple(scope for scope in scopes if isinstance(scope, str))


def _scope_text(scopes: ScopeSet) -> str:
    return "scope " + " ".join(sorted(scopes))


def form_post(url: str, grant_type: str, **fields: str) -> httpx.Request:
    """A token request: ``grant_type`` and ``fields`` as an ``application/x-www-form-urlencoded`` body."""
    # authlib loads with the first token request: a run refused before it calls its API never needs it.
    from authlib.oauth2.rfc6749.parameters import prepare_token_request

    body = prepare_token_request(grant_type, **fields)
    return httpx.Request(
        "POST",
        url,
        content=body.encode("utf-8"),
        headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
        extensions={TOKEN_REQUEST_EXTENSION: True},
    )


def read_token_response(
    response: httpx.Response, *, api: str, what: str, redact: Callable[[str], str]
) -> dict[str, Any]:
    """The JSON of a successful token response (§2.12) with a Bearer ``access_token``; :class:`AuthFailed`
    naming ``what`` otherwise. ``redact`` removes the client secret from anything quoted."""
    status = response.status_code
    if status != 200:
        raise AuthFailed(
            redact(f"{api}: token request for {what} refused: HTTP {status}") + _detail(response, redact),
            api=api,
            status_code=status,
            # The API request itself was never sent, so a busy token endpoint may be asked again.
            retryable=status == 429 or status >= 500,
            sent=False,
        )
    try:
        payload = json_of(response, api=api)
    except ValueError:  # not JSON, or nested too deep to read
        payload = None
    if isinstance(payload, dict):
        for name in ISSUED_TOKEN_FIELDS:
            if isinstance(payload.get(name), str):
                register_secret(payload[name], issued=True)
    if not isinstance(payload, dict) or not isinstance(payload.get("access_token"), str):
        raise AuthFailed(
            f"{api}: token response for {what} carries no access_token",
            api=api,
            status_code=status,
            sent=False,
        )
    token_type = payload.get("token_type", "Bearer")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise AuthFailed(
            f"{api}: token type {token_type!r} is not Bearer", api=api, status_code=status, sent=False
        )
    return payload


def lifetime_of(payload: dict[str, Any]) -> float:
    """``expires_in`` of a token response in seconds; 0 (use once, do not cache) when absent."""
    expires_in = payload.get("expires_in")
    if isinstance(expires_in, str) and expires_in.isdigit():
        return float(expires_in)
    return float(expires_in) if isinstance(expires_in, int | float) else 0.0


def _detail(response: httpx.Response, redact: Callable[[str], str], limit: int = 200) -> str:
    try:
        text = response.text
    except (httpx.ResponseNotRead, UnicodeDecodeError):
        return ""
    text = quote_body(redact(text), limit)
    return f": {text}" if text else ""
