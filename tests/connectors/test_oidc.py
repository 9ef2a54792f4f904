"""OpenID Connect sign-in (commerce spec §5) against a fake authorization server: the authorization URL, the
redirect's state, the code and refresh grants' forms, ID tokens signed here with RSA keys served as a JWKS
(checked as OpenID Connect Core §3.1.3.7 asks), key rotation, discovery, and a signed-in user's session."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey
from pydantic import SecretStr

from connectors.commerce.oidc import AuthorizationRequest, OidcClient, UserSession
from connectors.errors import (
    AuthorizationDenied,
    IdTokenInvalid,
    LoginFailed,
    MalformedResponse,
    ServerError,
    StateMismatch,
)
from connectors.oauth import OAuth2ClientCredentialsAuth
from tests.connectors.commerce_support import (
    AUTH,
    BASE,
    CLIENT_ID,
    JWKS_URL,
    SECRET,
    TOKEN_URL,
    USERINFO_URL,
    FakeCommerce,
    commerce_client,
    oidc_client,
    reply,
)

NOW = 1_900_000_000
REDIRECT = "http://127.0.0.1:8765/callback"
SCOPES = ["openid", "profile", "email", "DCAPI_ADDRESS_READ"]
PERSONAL = f"{BASE}/address/v1/users/current/addresses"

KEY = RSAKey.generate_key(2048, parameters={"kid": "k1"}, private=True)
ROTATED = RSAKey.generate_key(2048, parameters={"kid": "k2"}, private=True)
FORGED = RSAKey.generate_key(2048, parameters={"kid": "k1"}, private=True)  # same kid, another key


def jwks(*keys: RSAKey) -> dict[str, Any]:
    return {"keys": [key.as_dict(private=False) | {"use": "sig", "alg": "RS256"} for key in keys]}


def id_token(nonce: str | None, *, key: RSAKey | OctKey = KEY, alg: str = "RS256", **claims: Any) -> str:
    """An ID token for :data:`CLIENT_ID` issued now by :data:`AUTH`; ``claims`` override (None removes)."""
    payload = {"iss": AUTH, "sub": "user-1", "aud": CLIENT_ID, "iat": NOW, "exp": NOW + 300, "nonce": nonce}
    payload |= claims
    header = {"alg": alg} | ({"kid": key.kid} if key.kid else {})
    return jwt.encode(header, {name: value for name, value in payload.items() if value is not None}, key)


def unsigned(token: str) -> str:
    """``token`` with its header replaced by ``{"alg": "none"}`` and its signature removed."""
    header = base64.urlsafe_b64encode(json.dumps({"alg": "none"}).encode()).rstrip(b"=").decode()
    return f"{header}.{token.split('.')[1]}."


def token_body(id_token: str | None = None, **extra: Any) -> dict[str, Any]:
    body = {
        "access_token": "user-access",
        "token_type": "Bearer",
        "expires_in": 600,
        "refresh_token": "refresh-1",
    }
    return body | ({"id_token": id_token} if id_token else {}) | extra


def answers(*bodies: dict[str, Any] | httpx.Response) -> Callable[[dict[str, str]], httpx.Response]:
    """Token endpoint replies in turn (the last repeats)."""
    queue = list(bodies)

    def answer(form: dict[str, str]) -> httpx.Response:
        body = queue.pop(0) if len(queue) > 1 else queue[0]
        return body if isinstance(body, httpx.Response) else httpx.Response(200, json=body)

    return answer


@pytest.fixture
def server() -> FakeCommerce:
    server = FakeCommerce()
    server.route("GET", JWKS_URL, jwks(KEY))
    return server


@pytest.fixture
async def oidc(server: FakeCommerce) -> AsyncIterator[OidcClient]:
    async with oidc_client(server, clock=lambda: NOW) as oidc:
        yield oidc


def redirect_for(request: AuthorizationRequest, **params: str) -> str:
    return str(httpx.URL(REDIRECT, params={"state": request.state} | params))


# --- authorization URL and redirect -------------------------------------------------------------------


def test_authorization_url_carries_the_spec_parameters(oidc: OidcClient) -> None:
    request = oidc.begin(REDIRECT, SCOPES)
    url = urlsplit(request.url)
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{AUTH}/OAuth/authorization"
    assert "scope=openid+profile+email+DCAPI_ADDRESS_READ" in url.query.split("&")
    params = parse_qs(url.query)
    assert {name: values for name, values in params.items() if name not in ("state", "nonce")} == {
        "client_id": [CLIENT_ID],
        "scope": ["openid profile email DCAPI_ADDRESS_READ"],
        "response_type": ["code"],
        "redirect_uri": [REDIRECT],
    }
    assert params["state"] == [request.state] and params["nonce"] == [request.nonce]
    assert SECRET not in request.url
    assert request.redirect_uri == REDIRECT and request.scopes == tuple(SCOPES)


def test_state_and_nonce_are_fresh_for_each_sign_in(oidc: OidcClient) -> None:
    requests = [oidc.begin(REDIRECT, SCOPES) for _ in range(5)]
    values = [request.state for request in requests] + [request.nonce for request in requests]
    assert len(set(values)) == 10
    assert all(len(value) >= 20 for value in values)


def test_code_from_the_redirect(oidc: OidcClient) -> None:
    request = oidc.begin(REDIRECT, SCOPES)
    assert oidc.code_from_redirect(request, redirect_for(request, code="the-code")) == "the-code"
    assert oidc.code_from_redirect(request, f"code=the-code&state={request.state}") == "the-code"


@pytest.mark.parametrize("state", ["another-state", "", None])
def test_wrong_or_missing_state_is_refused(oidc: OidcClient, state: str | None) -> None:
    request = oidc.begin(REDIRECT, SCOPES)
    params = {"code": "the-code"} | ({"state": state} if state is not None else {})
    with pytest.raises(StateMismatch):
        oidc.code_from_redirect(request, str(httpx.URL(REDIRECT, params=params)))


def test_state_of_another_sign_in_is_refused(oidc: OidcClient) -> None:
    first, second = oidc.begin(REDIRECT, SCOPES), oidc.begin(REDIRECT, SCOPES)
    with pytest.raises(StateMismatch):
        oidc.code_from_redirect(second, redirect_for(first, code="the-code"))


def test_error_redirect_is_authorization_denied(oidc: OidcClient) -> None:
    request = oidc.begin(REDIRECT, SCOPES)
    redirect = redirect_for(request, error="access_denied", error_description="the user said no")
    with pytest.raises(AuthorizationDenied, match="access_denied.*the user said no") as caught:
        oidc.code_from_redirect(request, redirect)
    assert caught.value.error == "access_denied"


def test_redirect_without_a_code_fails(oidc: OidcClient) -> None:
    request = oidc.begin(REDIRECT, SCOPES)
    with pytest.raises(LoginFailed, match="no authorization code"):
        oidc.code_from_redirect(request, redirect_for(request))


# --- code and refresh grants ------------------------------------------------------------------------


async def test_code_exchange_form_and_tokens(oidc: OidcClient, server: FakeCommerce) -> None:
    request = oidc.begin(REDIRECT, SCOPES)
    server.token_reply = answers(token_body(id_token(request.nonce, name="Hans Muster")))
    tokens = await oidc.finish(request, redirect_for(request, code="the-code"))
    (call,) = server.token_calls
    assert call.url == TOKEN_URL
    assert call.fields() == {
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "redirect_uri": REDIRECT,
        "code": "the-code",
    }
    assert "authorization" not in {name.lower() for name in call.headers}
    assert tokens.id_claims["sub"] == "user-1" and tokens.id_claims["name"] == "Hans Muster"
    assert tokens.access_token.authorization == "Bearer user-access"
    assert tokens.refresh_token is not None and tokens.refresh_token.get_secret_value() == "refresh-1"
    assert tokens.scopes == frozenset(SCOPES)


async def test_code_exchange_is_not_resent_after_a_server_error(
    oidc: OidcClient, server: FakeCommerce
) -> None:
    request = oidc.begin(REDIRECT, SCOPES)
    server.token_reply = answers(httpx.Response(502), token_body(id_token(request.nonce)))
    with pytest.raises(ServerError):
        await oidc.exchange_code(request, "the-code")
    assert len(server.token_calls) == 1


async def test_refresh_form_and_rotation(oidc: OidcClient, server: FakeCommerce) -> None:
    server.token_reply = answers(
        token_body(refresh_token="refresh-2", scope="openid DCAPI_ADDRESS_READ"),
        token_body(refresh_token=None),
    )
    first = await oidc.refresh(SecretStr("refresh-1"))
    assert server.token_calls[0].fields() == {
        "grant_type": "refresh_token",
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "refresh_token": "refresh-1",
    }
    assert first.refresh_token is not None and first.refresh_token.get_secret_value() == "refresh-2"
    assert first.scopes == frozenset({"openid", "DCAPI_ADDRESS_READ"})
    second = await oidc.refresh(first.refresh_token)
    assert server.token_calls[1].fields()["refresh_token"] == "refresh-2"
    # A server that does not rotate leaves the refresh token as it was.
    assert second.refresh_token is not None and second.refresh_token.get_secret_value() == "refresh-2"


async def test_refreshed_id_token_is_checked_without_a_nonce(oidc: OidcClient, server: FakeCommerce) -> None:
    server.token_reply = answers(token_body(id_token(None)), token_body(id_token(None, key=FORGED)))
    assert (await oidc.refresh(SecretStr("refresh-1"))).id_claims["sub"] == "user-1"
    with pytest.raises(IdTokenInvalid):
        await oidc.refresh(SecretStr("refresh-1"))


# --- ID token checks ----------------------------------------------------------------------------------


async def test_good_id_token_is_accepted(oidc: OidcClient, server: FakeCommerce) -> None:
    claims = await oidc.verify_id_token(id_token("n-1"), nonce="n-1")
    assert (claims["iss"], claims["aud"], claims["nonce"]) == (AUTH, CLIENT_ID, "n-1")
    assert len(server.api_calls("GET", JWKS_URL)) == 1


async def test_expired_within_the_leeway_is_accepted(oidc: OidcClient) -> None:
    await oidc.verify_id_token(id_token("n-1", exp=NOW - 30), nonce="n-1")


BAD_TOKENS: dict[str, Callable[[str], str]] = {
    "wrong nonce": lambda nonce: id_token("another-nonce"),
    "no nonce": lambda nonce: id_token(None),
    "expired": lambda nonce: id_token(nonce, iat=NOW - 3600, exp=NOW - 600),
    "signed by another key": lambda nonce: id_token(nonce, key=FORGED),
    "wrong iss": lambda nonce: id_token(nonce, iss="https://evil.example.test"),
    "wrong aud": lambda nonce: id_token(nonce, aud="another-client"),
    "several aud without azp": lambda nonce: id_token(nonce, aud=[CLIENT_ID, "another-client"]),
    "several aud, azp another client": lambda nonce: id_token(
        nonce, aud=[CLIENT_ID, "another-client"], azp="another-client"
    ),
    "no sub": lambda nonce: id_token(nonce, sub=None),
    "no exp": lambda nonce: id_token(nonce, exp=None),
    "alg none": lambda nonce: unsigned(id_token(nonce)),
    "not a JWT": lambda nonce: "not-a-jwt",
    "HS256 with the client secret": lambda nonce: id_token(
        nonce, key=OctKey.import_key(SECRET * 4), alg="HS256"
    ),
}


@pytest.mark.parametrize("make", BAD_TOKENS.values(), ids=BAD_TOKENS.keys())
async def test_bad_id_token_fails_the_sign_in(
    oidc: OidcClient, server: FakeCommerce, make: Callable[[str], str]
) -> None:
    request = oidc.begin(REDIRECT, SCOPES)
    server.token_reply = answers(token_body(make(request.nonce)))
    with pytest.raises(IdTokenInvalid):
        await oidc.finish(request, redirect_for(request, code="the-code"))


async def test_several_audiences_with_azp_of_this_client_are_accepted(oidc: OidcClient) -> None:
    token = id_token("n-1", aud=[CLIENT_ID, "another-client"], azp=CLIENT_ID)
    assert (await oidc.verify_id_token(token, nonce="n-1"))["azp"] == CLIENT_ID


async def test_token_response_without_id_token_fails_when_openid_was_asked(
    oidc: OidcClient, server: FakeCommerce
) -> None:
    request = oidc.begin(REDIRECT, SCOPES)
    server.token_reply = answers(token_body())
    with pytest.raises(IdTokenInvalid, match="no id_token"):
        await oidc.exchange_code(request, "the-code")


async def test_unknown_kid_refetches_the_keys_once(oidc: OidcClient, server: FakeCommerce) -> None:
    server.route("GET", JWKS_URL, jwks(KEY), jwks(KEY, ROTATED))
    await oidc.verify_id_token(id_token("n-1"), nonce="n-1")
    await oidc.verify_id_token(id_token("n-2", key=ROTATED), nonce="n-2")
    await oidc.verify_id_token(id_token("n-3", key=ROTATED), nonce="n-3")
    await oidc.verify_id_token(id_token("n-4"), nonce="n-4")
    assert len(server.api_calls("GET", JWKS_URL)) == 2


async def test_kid_missing_after_the_refetch_is_invalid(oidc: OidcClient, server: FakeCommerce) -> None:
    await oidc.verify_id_token(id_token("n-1"), nonce="n-1")
    with pytest.raises(IdTokenInvalid):
        await oidc.verify_id_token(id_token("n-2", key=ROTATED), nonce="n-2")
    assert len(server.api_calls("GET", JWKS_URL)) == 2


async def test_keys_are_discovered_from_the_issuer(server: FakeCommerce) -> None:
    keys_url = "https://keys.example.test/oauth2/certs"
    server.route("GET", f"{AUTH}/.well-known/openid-configuration", {"issuer": AUTH, "jwks_uri": keys_url})
    server.route("GET", keys_url, jwks(KEY))
    async with oidc_client(server, jwks_url=None, clock=lambda: NOW) as oidc:
        await oidc.verify_id_token(id_token("n-1"), nonce="n-1")
    assert [call.url for call in server.calls] == [f"{AUTH}/.well-known/openid-configuration", keys_url]


async def test_discovery_without_jwks_uri_says_what_to_set(server: FakeCommerce) -> None:
    server.route("GET", f"{AUTH}/.well-known/openid-configuration", {"issuer": AUTH})
    async with oidc_client(server, jwks_url=None, clock=lambda: NOW) as oidc:
        with pytest.raises(MalformedResponse, match="jwks_uri"):
            await oidc.verify_id_token(id_token("n-1"), nonce="n-1")


@pytest.mark.parametrize("issuer", ["https://login.example.test/realms/post", "https://login.example.test/"])
async def test_configured_issuer_is_checked_exactly(server: FakeCommerce, issuer: str) -> None:
    async with oidc_client(server, issuer=issuer, clock=lambda: NOW) as oidc:
        await oidc.verify_id_token(id_token("n-1", iss=issuer), nonce="n-1")
        with pytest.raises(IdTokenInvalid):
            await oidc.verify_id_token(id_token("n-2"), nonce="n-2")


async def test_issuer_with_a_trailing_slash_is_not_the_one_without(server: FakeCommerce) -> None:
    async with oidc_client(server, issuer="https://login.example.test/", clock=lambda: NOW) as oidc:
        with pytest.raises(IdTokenInvalid, match="iss"):
            await oidc.verify_id_token(id_token("n-1", iss="https://login.example.test"), nonce="n-1")


async def test_discovery_of_an_issuer_with_a_trailing_slash(server: FakeCommerce) -> None:
    issuer = "https://login.example.test/"
    server.route("GET", "https://login.example.test/.well-known/openid-configuration", {"jwks_uri": JWKS_URL})
    async with oidc_client(server, issuer=issuer, jwks_url=None, clock=lambda: NOW) as oidc:
        await oidc.verify_id_token(id_token("n-1", iss=issuer), nonce="n-1")
    assert server.calls[0].url == "https://login.example.test/.well-known/openid-configuration"


# --- the signed-in user's session ---------------------------------------------------------------------


async def test_session_uses_the_refresh_grant_through_the_auth_flow(server: FakeCommerce) -> None:
    server.route("GET", PERSONAL, [])
    session = UserSession(oidc_client(server), SecretStr("refresh-0"))
    async with commerce_client(server, user=session) as client:
        await client.addresses()
        await client.addresses()
    (refresh,) = server.token_calls
    assert refresh.fields() == {
        "grant_type": "refresh_token",
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "refresh_token": "refresh-0",
    }
    assert [call.authorization for call in server.calls] == ["Bearer user:1", "Bearer user:1"]


async def test_rotated_refresh_token_is_handed_over_and_used_next(server: FakeCommerce) -> None:
    server.rotate = True
    server.route("GET", PERSONAL, [], reply(status=401), [])
    handed: list[str] = []
    session = UserSession(
        oidc_client(server),
        SecretStr("refresh-0"),
        on_refresh_token=lambda token: handed.append(token.get_secret_value()),
    )
    async with commerce_client(server, user=session) as client:
        await client.addresses()
        await client.addresses()  # 401: the access token is renewed with the rotated refresh token
    assert [call.fields()["refresh_token"] for call in server.token_calls] == ["refresh-0", "refresh-1"]
    assert handed == ["refresh-1", "refresh-2"]
    assert [call.authorization for call in server.calls] == [
        "Bearer user:1",
        "Bearer user:1",
        "Bearer user:2",
    ]


async def test_revoked_refresh_token_asks_the_user_to_sign_in_again(server: FakeCommerce) -> None:
    server.revoked = {"refresh-0"}
    server.route("GET", PERSONAL, [])
    handed: list[SecretStr] = []
    session = UserSession(oidc_client(server), SecretStr("refresh-0"), on_refresh_token=handed.append)
    async with commerce_client(server, user=session) as client:
        with pytest.raises(LoginFailed, match="sign in again") as caught:
            await client.addresses()
    assert "refresh-0" not in str(caught.value)
    assert server.calls == [] and handed == []


async def test_session_starts_with_the_sign_in_tokens(oidc: OidcClient, server: FakeCommerce) -> None:
    request = oidc.begin(REDIRECT, SCOPES)
    server.token_reply = answers(token_body(id_token(request.nonce)))
    tokens = await oidc.finish(request, redirect_for(request, code="the-code"))
    assert tokens.refresh_token is not None
    server.route("GET", PERSONAL, [])
    session = UserSession(oidc, tokens.refresh_token, tokens=tokens)
    async with commerce_client(server, user=session) as client:
        await client.addresses()
    assert [call.grant for call in server.token_calls] == ["authorization_code"]
    assert server.api_calls("GET", PERSONAL)[0].authorization == "Bearer user-access"


async def test_userinfo_with_the_user_token(server: FakeCommerce) -> None:
    server.route(
        "GET",
        USERINFO_URL,
        {"sub": "user-1", "email": "hans@example.test", "email_verified": "TRUE", "locale": "de"},
    )
    oidc = oidc_client(server)
    session = UserSession(oidc, SecretStr("refresh-0"))
    info = await oidc.userinfo(OAuth2ClientCredentialsAuth(session, ["openid"]))
    (call,) = server.api_calls("GET", USERINFO_URL)
    assert call.authorization == "Bearer user:1"
    assert info.email_verified is True and info.locale == "de"


def test_session_repr_hides_the_refresh_token(oidc: OidcClient) -> None:
    session = UserSession(oidc, SecretStr("refresh-secret-value"))
    assert "refresh-secret-value" not in repr(session)
    assert SECRET not in repr(oidc)
