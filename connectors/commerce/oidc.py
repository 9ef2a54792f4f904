"""OpenID Connect sign-in (authorization code flow) and the user's tokens afterwards.

:class:`OidcClient` builds the authorization URL (scopes joined by ``+``, ``response_type=code``, a fresh
``state`` and ``nonce``), reads the redirect (the ``state`` must be the one sent), exchanges the code, and
checks the ID token as OpenID Connect Core §3.1.3.7 asks: RS256 signature against the issuer's JWKS, then
``iss``, ``aud``, ``exp``, ``iat`` and ``nonce``. Grants are built with authlib, ID tokens read with joserfc.

:class:`UserSession` (:mod:`connectors.commerce.session`, named here too) is the token source of the user
signed in afterwards; the claims of an ID token are checked in :mod:`connectors.commerce.id_token`. Nothing
here writes files or logs a token.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from pydantic import SecretStr

from connectors.commerce.id_token import ClaimRules, Clock, signed_claims
from connectors.commerce.session import RefreshTokenSink as RefreshTokenSink
from connectors.commerce.session import UserSession as UserSession
from connectors.errors import (
    ApiError,
    AuthFailed,
    AuthorizationDenied,
    IdTokenInvalid,
    LoginFailed,
    MalformedResponse,
    StateMismatch,
    error_for_http_status,
)
from connectors.http import ApiClient, ClientOptions, RequestTraits
from connectors.jsontext import json_of
from connectors.oauth import (
    AccessToken,
    ScopeSet,
    form_post,
    lifetime_of,
    read_token_response,
    redact_secret,
)
from connectors.userinfo import Userinfo as Userinfo
from connectors.userinfo import UserinfoAddress as UserinfoAddress
from core.redaction import register_secret

OPENID = "openid"


@dataclass(frozen=True)
class AuthorizationRequest:
    """One sign-in in progress: the address to open and what the redirect must carry back."""

    url: str
    redirect_uri: str
    scopes: tuple[str, ...]
    state: str = field(repr=False)
    nonce: str = field(repr=False)


@dataclass(frozen=True)
class UserTokens:
    """What a sign-in or a refresh yields; ``id_claims`` are the checked ID token's claims."""

    access_token: AccessToken
    refresh_token: SecretStr | None
    id_claims: dict[str, Any]
    scopes: ScopeSet


@dataclass(frozen=True)
class OidcEndpoints:
    """Where an authorization server keeps what a sign-in needs, beyond its ``auth_url``.

    Attributes:
        userinfo_url: ``{userinfo_url}``; None: ``/userinfo`` below ``auth_url``.
        issuer: the ``iss`` ID tokens must carry; None: ``auth_url``.
        jwks_url: where the issuer's signing keys are; None: from the issuer's discovery document.
        authorization_path: path of the authorization endpoint below ``auth_url``.
        token_path: path of the token endpoint below ``auth_url``.
    """

    userinfo_url: str | None = None
    issuer: str | None = None
    jwks_url: str | None = None
    authorization_path: str = "/OAuth/authorization"
    token_path: str = "/OAuth/token"


# A token request is sent through the HTTP core for its log and error mapping, but never resent: a code is
# single use.
_NEVER_RESENT = RequestTraits(idempotent=False)


class OidcClient(ApiClient):
    """The authorization server of one registered client.

    Args:
        auth_url: ``{auth_url}``, the host of ``/OAuth/authorization`` and ``/OAuth/token``.
        client_id: the registered client id.
        client_secret: its secret (sent in token request bodies only).
        endpoints: where its endpoints and keys are, and the issuer (:class:`OidcEndpoints`).
        leeway: seconds of clock difference tolerated on ``exp`` and ``iat``; also how long before
            ``expires_in`` an access token is renewed.
        clock: epoch seconds (ID token times are epoch seconds).
        options: how the server is reached (:class:`~connectors.http.ClientOptions`).
    """

    api_name: ClassVar[str] = "commerce-auth"

    def __init__(
        self,
        auth_url: str,
        *,
        client_id: str,
        client_secret: SecretStr,
        endpoints: OidcEndpoints | None = None,
        leeway: float = 60.0,
        clock: Clock = time.time,
        options: ClientOptions | None = None,
    ) -> None:
        super().__init__(auth_url, options=options)
        endpoints = endpoints or OidcEndpoints()
        self.client_id = client_id
        self._client_secret = client_secret
        register_secret(client_secret.get_secret_value())
        self.userinfo_url = endpoints.userinfo_url or self.url("/userinfo")
        # Compared with ``iss`` exactly (OIDC Core §3.1.3.7): a configured issuer keeps its trailing slash.
        self.issuer = endpoints.issuer or self.base_url
        self._jwks_url = endpoints.jwks_url
        self.authorization_url = self.url(endpoints.authorization_path)
        self.token_url = self.url(endpoints.token_path)
        self.leeway = leeway
        self.clock = clock
        self._keys: KeySet | None = None

    def __repr__(self) -> str:
        return f"OidcClient(auth_url={self.base_url!r}, client_id={self.client_id!r})"

    # --- authorization code flow -----------------------------------------------------------------------

    def begin(
        self, redirect_uri: str, scopes: Iterable[str], *, login_hint: str | None = None
    ) -> AuthorizationRequest:
        """A new sign-in: the authorization URL with a fresh ``state`` and ``nonce``."""
        scope_list = tuple(dict.fromkeys(scopes))
        if not scope_list:
            raise ValueError("name at least one scope")
        state, nonce = generate_token(32), generate_token(32)
        extra = {"nonce": nonce} | ({"login_hint": login_hint} if login_hint else {})
        url = prepare_grant_uri(
            self.authorization_url,
            self.client_id,
            "code",
            redirect_uri=redirect_uri,
            scope=list(scope_list),
            state=state,
            **extra,
        )
        return AuthorizationRequest(url, redirect_uri, scope_list, state=state, nonce=nonce)

    def code_from_redirect(self, request: AuthorizationRequest, redirect: str) -> str:
        """The authorization code of the redirect to ``request.redirect_uri`` (its full URL or query).

        Raises:
            AuthorizationDenied: the redirect carries an ``error``.
            StateMismatch: the redirect's ``state`` is missing or not the one sent.
            LoginFailed: no code.
        """
        query = urlsplit(redirect).query if "?" in redirect or "://" in redirect else redirect
        params = {name: values[0] for name, values in parse_qs(query).items()}
        if params.get("state") != request.state:
            raise StateMismatch(
                "the redirect's state is not the one this login sent; the redirect is refused "
                "(an old browser tab, another login, or a forged request)"
            )
        if "error" in params:
            raise AuthorizationDenied(params["error"], params.get("error_description", ""))
        code = params.get("code")
        if not code:
            raise LoginFailed("the redirect carries no authorization code")
        register_secret(code, issued=True)
        return code

    async def exchange_code(self, request: AuthorizationRequest, code: str) -> UserTokens:
        """Exchange ``code`` for tokens and check the ID token against ``request.nonce``."""
        token_request = form_post(
            self.token_url,
            "authorization_code",
            client_id=self.client_id,
            client_secret=self._client_secret.get_secret_value(),
            redirect_uri=request.redirect_uri,
            code=code,
        )
        payload = await self._token_call(token_request, "the authorization code")
        return await self._user_tokens(payload, frozenset(request.scopes), nonce=request.nonce)

    async def finish(self, request: AuthorizationRequest, redirect: str) -> UserTokens:
        """Read the redirect, exchange its code and check the ID token."""
        return await self.exchange_code(request, self.code_from_redirect(request, redirect))

    async def refresh(self, refresh_token: SecretStr, scopes: Iterable[str] = ()) -> UserTokens:
        """New tokens from the refresh grant; a new refresh token when the server rotates it."""
        token_request = self.refresh_request(refresh_token, frozenset(scopes))
        payload = await self._token_call(token_request, "the refresh token")
        return await self._user_tokens(payload, frozenset(scopes), nonce=None, previous=refresh_token)

    def refresh_request(self, refresh_token: SecretStr, scopes: ScopeSet = frozenset()) -> httpx.Request:
        fields = {
            "client_id": self.client_id,
            "client_secret": self._client_secret.get_secret_value(),
            "refresh_token": refresh_token.get_secret_value(),
        }
        if scopes:
            fields["scope"] = " ".join(sorted(scopes))
        return form_post(self.token_url, "refresh_token", **fields)

    def read_token_payload(self, response: httpx.Response, what: str) -> dict[str, Any]:
        return read_token_response(response, api=self.api_name, what=what, redact=self._redact)

    async def _token_call(self, token_request: httpx.Request, what: str) -> dict[str, Any]:
        response = await self.request(
            "POST",
            str(token_request.url),
            content=token_request.content,
            headers=dict(token_request.headers),
            check=_accept_any,
            traits=_NEVER_RESENT,
        )
        return self.read_token_payload(response, what)

    def error_for_response(self, response: httpx.Response) -> ApiError:
        if response.status_code == 429 or response.status_code >= 500:
            return error_for_http_status(response, api=self.api_name)
        detail = ""
        try:
            body = json_of(response, api=self.api_name)
            if isinstance(body, dict) and body.get("error"):
                detail = f": {body['error']}" + (
                    f" ({body['error_description']})" if body.get("error_description") else ""
                )
        except ValueError:
            pass
        return AuthFailed(
            self._redact(f"{self.api_name}: HTTP {response.status_code}{detail}"),
            api=self.api_name,
            status_code=response.status_code,
        )

    async def _user_tokens(
        self,
        payload: dict[str, Any],
        asked: ScopeSet,
        *,
        nonce: str | None,
        previous: SecretStr | None = None,
    ) -> UserTokens:
        granted = frozenset(str(payload.get("scope", "")).split()) or asked
        claims: dict[str, Any] = {}
        id_token = payload.get("id_token")
        if isinstance(id_token, str):
            claims = await self.verify_id_token(id_token, nonce=nonce)
        elif nonce is not None and OPENID in granted:
            raise IdTokenInvalid("the token response carries no id_token although openid was granted")
        refresh = payload.get("refresh_token")
        return UserTokens(
            access_token=AccessToken(
                value=SecretStr(payload["access_token"]),
                scopes=granted,
                expires_at=time.monotonic() + lifetime_of(payload) - self.leeway,
            ),
            refresh_token=SecretStr(refresh) if isinstance(refresh, str) and refresh else previous,
            id_claims=claims,
            scopes=granted,
        )

    # --- ID token ------------------------------------------------------------------------------------

    async def verify_id_token(self, id_token: str, *, nonce: str | None) -> dict[str, Any]:
        """The claims of ``id_token`` once its signature, issuer, audience, times and nonce are right.

        ``nonce`` None (a refreshed ID token) skips only the nonce check. Keys are fetched again once
        when the token names a key the cached set lacks (the issuer rotated its keys).
        """
        claims = signed_claims(id_token, await self.signing_keys(), last_try=False)
        if claims is None:
            claims = signed_claims(id_token, await self.signing_keys(refresh=True), last_try=True)
        assert claims is not None  # the last try returns claims or raises
        rules = ClaimRules(issuer=self.issuer, client_id=self.client_id, leeway=self.leeway, clock=self.clock)
        return rules.validate(claims, nonce=nonce)

    async def signing_keys(self, *, refresh: bool = False) -> KeySet:
        """The issuer's JWKS, fetched once (again with ``refresh``)."""
        if self._keys is None or refresh:
            url = self._jwks_url or await self._discovered("jwks_uri")
            response = await self.request("GET", url)
            try:
                self._keys = KeySet.import_key_set(json_of(response, api=self.api_name))
            except (ValueError, JoseError, TypeError) as error:
                raise MalformedResponse(
                    f"{self.api_name}: the JWKS at {url} cannot be read: {error}", api=self.api_name
                ) from None
        return self._keys

    async def _discovered(self, name: str) -> str:
        url = f"{self.issuer.rstrip('/')}/.well-known/openid-configuration"
        response = await self.request("GET", url)
        try:
            value = json_of(response, api=self.api_name)[name]
        except (ValueError, KeyError, TypeError):
            raise MalformedResponse(
                f"{self.api_name}: {url} names no {name}; set the JWKS address in the settings",
                api=self.api_name,
            ) from None
        return str(value)

    # --- userinfo -------------------------------------------------------------------------------------

    async def userinfo(self, auth: httpx.Auth) -> Userinfo:
        """The signed-in user's claims (§2.11), with a user token carrying ``openid``."""
        response = await self.request("GET", self.userinfo_url, auth=auth)
        try:
            return Userinfo.model_validate(json_of(response, api=self.api_name))
        except ValueError as error:
            raise MalformedResponse(f"{self.api_name}: userinfo: {error}", api=self.api_name) from None

    def _redact(self, text: str) -> str:
        return redact_secret(text, self._client_secret)


def _accept_any(response: httpx.Response) -> None:
    """Token answers are judged by :func:`~connectors.oauth.read_token_response`."""
