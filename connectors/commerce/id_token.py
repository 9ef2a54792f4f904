"""Reading an ID token as OpenID Connect Core §3.1.3.7 asks: its RS256 signature against the issuer's keys,
then ``iss``, ``aud``, ``exp``, ``iat`` and ``nonce`` (read with joserfc). Fetching the keys is the
:class:`~connectors.commerce.oidc.OidcClient`'s part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from connectors.errors import IdTokenInvalid

Clock = Callable[[], float]

ID_TOKEN_ALGORITHMS = ("RS256",)

# joserfc's errors for a token whose key the set lacks: the issuer may have rotated its keys.
_UNKNOWN_KEY_ERRORS = ("InvalidKeyIdError", "MissingKeyError")


def signed_claims(id_token: str, keys: KeySet, *, last_try: bool) -> dict[str, Any] | None:
    """The claims of ``id_token`` once its signature checks against ``keys``, not yet validated.

    None when ``keys`` lack the key the token names and this is not the ``last_try`` (fetch the keys again).

    Raises:
        IdTokenInvalid: the token cannot be read or its signature is wrong.
    """
    try:
        token = jwt.decode(id_token, keys, algorithms=list(ID_TOKEN_ALGORITHMS))
    except JoseError as error:
        if not last_try and type(error).__name__ in _UNKNOWN_KEY_ERRORS:
            return None
        raise IdTokenInvalid(jose_reason(error)) from None
    return dict(token.claims)


@dataclass(frozen=True)
class ClaimRules:
    """What the claims of an ID token must say for one registered client.

    Attributes:
        issuer: the ``iss`` they must carry, compared exactly.
        client_id: the audience (and the ``azp`` when there are several audiences).
        leeway: seconds of clock difference tolerated on ``exp`` and ``iat``.
        clock: epoch seconds.
    """

    issuer: str
    client_id: str
    leeway: float
    clock: Clock

    def validate(self, claims: dict[str, Any], *, nonce: str | None) -> dict[str, Any]:
        """``claims`` once issuer, audience, times and ``nonce`` are right (None: no nonce check).

        Raises:
            IdTokenInvalid: a claim is missing or wrong.
        """
        options: dict[str, jwt.ClaimsOption] = {
            "iss": {"essential": True, "value": self.issuer},
            "sub": {"essential": True},
            "aud": {"essential": True, "value": self.client_id},
            "exp": {"essential": True},
            "iat": {"essential": True},
        }
        if nonce is not None:
            options["nonce"] = {"essential": True, "value": nonce}
        registry = jwt.JWTClaimsRegistry(now=lambda: int(self.clock()), leeway=int(self.leeway), **options)
        try:
            registry.validate(claims)
        except JoseError as error:
            raise IdTokenInvalid(jose_reason(error)) from None
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != self.client_id:
            raise IdTokenInvalid("several audiences and azp is not this client")
        return claims


def jose_reason(error: JoseError) -> str:
    """The class and description of a joserfc error, for an :class:`IdTokenInvalid`."""
    description = getattr(error, "description", "") or str(error) or type(error).__name__
    return f"{type(error).__name__}: {description}"
