"""Which token each request of the commerce API carries: a client-credentials token of the operation's scope,
or the signed-in user's token for the personal endpoints. A 401 or 403 drops the token and sends the request
once more with a new one.
"""

from __future__ import annotations

import httpx

from connectors.errors import LoginRequired
from connectors.oauth import ClientCredentials, OAuth2ClientCredentialsAuth, TokenSource

# The answers that drop the token and send the request once more with a new one.
RENEW_ON = frozenset({401, 403})


class ScopedTokens:
    """The auth of each scope of one client, built once per scope and kept.

    Args:
        credentials: the registered client (its token cache may be shared with other clients).
        user: the signed-in user's token source; None: personal endpoints refuse with ``LoginRequired``.
        personal_scope: the scope of the personal endpoints.
    """

    def __init__(self, credentials: ClientCredentials, user: TokenSource | None, personal_scope: str) -> None:
        self._credentials = credentials
        self._user = user
        self._personal_scope = personal_scope
        self._auth_by_scope: dict[str, httpx.Auth] = {}

    def scoped(self, scope: str) -> httpx.Auth:
        """The client-credentials auth of ``scope``."""
        auth = self._auth_by_scope.get(scope)
        if auth is None:
            auth = self._auth_by_scope[scope] = OAuth2ClientCredentialsAuth(
                self._credentials, [scope], renew_on=RENEW_ON
            )
        return auth

    def user(self) -> httpx.Auth:
        """The signed-in user's auth of the personal scope.

        Raises:
            LoginRequired: no user is signed in.
        """
        if self._user is None:
            raise LoginRequired(
                "personal addresses need a signed-in user: run `postflows commerce-login` first"
            )
        key = f"user:{self._personal_scope}"
        auth = self._auth_by_scope.get(key)
        if auth is None:
            auth = self._auth_by_scope[key] = OAuth2ClientCredentialsAuth(
                self._user, [self._personal_scope], renew_on=RENEW_ON
            )
        return auth
