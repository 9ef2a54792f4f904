"""OpenID Connect parts of the sandbox authorization server: its RS256 signing key, the ID tokens it signs,
the claims each OpenID scope releases, and the discovery document and JWKS that let a client check tokens.

The key is generated once per sandbox state (table ``auth.keys``, PEM text), so every process sharing a state
directory signs with it and serves it. ``config.commerce_id_token_fault`` spoils ID tokens (or the
authorization redirect's ``state``) on purpose, so a client's checks of OIDC Core §3.1.3.7 can be tested:

* ``nonce``: the ID token carries a nonce the client never sent (a refreshed one too, which otherwise has
  none);
* ``expired``: ``exp`` lies :data:`EXPIRED_BY_S` seconds in the past;
* ``signature``: signed by a key that is not in the JWKS, under the JWKS key's ``kid``;
* ``issuer`` / ``audience``: ``iss`` / ``aud`` name another server / another client;
* ``state``: the authorization redirect carries another ``state`` (see :mod:`sandbox.user_grants`).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from fastapi import APIRouter, Request
from joserfc import jwt
from joserfc.jwk import RSAKey

from sandbox.commerce.users import CommerceUser
from sandbox.state import SandboxState

if TYPE_CHECKING:
    from sandbox.config import SandboxConfig

AUTHORIZATION_PATH = "/OAuth/authorization"
TOKEN_PATH = "/OAuth/token"
USERINFO_PATH = "/userinfo"
JWKS_PATH = "/.well-known/jwks.json"
DISCOVERY_PATH = "/.well-known/openid-configuration"

OPENID_SCOPE = "openid"
SIGNING_ALGORITHM = "RS256"
KEY_SIZE = 2048
KEYS_TABLE = "auth.keys"
_SIGNING_KEY = "signing"

IdTokenFault = Literal["nonce", "expired", "signature", "issuer", "audience", "state"]
# How far in the past the ``expired`` fault puts ``exp``: beyond any clock-skew leeway a client allows.
EXPIRED_BY_S = 600
FOREIGN_ISSUER = "https://impostor.postflows.invalid/auth"
FOREIGN_AUDIENCE = "another-client"

# The claims (OIDC Core §5.4) each OpenID scope releases, besides ``sub`` which ``openid`` always does.
CLAIMS_BY_SCOPE: dict[str, tuple[str, ...]] = {
    "profile": ("name", "given_name", "family_name", "preferred_username", "gender", "locale", "updated_at"),
    "email": ("email", "email_verified"),
    "phone": ("phone_number", "phone_number_verified"),
    "address": ("address",),
}


def granted_claims(user: CommerceUser, scopes: Iterable[str]) -> dict[str, Any]:
    """``sub`` and the claims the granted ``scopes`` release; claims the user lacks are left out."""
    granted = set(scopes)
    claims: dict[str, Any] = {"sub": user.subject}
    for scope, names in CLAIMS_BY_SCOPE.items():
        if scope in granted:
            claims.update({name: user.claims[name] for name in names if name in user.claims})
    return claims


def external_auth_url(request: Request) -> str:
    """The auth mount's address as ``request`` saw it: scheme://host[:port] plus the mount's root path."""
    return f"{request.url.scheme}://{request.url.netloc}{request.scope.get('root_path', '')}"


def issuer_of(config: SandboxConfig, request: Request) -> str:
    """The issuer identifier: ``config.commerce_issuer``, else the auth mount's external address."""
    return config.commerce_issuer or external_auth_url(request)


class SigningKeys:
    """The sandbox's RS256 key, loaded from the state (created there by the first process that signs), and a
    stranger key outside the JWKS for the ``signature`` fault. Both are kept once loaded."""

    def __init__(self, state: SandboxState) -> None:
        self._state = state
        self._key: RSAKey | None = None
        self._stranger: RSAKey | None = None

    def current(self) -> RSAKey:
        """The signing key, its ``kid`` the RFC 7638 thumbprint."""
        if self._key is None:
            self._key = _with_kid(self._stored_pem())
        return self._key

    def _stored_pem(self) -> str:
        table = self._state.table(KEYS_TABLE)
        # One transaction: processes starting together agree on a single key.
        with self._state.atomic():
            pem = table.get(_SIGNING_KEY)
            if pem is None:
                pem = RSAKey.generate_key(KEY_SIZE).as_pem(private=True).decode("ascii")
                table.put(_SIGNING_KEY, pem)
        return str(pem)

    def jwks(self) -> dict[str, Any]:
        """The JWK Set: the public half of the signing key only."""
        return {"keys": [self.current().as_dict(private=False)]}

    def sign(self, claims: dict[str, Any], *, forged: bool = False) -> str:
        """A compact RS256 JWT of ``claims``; ``forged`` signs with the stranger key, under the real kid."""
        key = self.current()
        signer = key
        if forged:
            if self._stranger is None:
                self._stranger = RSAKey.generate_key(KEY_SIZE)
            signer = self._stranger
        return jwt.encode({"alg": SIGNING_ALGORITHM, "kid": key.kid}, claims, signer)


def _with_kid(pem: str) -> RSAKey:
    thumbprint = RSAKey.import_key(pem).thumbprint()
    return RSAKey.import_key(pem, parameters={"kid": thumbprint, "use": "sig", "alg": SIGNING_ALGORITHM})


@dataclass(frozen=True)
class SignIn:
    """What an ID token says of one sign-in.

    Attributes:
        issuer: the ``iss`` (the authorization server as the client reached it).
        client_id: the client signed in to (the ``aud``).
        user: who signed in.
        scopes: the granted scopes; their OpenID claims go into the token.
        auth_time: when the user signed in, epoch seconds.
        nonce: the client's nonce; None leaves the claim out, as on a refresh.
    """

    issuer: str
    client_id: str
    user: CommerceUser
    scopes: Iterable[str]
    auth_time: float
    nonce: str | None


def id_token(config: SandboxConfig, keys: SigningKeys, sign_in: SignIn) -> str:
    """The signed ID token of ``sign_in``, spoiled as ``config.commerce_id_token_fault`` says."""
    issuer, client_id, nonce = sign_in.issuer, sign_in.client_id, sign_in.nonce
    now = int(config.clock())
    lifetime = config.token_lifetime_s
    claims: dict[str, Any] = {
        **granted_claims(sign_in.user, sign_in.scopes),
        "iss": issuer,
        "aud": client_id,
        "iat": now,
        "exp": now + lifetime,
        "auth_time": int(sign_in.auth_time),
    }
    if nonce is not None:
        claims["nonce"] = nonce
    fault = config.commerce_id_token_fault
    if fault == "nonce":
        claims["nonce"] = f"not-{nonce or 'sent'}-{secrets.token_urlsafe(8)}"
    elif fault == "expired":
        claims["exp"] = now - EXPIRED_BY_S
        claims["iat"] = claims["exp"] - lifetime
    elif fault == "issuer":
        claims["iss"] = FOREIGN_ISSUER
    elif fault == "audience":
        claims["aud"] = FOREIGN_AUDIENCE
    return keys.sign(claims, forged=fault == "signature")


def create_router(config: SandboxConfig, keys: SigningKeys) -> APIRouter:
    """The discovery document (OpenID Connect Discovery §3) and the JWKS it points to."""
    router = APIRouter()

    @router.get(DISCOVERY_PATH)
    async def discovery(request: Request) -> dict[str, Any]:
        base = external_auth_url(request)
        scopes = sorted({scope for client in config.oauth_clients.values() for scope in client.scopes})
        return {
            "issuer": issuer_of(config, request),
            "authorization_endpoint": base + AUTHORIZATION_PATH,
            "token_endpoint": base + TOKEN_PATH,
            "userinfo_endpoint": base + USERINFO_PATH,
            "jwks_uri": base + JWKS_PATH,
            "scopes_supported": scopes,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": [SIGNING_ALGORITHM],
            "token_endpoint_auth_methods_supported": ["client_secret_post"],
            "claims_supported": sorted(
                {"sub", "iss", "aud", "exp", "iat", "auth_time", "nonce"}.union(*CLAIMS_BY_SCOPE.values())
            ),
        }

    @router.get(JWKS_PATH)
    async def jwks() -> dict[str, Any]:
        return keys.jwks()

    return router
