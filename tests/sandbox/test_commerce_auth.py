"""The sandbox authorization server for the commerce API (spec §5): authorization code, refresh and OpenID
Connect — grants, refusals, rotation, ID tokens checked against the served JWKS, userinfo, fault knobs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from joserfc import jwt
from joserfc.errors import BadSignatureError, ExpiredTokenError, InvalidClaimError
from joserfc.jwk import KeySet
from joserfc.jws import extract_compact

from sandbox.auth import IssuedToken
from sandbox.config import COMMERCE_SCOPES, OAuthClient, SandboxConfig
from sandbox.inprocess import SANDBOX_ORIGIN, SandboxTransport
from tests.sandbox.test_newspaper_support import FakeClock

pytestmark = pytest.mark.asyncio

AUTH = f"{SANDBOX_ORIGIN}/auth"
AUTHORIZE = f"{AUTH}/OAuth/authorization"
TOKEN = f"{AUTH}/OAuth/token"
USERINFO = f"{AUTH}/userinfo"
JWKS = f"{AUTH}/.well-known/jwks.json"
CLIENT_ID = "sandbox-commerce-client"
SECRET = "sandbox-commerce-secret"
REDIRECT = "http://127.0.0.1:53682/callback"
HANS = "c0a80101-0000-4000-8000-000000000001"
ANNA = "c0a80101-0000-4000-8000-000000000002"
PERSONAL = ("openid", "profile", "email", "address", "phone", "DCAPI_ADDRESS_READ")
OTHER_CLIENT = OAuthClient(
    secret="other-secret", scopes=COMMERCE_SCOPES, redirect_uris=("http://127.0.0.1/callback",)
)


def commerce_sandbox(**settings: Any) -> tuple[SandboxConfig, FakeClock]:
    """A config on a fake clock, with a second commerce client ``other-client``."""
    clock = FakeClock()
    config = SandboxConfig(clock=clock, **settings)
    config.oauth_clients["other-client"] = OTHER_CLIENT
    return config, clock


@asynccontextmanager
async def auth_client(config: SandboxConfig) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        yield http


async def authorize(
    http: httpx.AsyncClient, scopes: tuple[str, ...] = PERSONAL, **overrides: str | None
) -> httpx.Response:
    """Send an authorization request (scope names joined by '+'); ``None`` leaves a parameter out."""
    params: dict[str, str | None] = {
        "client_id": CLIENT_ID,
        "scope": " ".join(scopes),
        "response_type": "code",
        "redirect_uri": REDIRECT,
        "nonce": "n-0S6_WzA2Mj",
        "state": "af0ifjsldkj",
        **overrides,
    }
    return await http.get(AUTHORIZE, params={k: v for k, v in params.items() if v is not None})


def redirected(response: httpx.Response) -> tuple[str, dict[str, str]]:
    """The Location of a 302 without its query, and its query parameters."""
    assert response.status_code == 302, response.text
    location = urlsplit(response.headers["location"])
    query = {key: values[0] for key, values in parse_qs(location.query).items()}
    return location._replace(query="").geturl(), query


async def code_for(
    http: httpx.AsyncClient, scopes: tuple[str, ...] = PERSONAL, **overrides: str | None
) -> str:
    _, query = redirected(await authorize(http, scopes, **overrides))
    return query["code"]


async def post_token(http: httpx.AsyncClient, **fields: str) -> httpx.Response:
    form = {"client_id": CLIENT_ID, "client_secret": SECRET, **fields}
    return await http.post(TOKEN, data=form)


async def exchange(http: httpx.AsyncClient, code: str, **fields: str) -> httpx.Response:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, **fields}
    return await post_token(http, **form)


async def refresh(http: httpx.AsyncClient, refresh_token: str, **fields: str) -> httpx.Response:
    return await post_token(http, grant_type="refresh_token", refresh_token=refresh_token, **fields)


async def signed_in(
    http: httpx.AsyncClient, scopes: tuple[str, ...] = PERSONAL, **overrides: str
) -> dict[str, Any]:
    """The token response of a whole authorization code flow."""
    response = await exchange(http, await code_for(http, scopes, **overrides))
    assert response.status_code == 200, response.text
    return dict(response.json())


async def verified(
    http: httpx.AsyncClient, id_token: str, clock: FakeClock, nonce: str | None = "n-0S6_WzA2Mj"
) -> dict[str, Any]:
    """The ID token's claims, checked as a client does (OIDC Core §3.1.3.7) against the served JWKS."""
    keys = KeySet.import_key_set((await http.get(JWKS)).json())
    token = jwt.decode(id_token, keys, algorithms=["RS256"])
    checks: dict[str, Any] = {
        "iss": {"essential": True, "value": AUTH},
        "aud": {"essential": True, "value": CLIENT_ID},
        "sub": {"essential": True},
        "exp": {"essential": True},
        "iat": {"essential": True},
    }
    if nonce is not None:
        checks["nonce"] = {"essential": True, "value": nonce}
    jwt.JWTClaimsRegistry(now=int(clock()), **checks).validate(token.claims)
    assert token.header["kid"] == keys.keys[0].kid
    return dict(token.claims)


def issued(config: SandboxConfig, access_token: str, clock: FakeClock) -> IssuedToken:
    """The access token as the sandbox remembers it (it must be valid)."""
    token = config.tokens.lookup(access_token, clock())
    assert token is not None
    return token


def error_of(response: httpx.Response, status: int = 400) -> str:
    assert response.status_code == status, response.text
    return str(response.json()["error"])


# --- discovery and keys ---


async def test_discovery_names_the_endpoints_under_the_auth_mount() -> None:
    config, _ = commerce_sandbox()
    async with auth_client(config) as http:
        document = (await http.get(f"{AUTH}/.well-known/openid-configuration")).json()
    assert document["issuer"] == AUTH
    assert document["authorization_endpoint"] == AUTHORIZE
    assert document["token_endpoint"] == TOKEN
    assert document["userinfo_endpoint"] == USERINFO
    assert document["jwks_uri"] == JWKS
    assert document["id_token_signing_alg_values_supported"] == ["RS256"]
    assert {"openid", "DCAPI_ADDRESS_READ"} <= set(document["scopes_supported"])


async def test_the_issuer_follows_the_request_host_unless_configured() -> None:
    config, clock = commerce_sandbox()
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        seen = (await http.get("http://auth.example:8443/auth/.well-known/openid-configuration")).json()
        assert seen["issuer"] == "http://auth.example:8443/auth"
        config.commerce_issuer = "https://login.example.ch/auth"
        configured = (await http.get(f"{AUTH}/.well-known/openid-configuration")).json()
        claims = jwt.decode(
            (await signed_in(http))["id_token"], KeySet.import_key_set((await http.get(JWKS)).json())
        )
    assert configured["issuer"] == "https://login.example.ch/auth"
    assert configured["token_endpoint"] == TOKEN
    assert claims.claims["iss"] == "https://login.example.ch/auth"


async def test_jwks_serves_the_public_key_only() -> None:
    config, _ = commerce_sandbox()
    async with auth_client(config) as http:
        (key,) = (await http.get(JWKS)).json()["keys"]
    assert key["kty"] == "RSA"
    assert key["alg"] == "RS256"
    assert key["use"] == "sig"
    assert key["kid"]
    assert not {"d", "p", "q", "dp", "dq", "qi"} & set(key)


# --- authorization endpoint ---


async def test_authorization_redirects_with_a_code_and_the_state() -> None:
    config, _ = commerce_sandbox()
    async with auth_client(config) as http:
        response = await authorize(http)
    assert "scope=openid+profile+email+address+phone+DCAPI_ADDRESS_READ" in str(response.request.url)
    location, query = redirected(response)
    assert location == REDIRECT
    assert set(query) == {"code", "state"}
    assert query["state"] == "af0ifjsldkj"
    assert len(query["code"]) >= 32


@pytest.mark.parametrize(
    ("registered", "given"),
    [
        ("http://127.0.0.1/callback", "http://127.0.0.1:49152/callback"),
        ("http://127.0.0.1/callback", "http://127.0.0.1/callback"),
        ("http://localhost/callback", "http://localhost:8080/callback"),
        ("http://[::1]/callback", "http://[::1]:49152/callback"),
        ("http://127.0.0.1:9000/callback", "http://127.0.0.1:9001/callback"),
        ("https://shop.example.ch/oauth/done", "https://shop.example.ch/oauth/done"),
    ],
)
async def test_registered_redirect_uris_match_loopback_on_any_port(registered: str, given: str) -> None:
    config, _ = commerce_sandbox()
    config.oauth_clients[CLIENT_ID] = OAuthClient(
        secret=SECRET, scopes=COMMERCE_SCOPES, redirect_uris=(registered,)
    )
    async with auth_client(config) as http:
        location, query = redirected(await authorize(http, redirect_uri=given))
    assert location == given
    assert "code" in query


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"client_id": "nobody"}, "invalid_client"),
        ({"client_id": None}, "invalid_client"),
        ({"redirect_uri": None}, "invalid_request"),
        ({"redirect_uri": "http://127.0.0.1:53682/elsewhere"}, "invalid_request"),
        ({"redirect_uri": "https://127.0.0.1:53682/callback"}, "invalid_request"),
        ({"redirect_uri": "http://127.0.0.2:53682/callback"}, "invalid_request"),
        ({"redirect_uri": "http://127.0.0.1:53682/callback?next=/"}, "invalid_request"),
        ({"redirect_uri": "http://127.0.0.1:port/callback"}, "invalid_request"),
        ({"redirect_uri": "https://attacker.example/callback"}, "invalid_request"),
        ({"client_id": "sandbox-client"}, "invalid_request"),
    ],
)
async def test_unknown_client_or_redirect_uri_is_a_400_never_a_redirect(
    overrides: dict[str, str | None], error: str
) -> None:
    config, _ = commerce_sandbox()
    async with auth_client(config) as http:
        response = await authorize(http, PERSONAL, **overrides)
    assert "location" not in response.headers
    assert error_of(response) == error
    assert response.json()["error_description"]


@pytest.mark.parametrize(
    ("scopes", "overrides", "error"),
    [
        (("openid", "SENDINGS_NEWSPAPER_ADDRESS"), {}, "invalid_scope"),
        ((), {}, "invalid_scope"),
        (PERSONAL, {"response_type": "token"}, "unsupported_response_type"),
        (PERSONAL, {"response_type": "code id_token"}, "unsupported_response_type"),
        (PERSONAL, {"response_type": None}, "invalid_request"),
        (PERSONAL, {"login_hint": "nobody"}, "access_denied"),
    ],
)
async def test_authorization_refusals_redirect_with_the_error_and_state(
    scopes: tuple[str, ...], overrides: dict[str, str | None], error: str
) -> None:
    config, _ = commerce_sandbox()
    async with auth_client(config) as http:
        location, query = redirected(await authorize(http, scopes, **overrides))
    assert location == REDIRECT
    assert query["error"] == error
    assert query["state"] == "af0ifjsldkj"
    assert "code" not in query


async def test_scopes_joined_by_a_literal_plus_sign_are_one_unknown_scope() -> None:
    config, _ = commerce_sandbox()
    async with auth_client(config) as http:
        response = await http.get(
            f"{AUTHORIZE}?client_id={CLIENT_ID}&scope=openid%2BDCAPI_ADDRESS_READ&response_type=code"
            f"&redirect_uri={REDIRECT}&state=s1&nonce=n1"
        )
    assert redirected(response)[1]["error"] == "invalid_scope"


@pytest.mark.parametrize(
    ("hint", "subject"),
    [(None, HANS), (HANS, HANS), (ANNA, ANNA), ("anna.beispiel", ANNA), ("hans.muster", HANS)],
)
async def test_login_hint_chooses_the_user_by_subject_or_username(hint: str | None, subject: str) -> None:
    config, clock = commerce_sandbox()
    async with auth_client(config) as http:
        body = await signed_in(http, login_hint=hint) if hint else await signed_in(http)
        claims = await verified(http, body["id_token"], clock)
    assert claims["sub"] == subject
    assert issued(config, body["access_token"], clock).subject == subject


# --- authorization code grant ---


async def test_code_grant_answers_tokens_for_the_user_and_a_verifiable_id_token() -> None:
    config, clock = commerce_sandbox(token_lifetime_s=900)
    async with auth_client(config) as http:
        signed_in_at = clock()
        code = await code_for(http)
        clock.advance(5)
        response = await exchange(http, code)
        body = response.json()
        claims = await verified(http, body["id_token"], clock)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json;charset=UTF-8"
    assert response.headers["cache-control"] == "no-store"
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 900
    assert set(body["scope"].split()) == set(PERSONAL)
    assert body["refresh_token"] and body["refresh_token"] != body["access_token"]
    issued = config.tokens.lookup(body["access_token"], clock())
    assert issued is not None
    assert issued.subject == HANS
    assert issued.client_id == CLIENT_ID
    assert issued.scopes == frozenset(PERSONAL)
    assert claims["sub"] == HANS
    assert claims["auth_time"] == int(signed_in_at)
    assert claims["iat"] == int(clock())
    assert claims["exp"] == int(clock()) + 900


async def test_code_grant_without_openid_gives_no_id_token() -> None:
    config, clock = commerce_sandbox()
    async with auth_client(config) as http:
        body = await signed_in(http, ("DCAPI_ADDRESS_READ",))
    assert "id_token" not in body
    assert body["refresh_token"]
    assert issued(config, body["access_token"], clock).subject == HANS


async def test_a_code_is_single_use_and_its_replay_revokes_the_refresh_token() -> None:
    config, _ = commerce_sandbox()
    async with auth_client(config) as http:
        code = await code_for(http)
        first = (await exchange(http, code)).json()
        replay = await exchange(http, code)
        after = await refresh(http, first["refresh_token"])
    assert error_of(replay) == "invalid_grant"
    assert error_of(after) == "invalid_grant"
    assert "revoked" in after.json()["error_description"]


async def test_a_code_expires_after_sixty_seconds_of_the_sandbox_clock() -> None:
    config, clock = commerce_sandbox()
    async with auth_client(config) as http:
        in_time = await code_for(http)
        clock.advance(59)
        assert (await exchange(http, in_time)).status_code == 200
        late = await code_for(http)
        clock.advance(60)
        response = await exchange(http, late)
    assert error_of(response) == "invalid_grant"
    assert "expired" in response.json()["error_description"]


@pytest.mark.parametrize(
    ("fields", "status", "error"),
    [
        ({"client_id": "other-client", "client_secret": "other-secret"}, 400, "invalid_grant"),
        ({"redirect_uri": "http://127.0.0.1:53683/callback"}, 400, "invalid_grant"),
        ({"redirect_uri": "http://localhost:53682/callback"}, 400, "invalid_grant"),
        ({"code": "made-up"}, 400, "invalid_grant"),
        ({"code": ""}, 400, "invalid_request"),
        ({"redirect_uri": ""}, 400, "invalid_request"),
        ({"client_secret": "wrong"}, 401, "invalid_client"),
        ({"client_id": "nobody"}, 401, "invalid_client"),
    ],
)
async def test_code_grant_refusals(fields: dict[str, str], status: int, error: str) -> None:
    config, _ = commerce_sandbox()
    async with auth_client(config) as http:
        code = await code_for(http)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, **fields}
        response = await post_token(http, **form)
    assert error_of(response, status) == error
    assert config.tokens.snapshot()["active"] == 0


async def test_a_refused_redemption_consumes_the_code() -> None:
    config, _ = commerce_sandbox()
    async with auth_client(config) as http:
        code = await code_for(http)
        wrong = await exchange(http, code, redirect_uri="http://127.0.0.1:1/callback")
        right = await exchange(http, code)
    assert error_of(wrong) == "invalid_grant"
    assert error_of(right) == "invalid_grant"


# --- refresh grant ---


async def test_refresh_renews_the_access_token_without_nonce_and_rotates() -> None:
    config, clock = commerce_sandbox(token_lifetime_s=300)
    async with auth_client(config) as http:
        first = await signed_in(http)
        original = await verified(http, first["id_token"], clock)
        clock.advance(400)
        assert config.tokens.lookup(first["access_token"], clock()) is None
        response = await refresh(http, first["refresh_token"])
        renewed = response.json()
        claims = await verified(http, renewed["id_token"], clock, nonce=None)
        reused = await refresh(http, first["refresh_token"])
        again = await refresh(http, renewed["refresh_token"])
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json;charset=UTF-8"
    assert renewed["token_type"] == "Bearer"
    assert renewed["expires_in"] == 300
    assert renewed["refresh_token"] != first["refresh_token"]
    assert issued(config, renewed["access_token"], clock).subject == HANS
    assert "nonce" not in claims
    assert claims["sub"] == original["sub"]
    assert claims["auth_time"] == original["auth_time"]
    assert claims["iat"] == original["iat"] + 400
    assert error_of(reused) == "invalid_grant"
    assert again.status_code == 200


async def test_without_rotation_the_refresh_token_stays_valid() -> None:
    config, _ = commerce_sandbox(commerce_rotate_refresh_tokens=False)
    async with auth_client(config) as http:
        first = await signed_in(http)
        one = await refresh(http, first["refresh_token"])
        two = await refresh(http, first["refresh_token"])
    assert one.status_code == two.status_code == 200
    assert one.json()["refresh_token"] == two.json()["refresh_token"] == first["refresh_token"]
    assert one.json()["access_token"] != two.json()["access_token"]


async def test_refresh_may_narrow_the_scopes_but_not_widen_them() -> None:
    config, clock = commerce_sandbox()
    async with auth_client(config) as http:
        first = await signed_in(http, ("openid", "email", "DCAPI_ADDRESS_READ"))
        narrowed = (await refresh(http, first["refresh_token"], scope="DCAPI_ADDRESS_READ")).json()
        # The rotated token keeps the original grant: openid may come back.
        full = await refresh(http, narrowed["refresh_token"], scope="openid email")
        wider = await refresh(http, full.json()["refresh_token"], scope="openid DCAPI_DELIVERY")
    assert narrowed["scope"] == "DCAPI_ADDRESS_READ"
    assert "id_token" not in narrowed
    assert issued(config, narrowed["access_token"], clock).scopes == {"DCAPI_ADDRESS_READ"}
    assert full.status_code == 200
    assert "id_token" in full.json()
    assert error_of(wider) == "invalid_scope"
    assert "DCAPI_DELIVERY" in wider.json()["error_description"]


@pytest.mark.parametrize("case", ["unknown", "other client", "expired", "revoked", "missing", "bad secret"])
async def test_refresh_refusals(case: str) -> None:
    config, clock = commerce_sandbox(commerce_refresh_token_lifetime_s=7200)
    async with auth_client(config) as http:
        token = (await signed_in(http))["refresh_token"]
        fields: dict[str, str] = {}
        expected = (400, "invalid_grant")
        if case == "unknown":
            token = "made-up"
        elif case == "other client":
            fields = {"client_id": "other-client", "client_secret": "other-secret"}
        elif case == "expired":
            clock.advance(7200)
        elif case == "revoked":
            revoked = await http.post(f"{AUTH}/_sandbox/revoke-refresh-tokens")
            assert revoked.json() == {"revoked": 1}
        elif case == "missing":
            token, expected = "", (400, "invalid_request")
        else:
            fields, expected = {"client_secret": "wrong"}, (401, "invalid_client")
        response = await refresh(http, token, **fields)
    assert error_of(response, expected[0]) == expected[1]


async def test_codes_and_refresh_tokens_work_across_processes_sharing_the_state(tmp_path: Path) -> None:
    clock = FakeClock()
    one = SandboxConfig(clock=clock, state_dir=tmp_path)
    two = SandboxConfig(clock=clock, state_dir=tmp_path)
    async with auth_client(one) as first, auth_client(two) as second:
        code = await code_for(first)
        tokens = (await exchange(second, code)).json()
        renewed = await refresh(first, tokens["refresh_token"])
        renewed_again = await refresh(second, renewed.json()["refresh_token"])
        stale = await refresh(first, tokens["refresh_token"])
        # Both sign with the key kept in the state: a token from either verifies against either's JWKS.
        assert (await first.get(JWKS)).json() == (await second.get(JWKS)).json()
        await verified(first, tokens["id_token"], clock)
        await verified(second, renewed.json()["id_token"], clock, nonce=None)
        # A replayed code is noticed by the other process, and revokes the refresh token it led to there.
        replayed = await exchange(first, code)
        revoked = await refresh(second, renewed_again.json()["refresh_token"])
    assert renewed.status_code == 200
    assert renewed_again.status_code == 200
    assert issued(one, renewed.json()["access_token"], clock).subject == HANS
    assert error_of(stale) == "invalid_grant"
    assert error_of(replayed) == "invalid_grant"
    assert error_of(revoked) == "invalid_grant"


@pytest.mark.misplaced_secret
@pytest.mark.parametrize("grant_type", ["authorization_code", "refresh_token"])
async def test_client_secret_in_the_query_is_refused_for_user_grants(grant_type: str) -> None:
    config, _ = commerce_sandbox()
    async with auth_client(config) as http:
        first = await signed_in(http)
        form = {
            "grant_type": grant_type,
            "client_id": CLIENT_ID,
            "code": await code_for(http),
            "redirect_uri": REDIRECT,
            "refresh_token": first["refresh_token"],
        }
        refused = await http.post(TOKEN, params={"client_secret": SECRET}, data=form)
        # Nothing was spent by the refused request.
        accepted = await http.post(TOKEN, data={**form, "client_secret": SECRET})
    assert error_of(refused) == "invalid_request"
    assert "body" in refused.json()["error_description"]
    assert accepted.status_code == 200


async def test_client_credentials_never_yield_a_refresh_token_or_a_subject() -> None:
    config, clock = commerce_sandbox()
    async with auth_client(config) as http:
        response = await post_token(http, grant_type="client_credentials", scope="openid DCAPI_ADDRESS_READ")
        body = response.json()
        userinfo = await http.get(USERINFO, headers={"Authorization": f"Bearer {body['access_token']}"})
    assert response.status_code == 200
    assert "refresh_token" not in body
    assert "id_token" not in body
    assert issued(config, body["access_token"], clock).subject is None
    assert error_of(userinfo, 403) == "insufficient_scope"


# --- ID token claims and userinfo ---

PROFILE = {"name", "given_name", "family_name", "preferred_username", "gender", "locale", "updated_at"}
REGISTERED = {"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce"}


@pytest.mark.parametrize(
    ("scopes", "login_hint", "claims"),
    [
        (("openid",), HANS, set()),
        (("openid", "profile"), HANS, PROFILE),
        (("openid", "email"), HANS, {"email", "email_verified"}),
        (("openid", "phone"), HANS, {"phone_number", "phone_number_verified"}),
        (("openid", "address"), HANS, {"address"}),
        (
            PERSONAL,
            HANS,
            PROFILE | {"email", "email_verified", "phone_number", "phone_number_verified", "address"},
        ),
        # Anna has no phone and no postal address in her profile: those claims are left out.
        (PERSONAL, ANNA, PROFILE | {"email", "email_verified"}),
    ],
)
async def test_id_token_and_userinfo_carry_the_claims_of_the_granted_scopes(
    scopes: tuple[str, ...], login_hint: str, claims: set[str]
) -> None:
    config, clock = commerce_sandbox()
    async with auth_client(config) as http:
        body = await signed_in(http, scopes, login_hint=login_hint)
        id_claims = await verified(http, body["id_token"], clock)
        userinfo = await http.get(USERINFO, headers={"Authorization": f"Bearer {body['access_token']}"})
    user = config.commerce_users[login_hint]
    assert set(id_claims) == REGISTERED | {"sub"} | claims
    assert userinfo.status_code == 200
    assert userinfo.json() == {"sub": login_hint, **{name: user.claims[name] for name in claims}}
    for name in claims:
        assert id_claims[name] == user.claims[name]


async def test_userinfo_refuses_tokens_without_openid_or_without_a_user() -> None:
    config, clock = commerce_sandbox(token_lifetime_s=60)
    async with auth_client(config) as http:
        no_openid = (await signed_in(http, ("DCAPI_ADDRESS_READ", "profile")))["access_token"]
        client_token = (await post_token(http, grant_type="client_credentials", scope="openid")).json()
        good = (await signed_in(http, ("openid",)))["access_token"]

        async def userinfo(token: str | None) -> httpx.Response:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            return await http.get(USERINFO, headers=headers)

        without_openid = await userinfo(no_openid)
        without_user = await userinfo(client_token["access_token"])
        unknown = await userinfo("made-up")
        missing = await userinfo(None)
        assert (await userinfo(good)).status_code == 200
        clock.advance(60)
        expired = await userinfo(good)
    assert error_of(without_openid, 403) == "insufficient_scope"
    assert error_of(without_user, 403) == "insufficient_scope"
    for response in (unknown, missing, expired):
        assert error_of(response, 401) == "invalid_token"
        assert response.headers["www-authenticate"].startswith("Bearer")


# --- fault knobs for the client's checks ---


async def test_the_nonce_fault_sends_another_nonce() -> None:
    config, clock = commerce_sandbox(commerce_id_token_fault="nonce")
    async with auth_client(config) as http:
        body = await signed_in(http)
        with pytest.raises(InvalidClaimError, match="nonce"):
            await verified(http, body["id_token"], clock)
        renewed = (await refresh(http, body["refresh_token"])).json()
        claims = await verified(http, renewed["id_token"], clock, nonce=None)
    assert claims["nonce"] != "n-0S6_WzA2Mj"


async def test_the_expired_fault_puts_exp_in_the_past() -> None:
    config, clock = commerce_sandbox(commerce_id_token_fault="expired")
    async with auth_client(config) as http:
        body = await signed_in(http)
        with pytest.raises(ExpiredTokenError):
            await verified(http, body["id_token"], clock)
        keys = KeySet.import_key_set((await http.get(JWKS)).json())
    assert jwt.decode(body["id_token"], keys).claims["exp"] <= clock() - 600


async def test_the_signature_fault_signs_with_a_key_outside_the_jwks_under_its_kid() -> None:
    config, clock = commerce_sandbox(commerce_id_token_fault="signature")
    async with auth_client(config) as http:
        body = await signed_in(http)
        with pytest.raises(BadSignatureError):
            await verified(http, body["id_token"], clock)
        (key,) = (await http.get(JWKS)).json()["keys"]
    header = extract_compact(body["id_token"].encode()).protected
    assert header == {"alg": "RS256", "kid": key["kid"], "typ": "JWT"}


@pytest.mark.parametrize(("fault", "claim"), [("issuer", "iss"), ("audience", "aud")])
async def test_the_issuer_and_audience_faults_name_someone_else(fault: str, claim: str) -> None:
    config, clock = commerce_sandbox(commerce_id_token_fault=fault)
    async with auth_client(config) as http:
        body = await signed_in(http)
        with pytest.raises(InvalidClaimError, match=claim):
            await verified(http, body["id_token"], clock)


async def test_the_state_fault_redirects_with_another_state() -> None:
    config, _ = commerce_sandbox(commerce_id_token_fault="state")
    async with auth_client(config) as http:
        _, query = redirected(await authorize(http))
    assert query["code"]
    assert query["state"] != "af0ifjsldkj"


async def test_the_fault_is_set_and_cleared_through_the_admin_endpoint() -> None:
    config, clock = commerce_sandbox()
    async with auth_client(config) as http:
        knob = f"{AUTH}/_sandbox/id-token-fault"
        assert (await http.get(knob)).json() == {"fault": None}
        assert (await http.put(knob, json={"fault": "audience"})).json() == {"fault": "audience"}
        assert config.commerce_id_token_fault == "audience"
        with pytest.raises(InvalidClaimError):
            await verified(http, (await signed_in(http))["id_token"], clock)
        assert (await http.put(knob, json={"fault": "everything"})).status_code == 422
        assert (await http.put(knob, json={"fault": None})).json() == {"fault": None}
        await verified(http, (await signed_in(http))["id_token"], clock)
    assert config.commerce_id_token_fault is None
