"""The sandbox OAuth token endpoint: grants, refusals, scopes, expiry, counting and revocation."""

from __future__ import annotations

import httpx
import pytest

from sandbox.config import NEWSPAPER_SCOPES, OAuthClient, SandboxConfig
from sandbox.inprocess import SandboxTransport, token_url
from tests.sandbox.test_newspaper_support import SUBMISSION, grant_token, sandbox

pytestmark = pytest.mark.asyncio

NEWSPAPERS_SCOPE = "SENDINGS_NEWSPAPER_SUBMISSION_NEWSPAPERS"
SUMMARY = f"{SUBMISSION}/newspapers/4711/summary"


def form(**fields: str) -> dict[str, str]:
    base = {
        "client_id": "sandbox-client",
        "client_secret": "sandbox-secret",
        "scope": NEWSPAPERS_SCOPE,
        "grant_type": "client_credentials",
    }
    base.update(fields)
    return {key: value for key, value in base.items() if value != "<omit>"}


async def test_client_credentials_grant_answers_a_bearer_token() -> None:
    config, _ = sandbox(token_lifetime_s=900)
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        response = await http.post(
            token_url(), data=form(scope=f"{NEWSPAPERS_SCOPE} SENDINGS_NEWSPAPER_STATISTIC")
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 900
    assert set(body["scope"].split()) == {NEWSPAPERS_SCOPE, "SENDINGS_NEWSPAPER_STATISTIC"}
    assert len(body["access_token"]) >= 32
    assert config.tokens.lookup(body["access_token"], config.clock()) is not None


@pytest.mark.parametrize(
    ("fields", "status", "error"),
    [
        ({"client_id": "nobody"}, 401, "invalid_client"),
        ({"client_secret": "wrong"}, 401, "invalid_client"),
        ({"scope": "SENDINGS_NEWSPAPER_EVERYTHING"}, 400, "invalid_scope"),
        ({"scope": "<omit>"}, 400, "invalid_scope"),
        ({"grant_type": "password"}, 400, "unsupported_grant_type"),
        ({"grant_type": "<omit>"}, 400, "invalid_request"),
        ({"client_secret": "<omit>"}, 400, "invalid_request"),
    ],
)
async def test_token_refusals_follow_rfc6749(fields: dict[str, str], status: int, error: str) -> None:
    config, _ = sandbox()
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        response = await http.post(token_url(), data=form(**fields))
    assert response.status_code == status
    assert response.json()["error"] == error
    assert config.tokens.snapshot()["active"] == 0


async def test_scope_must_be_a_subset_of_the_registered_ones() -> None:
    clients = {"narrow": OAuthClient(secret="s", scopes=(NEWSPAPERS_SCOPE,))}
    config = SandboxConfig(oauth_clients=clients)
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        allowed = await http.post(token_url(), data=form(client_id="narrow", client_secret="s"))
        refused = await http.post(
            token_url(),
            data=form(
                client_id="narrow", client_secret="s", scope=f"{NEWSPAPERS_SCOPE} SENDINGS_NEWSPAPER_ADDRESS"
            ),
        )
    assert allowed.status_code == 200
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_scope"
    assert "SENDINGS_NEWSPAPER_ADDRESS" in refused.json()["error_description"]


@pytest.mark.misplaced_secret
async def test_client_secret_in_the_query_is_refused() -> None:
    async with httpx.AsyncClient(transport=SandboxTransport(SandboxConfig())) as http:
        response = await http.post(token_url(), params={"client_secret": "sandbox-secret"}, data=form())
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


async def test_token_requests_are_counted_per_client() -> None:
    config, _ = sandbox()
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        await grant_token(http)
        await grant_token(http)
        await http.post(token_url(), data=form(client_secret="wrong"))
        counts = (await http.get(token_url().replace("/OAuth/token", "/_sandbox/tokens"))).json()
    assert config.tokens.requests("sandbox-client") == 3
    assert config.tokens.issued("sandbox-client") == 2
    assert counts == {"requests": {"sandbox-client": 3}, "issued": {"sandbox-client": 2}, "active": 2}


async def test_token_expires_after_its_lifetime_by_the_sandbox_clock() -> None:
    config, clock = sandbox(token_lifetime_s=60)
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        headers = {"Authorization": f"Bearer {await grant_token(http)}"}
        assert (await http.get(SUMMARY, headers=headers)).status_code == 200
        clock.advance(59)
        assert (await http.get(SUMMARY, headers=headers)).status_code == 200
        clock.advance(1)
        expired = await http.get(SUMMARY, headers=headers)
    assert expired.status_code == 401
    assert expired.json()["error"] == "invalid_token"
    assert expired.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


async def test_revoke_invalidates_every_issued_token() -> None:
    config, _ = sandbox()
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        old = {"Authorization": f"Bearer {await grant_token(http)}"}
        revoked = await http.post(token_url().replace("/OAuth/token", "/_sandbox/revoke"))
        assert revoked.json() == {"revoked": 1}
        assert (await http.get(SUMMARY, headers=old)).status_code == 401
        new = {"Authorization": f"Bearer {await grant_token(http)}"}
        assert (await http.get(SUMMARY, headers=new)).status_code == 200


async def test_apps_built_from_one_config_share_the_tokens() -> None:
    config, _ = sandbox()
    async with (
        httpx.AsyncClient(transport=SandboxTransport(config)) as first,
        httpx.AsyncClient(transport=SandboxTransport(config)) as second,
    ):
        headers = {"Authorization": f"Bearer {await grant_token(first)}"}
        assert (await second.get(SUMMARY, headers=headers)).status_code == 200
    other, _ = sandbox()
    async with httpx.AsyncClient(transport=SandboxTransport(other)) as stranger:
        assert (await stranger.get(SUMMARY, headers=headers)).status_code == 401


async def test_token_without_the_scope_is_forbidden_with_a_challenge() -> None:
    config, _ = sandbox()
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        scopes = [scope for scope in NEWSPAPER_SCOPES if scope != NEWSPAPERS_SCOPE]
        headers = {"Authorization": f"Bearer {await grant_token(http, scopes)}"}
        response = await http.get(SUMMARY, headers=headers)
    assert response.status_code == 403
    assert response.json()["error"] == "insufficient_scope"
    assert f'scope="{NEWSPAPERS_SCOPE}"' in response.headers["www-authenticate"]
