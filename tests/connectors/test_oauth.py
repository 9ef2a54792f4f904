"""OAuth 2.0 client credentials: the async flow stepped by hand, then through httpx.MockTransport."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs

import httpx
import pytest
from pydantic import SecretStr

from connectors.errors import AuthFailed
from connectors.oauth import ClientCredentials, OAuth2ClientCredentialsAuth, requested_scopes

TOKEN_URL = "https://auth.example.test/OAuth/token"
API_URL = "https://api.example.test/resource"
SECRET = "s3cr3t-value"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_credentials(clock: FakeClock | None = None, leeway: float = 30.0) -> ClientCredentials:
    return ClientCredentials(
        TOKEN_URL, "client-1", SecretStr(SECRET), leeway=leeway, clock=clock or FakeClock()
    )


def token_response(request: httpx.Request, token: str = "tok-1", expires_in: int = 300) -> httpx.Response:
    return httpx.Response(
        200, json={"access_token": token, "token_type": "Bearer", "expires_in": expires_in}, request=request
    )


def form_of(request: httpx.Request) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(request.content.decode()).items()}


async def test_flow_fetches_token_with_secret_in_form_body_then_sends_bearer() -> None:
    auth = OAuth2ClientCredentialsAuth(make_credentials(), ["SCOPE_B", "SCOPE_A"])
    request = httpx.Request("GET", API_URL)
    flow = auth.async_auth_flow(request)

    token_request = await anext(flow)
    assert token_request.method == "POST"
    assert str(token_request.url) == TOKEN_URL
    assert token_request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert form_of(token_request) == {
        "grant_type": "client_credentials",
        "client_id": "client-1",
        "client_secret": SECRET,
        "scope": "SCOPE_A SCOPE_B",
    }
    assert SECRET not in str(token_request.url)
    assert all(SECRET not in value for value in token_request.headers.values())

    api_request = await flow.asend(token_response(token_request))
    assert api_request is request
    assert api_request.headers["Authorization"] == "Bearer tok-1"
    with pytest.raises(StopAsyncIteration):
        await flow.asend(httpx.Response(200, request=api_request))


async def test_token_is_reused_for_the_same_scope_set_and_separate_per_scope_set() -> None:
    credentials = make_credentials()
    first = OAuth2ClientCredentialsAuth(credentials, ["A"])
    flow = first.async_auth_flow(httpx.Request("GET", API_URL))
    await flow.asend(token_response(await anext(flow), "tok-a"))

    again = OAuth2ClientCredentialsAuth(credentials, {"A"}).async_auth_flow(httpx.Request("GET", API_URL))
    request = await anext(again)
    assert str(request.url) == API_URL
    assert request.headers["Authorization"] == "Bearer tok-a"

    other = OAuth2ClientCredentialsAuth(credentials, ["A", "B"]).async_auth_flow(
        httpx.Request("GET", API_URL)
    )
    token_request = await anext(other)
    assert str(token_request.url) == TOKEN_URL
    assert form_of(token_request)["scope"] == "A B"


async def test_token_is_renewed_once_inside_the_leeway_before_expiry() -> None:
    clock = FakeClock()
    credentials = make_credentials(clock, leeway=30)
    auth = OAuth2ClientCredentialsAuth(credentials, ["A"])
    flow = auth.async_auth_flow(httpx.Request("GET", API_URL))
    await flow.asend(token_response(await anext(flow), "tok-1", expires_in=300))

    clock.now += 269  # 31 s before expiry: still used
    still_valid = await anext(auth.async_auth_flow(httpx.Request("GET", API_URL)))
    assert still_valid.headers["Authorization"] == "Bearer tok-1"

    clock.now += 2  # 29 s before expiry: inside the leeway
    flow = auth.async_auth_flow(httpx.Request("GET", API_URL))
    assert str((await anext(flow)).url) == TOKEN_URL


async def test_401_renews_the_token_once_then_gives_up() -> None:
    credentials = make_credentials()
    auth = OAuth2ClientCredentialsAuth(credentials, ["A"])
    request = httpx.Request("GET", API_URL)
    flow = auth.async_auth_flow(request)
    api_request = await flow.asend(token_response(await anext(flow), "stale"))

    renewal = await flow.asend(httpx.Response(401, request=api_request))
    assert str(renewal.url) == TOKEN_URL
    retried = await flow.asend(token_response(renewal, "fresh"))
    assert retried.headers["Authorization"] == "Bearer fresh"
    with pytest.raises(StopAsyncIteration):
        await flow.asend(httpx.Response(401, request=retried))
    assert credentials.valid_token(frozenset({"A"})).value.get_secret_value() == "fresh"


async def test_renew_on_403_drops_the_token_fetches_one_and_sends_the_request_once_more() -> None:
    credentials = make_credentials()
    auth = OAuth2ClientCredentialsAuth(credentials, ["A"], renew_on={401, 403})
    request = httpx.Request("POST", API_URL, json={"user": "Hans"})
    flow = auth.async_auth_flow(request)
    api_request = await flow.asend(token_response(await anext(flow), "stale"))
    assert api_request.headers["Authorization"] == "Bearer stale"

    renewal = await flow.asend(httpx.Response(403, request=api_request))
    assert str(renewal.url) == TOKEN_URL
    assert credentials.valid_token(frozenset({"A"})) is None  # the refused token is gone at once
    retried = await flow.asend(token_response(renewal, "fresh"))
    assert retried is request and retried.method == "POST" and retried.content == request.content
    assert retried.headers["Authorization"] == "Bearer fresh"
    with pytest.raises(StopAsyncIteration):
        await flow.asend(httpx.Response(200, request=retried))
    assert credentials.valid_token(frozenset({"A"})).value.get_secret_value() == "fresh"


async def test_renew_on_403_gives_up_after_the_second_refusal() -> None:
    auth = OAuth2ClientCredentialsAuth(make_credentials(), ["A"], renew_on={401, 403})
    flow = auth.async_auth_flow(httpx.Request("GET", API_URL))
    api_request = await flow.asend(token_response(await anext(flow), "stale"))
    renewal = await flow.asend(httpx.Response(403, request=api_request))
    retried = await flow.asend(token_response(renewal, "fresh"))
    with pytest.raises(StopAsyncIteration):
        await flow.asend(httpx.Response(403, request=retried))


async def test_by_default_a_403_is_the_answer_and_the_token_is_kept() -> None:
    credentials = make_credentials()
    auth = OAuth2ClientCredentialsAuth(credentials, ["A"])
    flow = auth.async_auth_flow(httpx.Request("GET", API_URL))
    api_request = await flow.asend(token_response(await anext(flow), "tok-1"))
    with pytest.raises(StopAsyncIteration):
        await flow.asend(httpx.Response(403, request=api_request))
    assert credentials.valid_token(frozenset({"A"})).value.get_secret_value() == "tok-1"


async def test_the_request_carries_its_scopes_and_no_token_in_its_extensions() -> None:
    auth = OAuth2ClientCredentialsAuth(make_credentials(), ["SCOPE_B", "SCOPE_A"])
    request = httpx.Request("GET", API_URL)
    assert requested_scopes(request) == ()
    flow = auth.async_auth_flow(request)
    api_request = await flow.asend(token_response(await anext(flow), "tok-7"))
    assert requested_scopes(api_request) == ("SCOPE_A", "SCOPE_B")
    assert "tok-7" not in repr(api_request.extensions)


@pytest.mark.parametrize("status", [400, 401, 500])
async def test_token_endpoint_refusal_is_auth_failed_without_the_secret(status: int) -> None:
    auth = OAuth2ClientCredentialsAuth(make_credentials(), ["A"])
    flow = auth.async_auth_flow(httpx.Request("GET", API_URL))
    token_request = await anext(flow)
    echo = httpx.Response(
        status,
        text=f"bad client_secret={SECRET}; the secret {SECRET} is not ours; id_token: eyJhbGci.eyJzdWIi.c2ln",
        request=token_request,
    )
    with pytest.raises(AuthFailed) as caught:
        await flow.asend(echo)
    text = str(caught.value)
    assert SECRET not in text and "eyJ" not in text
    assert "client_secret=[redacted]" in text and "the secret [redacted] is not ours" in text
    assert caught.value.status_code == status
    assert caught.value.retryable is (status >= 500)


@pytest.mark.parametrize(
    "body",
    [{"token_type": "Bearer"}, {"access_token": "x", "token_type": "mac"}, ["not", "an", "object"]],
)
async def test_malformed_token_response_is_auth_failed(body: object) -> None:
    flow = OAuth2ClientCredentialsAuth(make_credentials(), ["A"]).async_auth_flow(
        httpx.Request("GET", API_URL)
    )
    token_request = await anext(flow)
    with pytest.raises(AuthFailed):
        await flow.asend(httpx.Response(200, json=body, request=token_request))


async def test_repr_hides_the_secret() -> None:
    credentials = make_credentials()
    auth = OAuth2ClientCredentialsAuth(credentials, ["A"])
    assert SECRET not in repr(credentials)
    assert SECRET not in repr(auth)
    assert "client-1" in repr(auth)
    flow = auth.async_auth_flow(httpx.Request("GET", API_URL))
    await flow.asend(token_response(await anext(flow), "tok-9"))
    assert "tok-9" not in repr(credentials.valid_token(frozenset({"A"})))


def test_empty_scope_set_is_refused() -> None:
    with pytest.raises(ValueError):
        OAuth2ClientCredentialsAuth(make_credentials(), [])


class TokenServer:
    """A MockTransport handler: token endpoint plus an API that accepts only the current token."""

    def __init__(self, delay: float = 0.0) -> None:
        self.token_requests: list[dict[str, str]] = []
        self.api_requests = 0
        self.valid = "tok-1"
        self.delay = delay

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        if str(request.url) == TOKEN_URL:
            await asyncio.sleep(self.delay)
            self.token_requests.append(form_of(request))
            self.valid = f"tok-{len(self.token_requests)}"
            return token_response(request, self.valid)
        self.api_requests += 1
        if request.headers.get("Authorization") != f"Bearer {self.valid}":
            return httpx.Response(401, request=request)
        return httpx.Response(200, json={"ok": True}, request=request)


@pytest.mark.asyncio
async def test_fifty_concurrent_calls_share_one_token_request() -> None:
    server = TokenServer(delay=0.01)
    auth = OAuth2ClientCredentialsAuth(make_credentials(), ["A"])
    async with httpx.AsyncClient(transport=httpx.MockTransport(server), auth=auth) as client:
        responses = await asyncio.gather(*(client.get(API_URL) for _ in range(50)))
    assert [response.status_code for response in responses] == [200] * 50
    assert len(server.token_requests) == 1
    assert server.api_requests == 50


@pytest.mark.asyncio
async def test_concurrent_401s_cause_a_single_renewal() -> None:
    server = TokenServer(delay=0.01)
    auth = OAuth2ClientCredentialsAuth(make_credentials(), ["A"])
    async with httpx.AsyncClient(transport=httpx.MockTransport(server), auth=auth) as client:
        assert (await client.get(API_URL)).status_code == 200
        server.valid = "revoked"  # the service forgets tok-1
        responses = await asyncio.gather(*(client.get(API_URL) for _ in range(20)))
    assert [response.status_code for response in responses] == [200] * 20
    assert len(server.token_requests) == 2


@pytest.mark.asyncio
async def test_async_flow_gives_up_after_one_renewal() -> None:
    async def always_401(request: httpx.Request) -> httpx.Response:
        if str(request.url) == TOKEN_URL:
            return token_response(request)
        return httpx.Response(401, request=request)

    calls: list[str] = []

    async def recording(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        return await always_401(request)

    auth = OAuth2ClientCredentialsAuth(make_credentials(), ["A"])
    async with httpx.AsyncClient(transport=httpx.MockTransport(recording), auth=auth) as client:
        response = await client.get(API_URL)
    assert response.status_code == 401
    assert calls == ["/OAuth/token", "/resource", "/OAuth/token", "/resource"]


@pytest.mark.asyncio
async def test_async_token_error_raises_auth_failed_and_releases_the_lock() -> None:
    attempts: list[int] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) == TOKEN_URL:
            attempts.append(1)
            if len(attempts) == 1:
                return httpx.Response(401, json={"error": "invalid_client"}, request=request)
            return token_response(request)
        return httpx.Response(200, request=request)

    auth = OAuth2ClientCredentialsAuth(make_credentials(), ["A"])
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), auth=auth) as client:
        with pytest.raises(AuthFailed) as caught:
            await client.get(API_URL)
        assert SECRET not in str(caught.value)
        assert (await asyncio.wait_for(client.get(API_URL), timeout=2)).status_code == 200


def test_locks_are_per_event_loop() -> None:
    credentials = make_credentials()
    auth = OAuth2ClientCredentialsAuth(credentials, ["A"])

    async def one_call() -> int:
        async def handler(request: httpx.Request) -> httpx.Response:
            if str(request.url) == TOKEN_URL:
                await asyncio.sleep(0)
                return token_response(request, expires_in=0)  # never cached: every call fetches
            return httpx.Response(200, request=request)

        async with httpx.AsyncClient(transport=httpx.MockTransport(handler), auth=auth) as client:
            return (await client.get(API_URL)).status_code

    assert asyncio.run(one_call()) == 200
    assert asyncio.run(one_call()) == 200


def test_a_synchronous_client_is_refused_rather_than_sent_without_a_token() -> None:
    auth = OAuth2ClientCredentialsAuth(make_credentials(), ["A"])
    transport = httpx.MockTransport(lambda r: httpx.Response(200))
    refused = pytest.raises(TypeError, match="AsyncClient")
    with httpx.Client(transport=transport, auth=auth) as client, refused:
        client.get(API_URL)
