"""Grants on behalf of an end user: the authorization endpoint (the user signs in and consents at once) and
the ``authorization_code`` and ``refresh_token`` grants of the token endpoint (RFC 6749 §4.1, §6; OIDC Core
§3.1).

Codes and refresh tokens live in the sandbox state (tables ``auth.codes`` and ``auth.refresh_tokens``), so a
refresh token minted by one process works in every process sharing the state directory. A code is single
use and expires after ``config.commerce_code_lifetime_s``; presenting a used code again revokes the refresh
tokens obtained with it (§4.1.2). With ``config.commerce_rotate_refresh_tokens`` a refresh token is revoked
by its use and a new one returned; without, the same one is returned and stays valid.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.datastructures import QueryParams

from sandbox.commerce.users import CommerceUser
from sandbox.oidc import AUTHORIZATION_PATH, OPENID_SCOPE, SignIn, SigningKeys, id_token
from sandbox.state import SandboxState

if TYPE_CHECKING:
    from sandbox.config import OAuthClient, SandboxConfig

CODES_TABLE = "auth.codes"
REFRESH_TOKENS_TABLE = "auth.refresh_tokens"
# Used and expired codes are kept (to notice a replay) up to this many, the oldest dropped first.
MAX_CODES = 1000
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
USER_GRANT_TYPES = ("authorization_code", "refresh_token")


class OAuthError(Exception):
    """A token request refused with an RFC 6749 §5.2 error."""

    def __init__(self, status_code: int, error: str, description: str) -> None:
        super().__init__(description)
        self.status_code = status_code
        self.error = error
        self.description = description


def _invalid_grant(description: str) -> OAuthError:
    return OAuthError(400, "invalid_grant", description)


@dataclass(frozen=True)
class Consent:
    """What an end user agreed to: which client acts for them with which scopes, and when they signed in."""

    client_id: str
    subject: str
    scopes: frozenset[str]
    auth_time: float


@dataclass(frozen=True)
class AuthorizationCode:
    """An issued code: bound to the consent, the redirect URI and the nonce of its authorization request."""

    consent: Consent
    redirect_uri: str
    nonce: str | None
    expires_at: float
    used: bool = False


@dataclass(frozen=True)
class RefreshGrant:
    """A refresh token; ``family`` names the code it descends from (all its rotations share it)."""

    consent: Consent
    family: str
    expires_at: float
    revoked: bool = False


def redirect_uri_registered(registered: tuple[str, ...], redirect_uri: str) -> bool:
    """Whether ``redirect_uri`` is one of ``registered``: the same string, or for a loopback URI (127.0.0.1,
    [::1], localhost) the same scheme, host, path and query on any port (RFC 8252 §7.3)."""
    if not redirect_uri:
        return False
    if redirect_uri in registered:
        return True
    given = urlsplit(redirect_uri)
    if given.hostname not in LOOPBACK_HOSTS:
        return False
    try:
        given.port  # noqa: B018 - a malformed port raises here
    except ValueError:
        return False
    for uri in registered:
        known = urlsplit(uri)
        same = (known.scheme, known.hostname, known.path, known.query, known.fragment)
        if same == (given.scheme, given.hostname, given.path, given.query, given.fragment):
            return True
    return False


def _with_query(uri: str, parameters: dict[str, str | None]) -> str:
    query = urlencode({name: value for name, value in parameters.items() if value is not None})
    return f"{uri}{'&' if urlsplit(uri).query else '?'}{query}"


def choose_user(config: SandboxConfig, login_hint: str | None) -> CommerceUser | None:
    """The user ``login_hint`` names by subject or preferred_username; without a hint the first user."""
    users = list(config.commerce_users.values())
    if not login_hint:
        return users[0] if users else None
    for user in users:
        if login_hint in (user.subject, user.claims.get("preferred_username")):
            return user
    return None


class UserGrants:
    """The codes and refresh tokens of one sandbox state, and the grants that issue and redeem them."""

    def __init__(self, config: SandboxConfig, state: SandboxState, keys: SigningKeys) -> None:
        self._config = config
        self._keys = keys
        self._codes = state.table(CODES_TABLE)
        self._refresh_tokens = state.table(REFRESH_TOKENS_TABLE)

    def authorize(self, request: Request) -> Response:
        """Answer an authorization request: 400 for an unknown client or an unregistered redirect URI (never
        redirected), otherwise a 302 to the redirect URI with a code, or with the error, and the state."""
        query = request.query_params
        client_id = query.get("client_id", "")
        client = self._config.oauth_clients.get(client_id)
        if client is None:
            return JSONResponse(
                {"error": "invalid_client", "error_description": f"Unknown client_id {client_id!r}"}, 400
            )
        redirect_uri = query.get("redirect_uri", "")
        if not redirect_uri_registered(client.redirect_uris, redirect_uri):
            description = f"redirect_uri {redirect_uri!r} is not registered for client {client_id}"
            return JSONResponse({"error": "invalid_request", "error_description": description}, 400)
        state = query.get("state")
        try:
            consent = self._consent(client_id, client, query)
        except OAuthError as exc:
            error = {"error": exc.error, "error_description": exc.description, "state": state}
            return RedirectResponse(_with_query(redirect_uri, error), status_code=302)
        code = secrets.token_urlsafe(32)
        expires_at = self._config.clock() + self._config.commerce_code_lifetime_s
        self._codes.put(code, AuthorizationCode(consent, redirect_uri, query.get("nonce"), expires_at))
        self._codes.trim(MAX_CODES)
        if self._config.commerce_id_token_fault == "state":
            state = f"not-{state or 'sent'}-{secrets.token_urlsafe(8)}"
        return RedirectResponse(_with_query(redirect_uri, {"code": code, "state": state}), status_code=302)

    def _consent(self, client_id: str, client: OAuthClient, query: QueryParams) -> Consent:
        response_type = query.get("response_type")
        if not response_type:
            raise OAuthError(400, "invalid_request", "response_type is required")
        if response_type != "code":
            raise OAuthError(
                400, "unsupported_response_type", f"response_type {response_type} is not supported"
            )
        scopes = frozenset(query.get("scope", "").split())
        if not scopes:
            raise OAuthError(400, "invalid_scope", "scope is required")
        unknown = sorted(scopes - set(client.scopes))
        if unknown:
            raise OAuthError(400, "invalid_scope", f"Scope not registered for client: {' '.join(unknown)}")
        login_hint = query.get("login_hint")
        user = choose_user(self._config, login_hint)
        if user is None:
            raise OAuthError(400, "access_denied", f"No user signs in as {login_hint!r}")
        return Consent(client_id, user.subject, scopes, self._config.clock())

    def grant(self, grant_type: str, client_id: str, form: dict[str, str], issuer: str) -> dict[str, Any]:
        """The token response of an ``authorization_code`` or ``refresh_token`` grant for an authenticated
        client; raises :class:`OAuthError` when refused."""
        if grant_type == "authorization_code":
            return self._redeem_code(client_id, form, issuer)
        return self._refresh(client_id, form, issuer)

    def _redeem_code(self, client_id: str, form: dict[str, str], issuer: str) -> dict[str, Any]:
        code, redirect_uri = form.get("code", ""), form.get("redirect_uri", "")
        if not code or not redirect_uri:
            raise OAuthError(400, "invalid_request", "code and redirect_uri are required")
        record: AuthorizationCode | None = self._codes.get(code)
        if record is None:
            raise _invalid_grant("Unknown authorization code")
        if record.used:
            self._revoke_family(code)
            raise _invalid_grant("Authorization code was already used")
        # Consumed by this attempt whatever its outcome: a code is never redeemed twice.
        self._codes.put(code, replace(record, used=True))
        if record.consent.client_id != client_id:
            raise _invalid_grant("Authorization code was issued to another client")
        if self._config.clock() >= record.expires_at:
            raise _invalid_grant("Authorization code expired")
        if redirect_uri != record.redirect_uri:
            raise _invalid_grant("redirect_uri differs from the authorization request's")
        user = self._user(record.consent)
        refresh_token = self._mint_refresh_token(record.consent, family=code)
        return self._tokens(record.consent, user, record.consent.scopes, issuer, record.nonce, refresh_token)

    def _refresh(self, client_id: str, form: dict[str, str], issuer: str) -> dict[str, Any]:
        token = form.get("refresh_token", "")
        if not token:
            raise OAuthError(400, "invalid_request", "refresh_token is required")
        record: RefreshGrant | None = self._refresh_tokens.get(token)
        if record is None:
            raise _invalid_grant("Unknown refresh token")
        if record.consent.client_id != client_id:
            raise _invalid_grant("Refresh token was issued to another client")
        if record.revoked:
            raise _invalid_grant("Refresh token was revoked")
        if self._config.clock() >= record.expires_at:
            raise _invalid_grant("Refresh token expired")
        scopes = record.consent.scopes
        requested = frozenset(form.get("scope", "").split())
        if requested:
            beyond = sorted(requested - scopes)
            if beyond:
                raise OAuthError(400, "invalid_scope", f"Scope beyond the original grant: {' '.join(beyond)}")
            scopes = requested
        user = self._user(record.consent)
        if self._config.commerce_rotate_refresh_tokens:
            self._refresh_tokens.put(token, replace(record, revoked=True))
            token = self._mint_refresh_token(record.consent, family=record.family)
        return self._tokens(record.consent, user, scopes, issuer, None, token)

    def _mint_refresh_token(self, consent: Consent, *, family: str) -> str:
        token = secrets.token_urlsafe(32)
        expires_at = self._config.clock() + self._config.commerce_refresh_token_lifetime_s
        self._refresh_tokens.put(token, RefreshGrant(consent, family, expires_at))
        return token

    def _user(self, consent: Consent) -> CommerceUser:
        user = self._config.commerce_users.get(consent.subject)
        if user is None:
            raise _invalid_grant(f"User {consent.subject} no longer exists")
        return user

    def _tokens(
        self,
        consent: Consent,
        user: CommerceUser,
        scopes: frozenset[str],
        issuer: str,
        nonce: str | None,
        refresh_token: str,
    ) -> dict[str, Any]:
        config = self._config
        issued = config.tokens.issue(
            consent.client_id, scopes, config.token_lifetime_s, config.clock(), subject=consent.subject
        )
        body: dict[str, Any] = {
            "access_token": issued.access_token,
            "token_type": "Bearer",
            "expires_in": config.token_lifetime_s,
            "scope": " ".join(sorted(scopes)),
            "refresh_token": refresh_token,
        }
        if OPENID_SCOPE in scopes:
            sign_in = SignIn(issuer, consent.client_id, user, scopes, consent.auth_time, nonce)
            body["id_token"] = id_token(config, self._keys, sign_in)
        return body

    def _revoke_family(self, family: str) -> None:
        for token, record in self._refresh_tokens.items():
            if record.family == family and not record.revoked:
                self._refresh_tokens.put(token, replace(record, revoked=True))

    def revoke_refresh_tokens(self) -> int:
        """Revoke every refresh token still valid; returns how many there were."""
        count = 0
        for token, record in self._refresh_tokens.items():
            if not record.revoked:
                self._refresh_tokens.put(token, replace(record, revoked=True))
                count += 1
        return count


def create_router(grants: UserGrants) -> APIRouter:
    """The authorization endpoint."""
    router = APIRouter()

    @router.get(AUTHORIZATION_PATH)
    async def authorization(request: Request) -> Response:
        return grants.authorize(request)

    return router
