"""The token source of a signed-in user of the commerce API.

:class:`UserSession` is the :class:`~connectors.oauth.TokenSource` of a signed-in user: access tokens come
from the refresh grant of its :class:`~connectors.commerce.oidc.OidcClient`, and a refresh token the server
rotates is handed to ``on_refresh_token`` so the caller's token store keeps the newest. Nothing here writes
files or logs a token.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import httpx
from pydantic import SecretStr

from connectors.errors import AuthFailed, LoginFailed
from connectors.oauth import AccessToken, ScopeSet, lifetime_of
from core.redaction import register_secret

if TYPE_CHECKING:
    from connectors.commerce.oidc import OidcClient, UserTokens

RefreshTokenSink = Callable[[SecretStr], None]


class UserSession:
    """The token source of a signed-in user: access tokens from the refresh grant, cached until shortly
    before they expire; ``on_refresh_token`` receives each new refresh token the server hands out.

    The first access token may be the one the sign-in returned (``tokens``).
    """

    def __init__(
        self,
        oidc: OidcClient,
        refresh_token: SecretStr,
        *,
        on_refresh_token: RefreshTokenSink | None = None,
        tokens: UserTokens | None = None,
    ) -> None:
        self.oidc = oidc
        self._refresh_token = refresh_token
        register_secret(refresh_token.get_secret_value(), issued=True)
        self._on_refresh_token = on_refresh_token
        self._token: AccessToken | None = tokens.access_token if tokens is not None else None
        self._guard = threading.Lock()
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    def __repr__(self) -> str:
        return f"UserSession({self.oidc!r}, refresh_token='**********')"

    @property
    def api(self) -> str:
        return self.oidc.api_name

    def valid_token(self, scopes: ScopeSet) -> AccessToken | None:
        token = self._token
        if token is None or time.monotonic() >= token.expires_at or not scopes <= token.scopes:
            return None
        return token

    def invalidate(self, token: AccessToken) -> None:
        with self._guard:
            if self._token is token:
                self._token = None

    def token_request(self, scopes: ScopeSet) -> httpx.Request:
        # The refresh grant asks for what the user consented to; a narrower scope is not asked for.
        return self.oidc.refresh_request(self._refresh_token)

    def accept_token_response(self, scopes: ScopeSet, response: httpx.Response) -> AccessToken:
        try:
            payload = self.oidc.read_token_payload(response, "the refresh token")
        except AuthFailed as error:
            if error.status_code == 400:
                raise LoginFailed(
                    "the saved sign-in is no longer accepted (refresh token expired or revoked); "
                    "sign in again with `postflows commerce-login`"
                ) from None
            raise
        refresh = payload.get("refresh_token")
        if isinstance(refresh, str) and refresh and refresh != self._refresh_token.get_secret_value():
            self._refresh_token = SecretStr(refresh)
            if self._on_refresh_token is not None:
                self._on_refresh_token(self._refresh_token)
        granted = frozenset(str(payload.get("scope", "")).split()) or scopes
        token = AccessToken(
            value=SecretStr(payload["access_token"]),
            scopes=granted | scopes,
            expires_at=time.monotonic() + lifetime_of(payload) - self.oidc.leeway,
        )
        with self._guard:
            self._token = token
        return token

    def async_lock(self, scopes: ScopeSet) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._guard:
            return self._locks.setdefault(loop, asyncio.Lock())
