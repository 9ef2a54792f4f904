"""The shared HTTP core: error mapping, the one retry decision, non-idempotent safety, the request log."""

from __future__ import annotations

import dataclasses
import pickle
import random
from collections.abc import Callable

import httpx
import pytest
from pydantic import SecretStr

from connectors.address_service.errors import AddressServiceStatusError
from connectors.auth import basic_auth
from connectors.commerce import CommerceRejected
from connectors.errors import (
    ApiError,
    AuthFailed,
    AuthorizationDenied,
    HttpStatusError,
    NotFound,
    RateLimited,
    RemoteRejected,
    ServerError,
    TransportFailure,
    error_for_http_status,
)
from connectors.http import (
    DEFAULT_TIMEOUT,
    ApiClient,
    BeforeRequest,
    ClientOptions,
    RequestLog,
    RequestRecord,
    RequestTraits,
)
from connectors.limits import ResponseLimits
from connectors.retry import RetryPolicy
from core.errors import PostflowsError


def _client(
    handler: Callable[[httpx.Request], httpx.Response],
    base_url: str = "https://api.example.test/base/",
    *,
    auth: httpx.Auth | None = None,
    request_log: RequestLog | None = None,
    before_request: BeforeRequest | None = None,
) -> tuple[ApiClient, list[float]]:
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    client = ApiClient(
        base_url,
        auth=auth,
        options=ClientOptions(
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(max_attempts=3, base_delay=0.5, max_delay=4, jitter=0),
            sleep=sleep,
            request_log=request_log,
            before_request=before_request,
        ),
    )
    return client, sleeps


@pytest.mark.parametrize(
    ("status", "error_type", "retryable"),
    [
        (429, RateLimited, True),
        (401, AuthFailed, False),
        (403, AuthFailed, False),
        (404, NotFound, False),
        (500, ServerError, True),
        (503, ServerError, True),
        (400, HttpStatusError, False),
    ],
)
def test_http_status_maps_to_typed_error(status: int, error_type: type, retryable: bool) -> None:
    request = httpx.Request("GET", "https://api.example.test/x?secret=1")
    error = error_for_http_status(httpx.Response(status, request=request, text="nope"), api="demo")
    assert type(error) is error_type
    assert error.retryable is retryable
    assert error.status_code == status
    assert "secret" not in str(error)


async def test_joins_base_url_and_path() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={})

    client, _ = _client(handler)
    await client.request("GET", "/ping")
    await client.request("GET", "checkbatchstatus/abc")
    assert seen == [
        "https://api.example.test/base/ping",
        "https://api.example.test/base/checkbatchstatus/abc",
    ]


async def test_retries_transient_5xx_with_capped_backoff_then_succeeds() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(503) if calls < 3 else httpx.Response(200, json={"ok": True})

    client, sleeps = _client(handler)
    response = await client.request("GET", "/thing")
    assert response.json() == {"ok": True}
    assert calls == 3
    assert sleeps == [0.5, 1.0]


async def test_gives_up_after_max_attempts() -> None:
    client, sleeps = _client(lambda request: httpx.Response(500))
    with pytest.raises(ServerError):
        await client.request("GET", "/thing")
    assert len(sleeps) == 2


async def test_honours_retry_after_on_429() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return httpx.Response(429, headers={"Retry-After": "3"})
        return httpx.Response(200, json={})

    client, sleeps = _client(handler)
    await client.request("POST", "/submit", json={})
    assert sleeps == [3.0]


async def test_client_errors_are_not_retried() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(400, json={"error": "bad"})

    client, _ = _client(handler)
    with pytest.raises(HttpStatusError):
        await client.request("GET", "/thing")
    assert calls == 1


async def test_connect_error_is_retried_even_for_post() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200, json={"id": 1})

    client, _ = _client(handler)
    response = await client.request("POST", "/orders", json={"a": 1})
    assert response.json() == {"id": 1}
    assert calls == 2


@pytest.mark.parametrize(
    "failure",
    [
        lambda request: (_ for _ in ()).throw(httpx.ReadTimeout("slow", request=request)),
        lambda request: (_ for _ in ()).throw(httpx.RemoteProtocolError("dropped", request=request)),
        lambda request: httpx.Response(502),
    ],
    ids=["read-timeout", "dropped", "bad-gateway"],
)
async def test_post_is_never_resent_after_an_ambiguous_failure(
    failure: Callable[..., httpx.Response],
) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return failure(request)

    client, sleeps = _client(handler)
    with pytest.raises((TransportFailure, ServerError)):
        await client.request("POST", "/orders", json={"a": 1})
    assert calls == 1
    assert sleeps == []


async def test_post_marked_idempotent_is_retried_after_read_timeout() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise httpx.ReadTimeout("slow", request=request)
        return httpx.Response(200, json={})

    client, _ = _client(handler)
    await client.request("POST", "/query", json={}, traits=RequestTraits(idempotent=True))
    assert calls == 2


async def test_check_can_reject_a_200_and_its_retryable_flag_decides() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(200, json={"Status": 106 if calls == 1 else 0})

    def check(response: httpx.Response) -> None:
        if response.json()["Status"]:
            raise RemoteRejected("busy", api="demo", code="106", retryable=True, not_processed=True)

    client, _ = _client(handler)
    response = await client.request("POST", "/runbatch", json={}, check=check)
    assert response.json() == {"Status": 0}
    assert calls == 2


async def test_a_retryable_answer_that_may_follow_processing_is_never_resent_for_a_post() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(200, json={"Status": 201})

    def check(response: httpx.Response) -> None:
        if response.json()["Status"]:
            raise RemoteRejected("internal error", api="demo", code="201", retryable=True)

    client, _ = _client(handler)
    with pytest.raises(RemoteRejected) as raised:
        await client.request("POST", "/runbatch", json={}, check=check)
    assert raised.value.outcome_unknown
    assert calls == 1
    response = await client.request("GET", "/checkbatchstatus/x", check=lambda r: None)
    assert response.json() == {"Status": 201}


async def test_request_log_never_contains_credentials_or_query() -> None:
    records: list[RequestRecord] = []
    seen_headers: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen_headers.append(request.headers["Authorization"])
        return httpx.Response(200, json={})

    client, _ = _client(
        handler, request_log=records.append, auth=basic_auth("user", SecretStr("hunter2-secret"))
    )
    await client.request("GET", "/lookup", params={"name": "Muster"})
    assert seen_headers and seen_headers[0].startswith("Basic ")
    assert len(records) == 1
    record = records[0]
    assert (record.method, record.path, record.status_code, record.outcome) == ("GET", "/lookup", 200, "ok")
    assert "hunter2" not in repr(record) and "Muster" not in repr(record)
    assert "hunter2" not in repr(client._auth)


async def test_basic_auth_is_preemptive_on_every_request() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization", ""))
        return httpx.Response(200, json={})

    client, _ = _client(handler, auth=basic_auth("tech-user", SecretStr("pw")))
    await client.request("GET", "/first")
    await client.request("GET", "/second")
    # Sent with the first request already, not after a 401 challenge.
    assert seen == ["Basic dGVjaC11c2VyOnB3"] * 2


async def test_stream_retries_until_headers_are_checked() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(500) if calls == 1 else httpx.Response(200, content=b"abc" * 1000)

    client, _ = _client(handler)
    async with client.stream("GET", "/download") as response:
        body = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert body == b"abc" * 1000
    assert calls == 2


def test_jitter_stays_within_backoff() -> None:
    policy = RetryPolicy(base_delay=1, max_delay=8, jitter=1, rng=random.Random(7))
    error = ServerError("x", api="demo", status_code=500)
    for attempt in range(1, 8):
        assert 0 <= policy.delay(error, attempt) <= min(8, 2 ** (attempt - 1))
    assert not policy.should_retry(ValueError("not an api error"), 1)


async def test_post_is_retried_when_the_failure_hit_the_token_request_not_the_post() -> None:
    """An auth flow's own request failing means the POST itself never left: retrying it is safe."""
    posts = 0
    token_calls = 0

    class TokenAuth(httpx.Auth):
        def auth_flow(self, request: httpx.Request):  # type: ignore[no-untyped-def]
            yield httpx.Request("POST", "https://auth.example.test/token")
            request.headers["Authorization"] = "Bearer t"
            yield request

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal posts, token_calls
        if request.url.host == "auth.example.test":
            token_calls += 1
            if token_calls == 1:
                raise httpx.ReadTimeout("token endpoint slow", request=request)
            return httpx.Response(200, json={})
        posts += 1
        return httpx.Response(200, json={"id": 7})

    client, _ = _client(handler, auth=TokenAuth())
    response = await client.request("POST", "/orders", json={})
    assert response.json() == {"id": 7}
    assert posts == 1 and token_calls == 2


@pytest.mark.parametrize(
    "base_url",
    [
        "https://API.Example.TEST/base",
        "https://api.example.test:443/base",
        "https://api.example.test/x/../base/./",
        "http://api.example.test:80/base",
    ],
)
async def test_a_dropped_post_is_sent_once_whatever_the_base_url_looks_like(base_url: str) -> None:
    """httpx normalises host case, default ports and dot segments; the "was it sent?" rule must not care."""
    posts = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal posts
        posts += 1
        raise httpx.RemoteProtocolError("peer closed connection", request=request)

    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    client = ApiClient(base_url, options=ClientOptions(transport=httpx.MockTransport(handler), sleep=sleep))
    with pytest.raises(TransportFailure) as dropped:
        await client.request("POST", "/runbatch", json={})
    assert dropped.value.sent is True and dropped.value.outcome_unknown
    assert posts == 1 and sleeps == []


@pytest.mark.parametrize(
    "failure",
    [httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout],
)
async def test_a_post_that_never_left_is_not_sent_and_is_retried(failure: type[httpx.TransportError]) -> None:
    attempts = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise failure("no connection", request=request)
        return httpx.Response(200, json={"ok": True})

    client, _ = _client(handler, base_url="https://API.Example.TEST:443/base/./")
    response = await client.request("POST", "/orders", json={})
    assert response.json() == {"ok": True} and attempts == 2


@pytest.mark.parametrize(
    ("body", "kept", "gone"),
    [
        ('{"error": "denied", "access_token": "abc.def-123"}', '"error": "denied"', "abc.def-123"),
        ("password=hunter2&user=x", "user=x", "hunter2"),
        ("Authorization: Bearer Zm9vYmFyYmF6cXV4", "Authorization", "Zm9vYmFyYmF6cXV4"),
        ("session a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8 expired", "expired", "a1b2c3d4e5f6a7b8c9d0e1f2"),
        (
            "file 3f2b1c9e-1234-4abc-9def-0123456789ab is gone",
            "3f2b1c9e-1234-4abc-9def-0123456789ab",
            "[redacted]",
        ),
    ],
)
async def test_error_bodies_are_quoted_scrubbed_of_anything_like_a_secret(
    body: str, kept: str, gone: str
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, text=body)

    client, _ = _client(handler)
    with pytest.raises(HttpStatusError) as caught:
        await client.request("GET", "/lookup")
    assert kept in str(caught.value) and gone not in str(caught.value)


async def test_long_error_bodies_are_cut() -> None:
    client, _ = _client(lambda request: httpx.Response(400, text="x " * 5000))
    with pytest.raises(HttpStatusError) as caught:
        await client.request("GET", "/lookup")
    assert len(str(caught.value)) < 400 and str(caught.value).endswith("…")


async def test_the_before_request_hook_runs_before_every_attempt_and_may_hold_it() -> None:
    events: list[str] = []
    answers = iter([httpx.Response(503), httpx.Response(200, json={}), httpx.Response(200, content=b"x")])

    def handler(request: httpx.Request) -> httpx.Response:
        events.append(f"sent {request.url.path}")
        return next(answers)

    async def before_request() -> None:
        events.append("slot")

    client, _ = _client(handler, before_request=before_request)
    await client.request("GET", "/status")
    async with client.stream("GET", "/download"):
        pass
    assert events == ["slot", "sent /base/status", "slot", "sent /base/status", "slot", "sent /base/download"]


@pytest.mark.parametrize(
    "error",
    [
        AuthFailed("commerce: HTTP 403", api="commerce", status_code=403),
        TransportFailure("commerce: connection reset", api="commerce", sent=False),
        CommerceRejected("commerce: HTTP 400", code="400", meaning="bad", status_code=400, detail="bad zip"),
        AddressServiceStatusError(106, operation="runquery2"),
        AuthorizationDenied("access_denied", "the user said no"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_errors_survive_pickling_with_their_attributes(error: PostflowsError) -> None:
    """A task on another process's worker raises them; the flow waiting for it must get the same error."""
    again = pickle.loads(pickle.dumps(error))

    assert type(again) is type(error)
    assert str(again) == str(error) and again.args == error.args
    assert vars(again) == vars(error)
    if isinstance(error, ApiError):
        assert isinstance(again, ApiError)
        assert (again.retryable, again.outcome_unknown, again.window_s) == (
            error.retryable,
            error.outcome_unknown,
            error.window_s,
        )


async def test_client_options_are_frozen_and_a_client_without_them_takes_the_defaults() -> None:
    options = ClientOptions(retry=RetryPolicy(max_attempts=1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.retry = RetryPolicy()  # type: ignore[misc]
    client = ApiClient("https://api.example.test/")
    try:
        assert client.retry == RetryPolicy() and client.limits == ResponseLimits() and client.pacer is None
        assert client._http.timeout == DEFAULT_TIMEOUT
    finally:
        await client.aclose()
    given = ApiClient("https://api.example.test/", options=options)
    try:
        assert given.retry.max_attempts == 1
    finally:
        await given.aclose()
