"""Sandbox OAuth 2.0 / OpenID Connect authorization server and the bearer check the protected APIs share.

The token endpoint grants client credentials here, and the authorization code and refresh grants of
:mod:`sandbox.user_grants`; ID tokens, discovery and the JWKS come from :mod:`sandbox.oidc`; userinfo is
served here. Access tokens are opaque random strings kept in a :class:`TokenRegistry` that lives on the
``SandboxConfig``, so every app built from one config recognises the same tokens; codes, refresh tokens and
the signing key live in the sandbox state. ``/_sandbox/tokens`` and ``/_sandbox/revoke`` let tests read the
token-request counts and invalidate every access token (to drive a client's renew-on-401 path);
``/_sandbox/revoke-refresh-tokens`` invalidates every refresh token and ``/_sandbox/id-token-fault`` reads
and sets ``config.commerce_id_token_fault``.
"""

from __future__ import annotations

import secrets
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from sandbox import oidc, user_grants
from sandbox.oidc import OPENID_SCOPE, TOKEN_PATH, USERINFO_PATH, IdTokenFault
from sandbox.state import SandboxState
from sandbox.user_grants import OAuthError, UserGrants

if TYPE_CHECKING:
    from sandbox.config import OAuthClient, SandboxConfig

_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


@dataclass(frozen=True)
class IssuedToken:
    """One access token as the server remembers it."""

    access_token: str
    client_id: str
    scopes: frozenset[str]
    expires_at: float
    # The end user who consented (authorization code and refresh grants); None for client credentials.
    subject: str | None = None


class TokenRegistry:
    """Tokens issued by the sandbox and how often each client asked for one; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, IssuedToken] = {}
        self._requests: Counter[str] = Counter()
        self._issued: Counter[str] = Counter()

    def count_request(self, client_id: str) -> None:
        """Note one token request naming ``client_id`` (granted or not)."""
        with self._lock:
            self._requests[client_id] += 1

    def issue(
        self,
        client_id: str,
        scopes: frozenset[str],
        lifetime_s: float,
        now: float,
        *,
        subject: str | None = None,
    ) -> IssuedToken:
        """Create and remember a new token for ``client_id`` valid for ``lifetime_s`` seconds from ``now``;
        ``subject`` names the end user for a token of personal scopes."""
        token = IssuedToken(secrets.token_urlsafe(32), client_id, scopes, now + lifetime_s, subject)
        with self._lock:
            self._tokens[token.access_token] = token
            self._issued[client_id] += 1
        return token

    def lookup(self, access_token: str, now: float) -> IssuedToken | None:
        """The token if it is known and not yet expired at ``now``."""
        with self._lock:
            token = self._tokens.get(access_token)
        if token is None or now >= token.expires_at:
            return None
        return token

    def expire_all(self, now: float) -> int:
        """Let every token issued so far expire at ``now``; returns how many there were."""
        with self._lock:
            self._tokens = {
                value: replace(token, expires_at=min(token.expires_at, now))
                for value, token in self._tokens.items()
            }
            return len(self._tokens)

    def revoke_all(self) -> int:
        """Forget every issued token; returns how many there were."""
        with self._lock:
            count = len(self._tokens)
            self._tokens.clear()
        return count

    def requests(self, client_id: str) -> int:
        """How many token requests named ``client_id``."""
        with self._lock:
            return self._requests[client_id]

    def issued(self, client_id: str) -> int:
        """How many tokens were granted to ``client_id``."""
        with self._lock:
            return self._issued[client_id]

    def snapshot(self) -> dict[str, object]:
        """Counts for the admin endpoint."""
        with self._lock:
            return {
                "requests": dict(self._requests),
                "issued": dict(self._issued),
                "active": len(self._tokens),
            }


class BearerRefused(Exception):
    """A protected endpoint refuses the request: 401 without a valid token, 403 without the scope."""

    def __init__(self, status_code: int, error: str, description: str, scope: str | None = None) -> None:
        super().__init__(description)
        self.status_code = status_code
        self.error = error
        self.description = description
        self.scope = scope


def bearer_refused_response(exc: BearerRefused) -> JSONResponse:
    """RFC 6750 answer: JSON error body plus a ``WWW-Authenticate: Bearer`` challenge."""
    challenge = f'Bearer error="{exc.error}", error_description="{exc.description}"'
    if exc.scope:
        challenge += f', scope="{exc.scope}"'
    return JSONResponse(
        {"error": exc.error, "error_description": exc.description},
        status_code=exc.status_code,
        headers={"WWW-Authenticate": challenge},
    )


def install_bearer_errors(app: FastAPI) -> None:
    """Make ``app`` answer :class:`BearerRefused` with the RFC 6750 response."""

    async def handle(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, BearerRefused)
        return bearer_refused_response(exc)

    app.add_exception_handler(BearerRefused, handle)


def require_scope(
    config: SandboxConfig, *scopes: str, user: bool = False
) -> Callable[[Request], IssuedToken]:
    """A FastAPI dependency admitting only requests whose bearer token is valid and carries one of
    ``scopes``; with ``user`` the token must also have been issued to an end user (personal data)."""
    if not scopes:
        raise ValueError("name at least one scope")

    def check(request: Request) -> IssuedToken:
        header = request.headers.get("authorization", "")
        kind, _, value = header.partition(" ")
        if kind.lower() != "bearer" or not value.strip():
            raise BearerRefused(401, "invalid_token", "Bearer token required")
        token = config.tokens.lookup(value.strip(), config.clock())
        if token is None:
            raise BearerRefused(401, "invalid_token", "Token unknown or expired")
        if token.scopes.isdisjoint(scopes):
            wanted = " ".join(scopes)
            raise BearerRefused(403, "insufficient_scope", f"Token lacks scope {wanted}", wanted)
        if user and token.subject is None:
            raise BearerRefused(
                403, "insufficient_scope", "Personal data needs a token the end user consented to"
            )
        return token

    return check


def _oauth_error(status_code: int, error: str, description: str) -> JSONResponse:
    headers = dict(_NO_STORE)
    if status_code == 401:
        headers["WWW-Authenticate"] = 'Basic realm="OAuth"'
    return JSONResponse(
        {"error": error, "error_description": description}, status_code=status_code, headers=headers
    )


class IdTokenFaultSetting(BaseModel):
    """Body of ``PUT /_sandbox/id-token-fault``: the fault to apply to ID tokens from now on, or null."""

    fault: IdTokenFault | None = None


def _token_response(body: dict[str, object]) -> JSONResponse:
    return JSONResponse(body, headers=_NO_STORE, media_type="application/json;charset=UTF-8")


def _client_credentials(
    config: SandboxConfig, client_id: str, client: OAuthClient, form: dict[str, str]
) -> JSONResponse:
    """RFC 6749 §4.4: a token of the requested registered scopes, for no end user, with no refresh token."""
    requested = frozenset(form.get("scope", "").split())
    if not requested:
        return _oauth_error(400, "invalid_scope", "scope is required")
    unknown = sorted(requested - set(client.scopes))
    if unknown:
        return _oauth_error(400, "invalid_scope", f"Scope not registered for client: {' '.join(unknown)}")
    issued = config.tokens.issue(client_id, requested, config.token_lifetime_s, config.clock())
    return _token_response(
        {
            "access_token": issued.access_token,
            "token_type": "Bearer",
            "expires_in": config.token_lifetime_s,
            "scope": " ".join(sorted(requested)),
        }
    )


async def _token(config: SandboxConfig, grants: UserGrants, request: Request) -> JSONResponse:
    """The token endpoint: client credentials here, the user grants in :mod:`sandbox.user_grants`."""
    if "client_secret" in request.query_params:
        return _oauth_error(400, "invalid_request", "client_secret must be sent in the body")
    form = {key: values[0] for key, values in parse_qs((await request.body()).decode("utf-8")).items()}
    client_id = form.get("client_id", "")
    if client_id:
        config.tokens.count_request(client_id)
    grant_type = form.get("grant_type", "")
    if not grant_type or not client_id or "client_secret" not in form:
        return _oauth_error(400, "invalid_request", "grant_type, client_id and client_secret are required")
    client = config.oauth_clients.get(client_id)
    if client is None or not secrets.compare_digest(client.secret, form["client_secret"]):
        return _oauth_error(401, "invalid_client", "Client authentication failed")
    if grant_type == "client_credentials":
        return _client_credentials(config, client_id, client, form)
    if grant_type not in user_grants.USER_GRANT_TYPES:
        return _oauth_error(400, "unsupported_grant_type", f"grant_type {grant_type} is not supported")
    try:
        body = grants.grant(grant_type, client_id, form, oidc.issuer_of(config, request))
    except OAuthError as exc:
        return _oauth_error(exc.status_code, exc.error, exc.description)
    return _token_response(body)


def create_app(config: SandboxConfig, state: SandboxState) -> FastAPI:
    """The authorization server app, mounted at ``/auth`` by the combined sandbox; codes, refresh tokens and
    the signing key are kept in ``state``."""
    app = FastAPI(title="sandbox OAuth", version="1")
    install_bearer_errors(app)
    keys = oidc.SigningKeys(state)
    grants = UserGrants(config, state, keys)
    app.include_router(user_grants.create_router(grants))
    app.include_router(oidc.create_router(config, keys))

    @app.post(TOKEN_PATH)
    async def token(request: Request) -> JSONResponse:
        return await _token(config, grants, request)

    userinfo_token = require_scope(config, OPENID_SCOPE, user=True)

    @app.api_route(USERINFO_PATH, methods=["GET", "POST"])
    async def userinfo(request: Request) -> JSONResponse:
        token = userinfo_token(request)
        user = config.commerce_users.get(token.subject or "")
        if user is None:
            return JSONResponse({"error": "not_found", "error_description": "No such user"}, 404)
        return JSONResponse(oidc.granted_claims(user, token.scopes))

    @app.get("/_sandbox/tokens")
    def token_counts() -> dict[str, object]:
        return config.tokens.snapshot()

    @app.post("/_sandbox/revoke")
    def revoke() -> dict[str, int]:
        return {"revoked": config.tokens.revoke_all()}

    @app.post("/_sandbox/revoke-refresh-tokens")
    async def revoke_refresh_tokens() -> dict[str, int]:
        return {"revoked": grants.revoke_refresh_tokens()}

    @app.get("/_sandbox/id-token-fault")
    async def id_token_fault() -> IdTokenFaultSetting:
        return IdTokenFaultSetting(fault=config.commerce_id_token_fault)

    @app.put("/_sandbox/id-token-fault")
    async def set_id_token_fault(setting: IdTokenFaultSetting) -> IdTokenFaultSetting:
        config.commerce_id_token_fault = setting.fault
        return setting

    return app
