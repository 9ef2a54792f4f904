"""Every answer is bounded: bytes read (a JSON answer, a document answer, a token answer), the total time of
an attempt (a download's body included) and JSON nesting; a failure while a body streams is a typed transient
error. Each case ends in its typed error, never in unbounded memory, an endless wait or a RecursionError."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from pydantic import SecretStr

from connectors.address_service import AddressServiceClient
from connectors.commerce import CommerceClient
from connectors.errors import (
    DeadlineExceeded,
    JsonTooDeep,
    MalformedResponse,
    RateLimited,
    ResponseTooLarge,
    ServerError,
    TransportFailure,
)
from connectors.http import ApiClient, ClientOptions, RequestRecord
from connectors.jsontext import json_nesting_exceeds, parse_json
from connectors.limits import (
    DOWNLOAD_DEADLINE_S,
    JSON_MAX_DEPTH,
    REQUEST_DEADLINE_S,
    RESPONSE_MAX_BYTES,
    ResponseLimits,
    base64_length,
    document_answer_limit,
)
from connectors.newspaper import NewspaperClient, StructureFileCode
from connectors.oauth import ClientCredentials
from connectors.retry import RetryPolicy

ADDRESS = "https://aws.example.test/REST/v1"
NEWSPAPER = "https://newspaper.example.test/api"
COMMERCE = "https://commerce.example.test/dcapi"
TOKEN_URL = "https://auth.example.test/OAuth/token"
CHUNK = 1 << 16
STATUS_JSON = {"content-type": "application/json"}


class Endless:
    """A chunked body that never ends, counting the bytes it produced."""

    def __init__(self, chunk: bytes = b"[" + b" " * (CHUNK - 1)) -> None:
        self.chunk = chunk
        self.produced = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            self.produced += len(self.chunk)
            yield self.chunk


class Trickle:
    """A body that gives one byte every ``interval`` seconds, ``count`` times."""

    def __init__(self, interval: float, count: int = 10_000, byte: bytes = b"x") -> None:
        self.interval = interval
        self.count = count
        self.byte = byte
        self.produced = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for _ in range(self.count):
            await asyncio.sleep(self.interval)
            self.produced += 1
            yield self.byte


class DropsAfter:
    """A body that sends ``head`` and then fails with ``error`` (a dropped connection, a read timeout)."""

    def __init__(self, head: bytes, error: Exception) -> None:
        self.head = head
        self.error = error

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.head
        raise self.error


async def _no_sleep(seconds: float) -> None:
    return None


def address_client(
    handler: Callable[[httpx.Request], Any], *, attempts: int = 1, **limits: Any
) -> AddressServiceClient:
    return AddressServiceClient(
        ADDRESS,
        username="tech-user",
        password=SecretStr("pw"),
        options=ClientOptions(
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(max_attempts=attempts, base_delay=0, jitter=0),
            sleep=_no_sleep,
            limits=ResponseLimits(**limits),
        ),
    )


def _token(request: httpx.Request) -> httpx.Response:
    scope = parse_qs(request.content.decode())["scope"][0]
    return httpx.Response(
        200, json={"access_token": f"tok:{scope}", "token_type": "Bearer", "expires_in": 600}
    )


def newspaper_client(
    answer: Callable[[httpx.Request], httpx.Response], *, document_max_bytes: int, **limits: Any
) -> NewspaperClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return _token(request) if str(request.url) == TOKEN_URL else answer(request)

    return NewspaperClient(
        NEWSPAPER,
        document_max_bytes=document_max_bytes,
        credentials=ClientCredentials(TOKEN_URL, "client", SecretStr("secret"), api="newspaper"),
        options=ClientOptions(
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(max_attempts=1),
            limits=ResponseLimits(**limits),
        ),
    )


def commerce_client(answer: Callable[[httpx.Request], httpx.Response], **limits: Any) -> CommerceClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return _token(request) if str(request.url) == TOKEN_URL else answer(request)

    return CommerceClient(
        COMMERCE,
        credentials=ClientCredentials(TOKEN_URL, "client", SecretStr("secret"), api="commerce"),
        options=ClientOptions(
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(max_attempts=1),
            limits=ResponseLimits(**limits),
        ),
    )


# -- the size of an answer ------------------------------------------------------------------------------


async def test_an_endless_chunked_status_answer_stops_at_the_limit_with_memory_bounded() -> None:
    body = Endless()
    client = address_client(lambda request: httpx.Response(200, headers=STATUS_JSON, content=body))
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLarge) as raised:
            await client.check_batch_status("job-1")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(raised.value, MalformedResponse) and raised.value.retryable
    assert "16,777,216 bytes (POSTFLOWS_RESPONSE_MAX_BYTES)" in str(raised.value)
    assert "/checkbatchstatus/job-1" in str(raised.value)
    # Refused once a chunk took it past the limit: about the limit's bytes were read, and held.
    assert RESPONSE_MAX_BYTES < body.produced <= RESPONSE_MAX_BYTES + 2 * CHUNK
    assert peak < 2.5 * RESPONSE_MAX_BYTES


async def test_each_retry_of_an_oversized_read_reads_no_more_than_the_limit() -> None:
    body = Endless()
    client = address_client(
        lambda request: httpx.Response(200, headers=STATUS_JSON, content=body), attempts=3, max_bytes=1 << 20
    )
    with pytest.raises(ResponseTooLarge, match=r"1,048,576 bytes \(POSTFLOWS_RESPONSE_MAX_BYTES\)"):
        await client.check_batch_status("job-1")
    assert 3 * (1 << 20) < body.produced <= 3 * ((1 << 20) + 2 * CHUNK)


async def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_read() -> None:
    body = Endless()

    def handler(request: httpx.Request) -> httpx.Response:
        headers = {**STATUS_JSON, "content-length": str(5 << 20)}
        return httpx.Response(200, headers=headers, content=body)

    with pytest.raises(ResponseTooLarge):
        await address_client(handler, max_bytes=1 << 20).check_batch_status("job-1")
    assert body.produced == 0


async def test_an_oversized_answer_to_a_submission_is_not_sent_again() -> None:
    posts = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal posts
        posts += 1
        return httpx.Response(200, headers=STATUS_JSON, content=b'{"x": "' + b"y" * 5000 + b'"}')

    client = address_client(handler, attempts=4, max_bytes=1000)
    with pytest.raises(ResponseTooLarge) as raised:
        await client.run_batch("key", "in", "out")
    assert raised.value.outcome_unknown and posts == 1


async def test_an_oversized_error_answer_keeps_its_status_mapping() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "3"}, content=b"slow down " * 1000)

    client = ApiClient(
        "https://api.example.test",
        options=ClientOptions(
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(max_attempts=1),
            limits=ResponseLimits(max_bytes=100),
        ),
    )
    with pytest.raises(RateLimited) as raised:
        await client.request("POST", "/orders")
    assert raised.value.not_processed and raised.value.retry_after == 3


async def test_a_token_answer_is_read_within_the_limit_and_the_request_never_left() -> None:
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        if str(request.url) == TOKEN_URL:
            # Finite: the suite's secret watch reads every token answer whole before the client does.
            return httpx.Response(200, headers=STATUS_JSON, content=b"[" + b" " * (3 << 20) + b"]")
        return httpx.Response(200, json={"statusValue": "LOADED"})

    client = NewspaperClient(
        NEWSPAPER,
        credentials=ClientCredentials(TOKEN_URL, "client", SecretStr("secret"), api="newspaper"),
        options=ClientOptions(
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(max_attempts=1),
            limits=ResponseLimits(max_bytes=1 << 20),
        ),
    )
    with pytest.raises(ResponseTooLarge) as raised:
        await client.get_order_status(7)
    assert raised.value.not_processed and sent == ["/OAuth/token"]


class Chunks:
    """A streamed body of ``parts``, counting the parts read."""

    def __init__(self, *parts: bytes) -> None:
        self.parts = parts
        self.read = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self.parts:
            self.read += 1
            yield part


def gzip_client(body: Chunks, *, max_bytes: int) -> ApiClient:
    headers = {**STATUS_JSON, "content-encoding": "gzip"}
    return ApiClient(
        "https://api.example.test",
        options=ClientOptions(
            transport=httpx.MockTransport(lambda request: httpx.Response(200, headers=headers, content=body)),
            retry=RetryPolicy(max_attempts=1),
            limits=ResponseLimits(max_bytes=max_bytes),
        ),
    )


async def test_a_compressed_answer_is_bounded_by_its_decoded_size() -> None:
    packed = gzip.compress(b"[" + b" " * (4 << 20) + b"]")
    assert len(packed) < 1 << 20
    with pytest.raises(ResponseTooLarge, match=r"1,048,576 bytes"):
        await gzip_client(Chunks(packed), max_bytes=1 << 20).request("GET", "/status")


async def test_a_compressed_answer_within_the_limit_is_read_decoded() -> None:
    packed = gzip.compress(b'{"status": "ok"}')
    body = Chunks(packed[:10], packed[10:])
    response = await gzip_client(body, max_bytes=1000).request("GET", "/status")
    assert response.json() == {"status": "ok"} and response.content == b'{"status": "ok"}'
    assert "content-encoding" not in response.headers
    assert body.read == 2 and response.is_closed


async def test_a_refused_answer_before_a_token_renewal_is_read_within_the_limit() -> None:
    """httpx reads every answer an auth flow was given; the refusal the flow read itself is read once,
    within the limit, and the request sent again with a new token is answered."""
    refusal = Chunks(b"no " * 10_000, b"never read")
    tokens: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) == TOKEN_URL:
            tokens.append(request.url.path)
            return _token(request)
        if len(tokens) == 1:
            return httpx.Response(401, headers=STATUS_JSON, content=refusal)
        return httpx.Response(200, json={"statusValue": "LOADED"})

    async with NewspaperClient(
        NEWSPAPER,
        credentials=ClientCredentials(TOKEN_URL, "client", SecretStr("secret"), api="newspaper"),
        options=ClientOptions(
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(max_attempts=1),
            limits=ResponseLimits(max_bytes=1000),
        ),
    ) as client:
        result = await client.get_order_status(7)
    assert result.value.status_value == "LOADED" and len(tokens) == 2 and refusal.read == 1


# -- newspaper documents ---------------------------------------------------------------------------------


def _structure_files(data: bytes) -> bytes:
    document = {"mimeType": "application/zip", "size": len(data), "data": base64.b64encode(data).decode()}
    return json.dumps([document]).encode()


async def test_a_base64_document_over_the_limit_is_refused_while_it_streams() -> None:
    limit = 30_000
    answer = _structure_files(b"z" * 200_000)
    produced = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal produced
        for start in range(0, len(answer), 4096):
            produced += 4096
            yield answer[start : start + 4096]

    client = newspaper_client(
        lambda request: httpx.Response(200, headers=STATUS_JSON, content=chunks()), document_max_bytes=limit
    )
    with pytest.raises(ResponseTooLarge, match="4/3 of POSTFLOWS_DOWNLOAD_MAX_BYTES") as raised:
        await client.get_structure_files(StructureFileCode.BOTH)
    allowed = document_answer_limit(limit).max_bytes
    assert raised.value.max_bytes == allowed == base64_length(limit) + 65_536
    assert produced <= allowed + 4096 < len(answer)


async def test_a_document_answer_may_be_larger_than_a_json_answer() -> None:
    answer = _structure_files(b"z" * 20_000)
    client = newspaper_client(
        lambda request: httpx.Response(200, headers=STATUS_JSON, content=answer),
        document_max_bytes=30_000,
        max_bytes=1000,
    )
    documents = (await client.get_structure_files(StructureFileCode.BOTH)).value.documents
    assert [document.size for document in documents] == [20_000]
    with pytest.raises(ResponseTooLarge, match="POSTFLOWS_RESPONSE_MAX_BYTES"):
        await newspaper_client(
            lambda request: httpx.Response(200, json={"statusValue": "x" * 2000}),
            document_max_bytes=30_000,
            max_bytes=1000,
        ).get_order_status(7)


# -- the deadline of an attempt --------------------------------------------------------------------------


def test_the_deadlines_default_by_kind_and_one_setting_sets_both() -> None:
    assert ResponseLimits().deadline_for(transfer=True) == DOWNLOAD_DEADLINE_S == 600
    assert ResponseLimits().deadline_for(transfer=False) == REQUEST_DEADLINE_S == 120
    assert ResponseLimits(deadline_s=5).deadline_for(transfer=True) == 5
    assert ResponseLimits(deadline_s=5).deadline_for(transfer=False) == 5


async def test_a_trickled_download_ends_at_its_deadline() -> None:
    trickle = Trickle(0.5)

    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/octet-stream"}
        return httpx.Response(200, headers=headers, content=trickle)

    records: list[RequestRecord] = []
    client = address_client(handler, attempts=3, deadline_s=2)
    client._request_log = records.append
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded) as raised:
        async with client.download("file-1") as chunks:
            async for _ in chunks:
                pass
    elapsed = time.monotonic() - started
    assert 1.9 < elapsed < 3.0
    assert isinstance(raised.value, TransportFailure) and raised.value.retryable
    assert "deadline of 2 s (POSTFLOWS_HTTP_DEADLINE_S)" in str(raised.value)
    assert 3 <= trickle.produced <= 4
    # One attempt (never retried mid-body), logged with the failure that ended it.
    assert [(record.attempt, record.outcome) for record in records] == [(1, "DeadlineExceeded")]


async def test_a_trickled_json_answer_ends_at_its_deadline_and_a_read_is_tried_again() -> None:
    attempts = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal attempts
        attempts += 1
        return httpx.Response(200, headers=STATUS_JSON, content=Trickle(0.2, byte=b" "))

    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        await address_client(handler, attempts=2, deadline_s=0.5).check_batch_status("job-1")
    assert attempts == 2 and time.monotonic() - started < 2.0


async def test_a_submission_whose_answer_never_comes_is_not_sent_again() -> None:
    posts = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal posts
        posts += 1
        await asyncio.sleep(30)
        return httpx.Response(200, json={})

    started = time.monotonic()
    with pytest.raises(DeadlineExceeded) as raised:
        await address_client(handler, attempts=4, deadline_s=0.3).run_batch("key", "in", "out")
    assert raised.value.outcome_unknown and posts == 1
    assert time.monotonic() - started < 2.0


# -- failures while a body streams -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        httpx.RemoteProtocolError("peer closed connection without sending complete message body"),
        httpx.ReadTimeout("timed out"),
        httpx.ReadError("connection reset"),
    ],
    ids=lambda error: type(error).__name__,
)
async def test_a_download_that_fails_mid_body_raises_a_typed_transport_failure(error: Exception) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/octet-stream", "content-length": "100000"}
        return httpx.Response(200, headers=headers, content=DropsAfter(b"RecordId\tQSTAT\r\n", error))

    with pytest.raises(TransportFailure) as raised:
        async with address_client(handler).download("file-1") as chunks:
            async for _ in chunks:
                pass
    assert raised.value.retryable and raised.value.sent
    assert type(error).__name__ in str(raised.value)
    assert isinstance(raised.value.__cause__, httpx.TransportError)


async def test_a_json_answer_that_drops_mid_body_is_retried_for_a_read() -> None:
    answers = iter(
        [
            httpx.Response(
                200, headers=STATUS_JSON, content=DropsAfter(b'{"partial', httpx.ReadError("reset"))
            ),
            httpx.Response(
                200, json={"CheckBatchStatusResult": {"Status": 0, "BatchStatus": {"TokenStatus": 4}}}
            ),
        ]
    )
    status = await address_client(lambda request: next(answers), attempts=2).check_batch_status("job-1")
    assert int(status.token_status) == 4


# -- JSON nesting ----------------------------------------------------------------------------------------

DEEP = b"[" * 100_000 + b"]" * 100_000


async def test_a_100k_deep_answer_is_malformed_for_every_client() -> None:
    def deep(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=STATUS_JSON, content=DEEP)

    with pytest.raises(JsonTooDeep, match=f"deeper than {JSON_MAX_DEPTH} levels"):
        await address_client(deep).check_batch_status("job-1")
    with pytest.raises(MalformedResponse, match="deeper than 64 levels"):
        await newspaper_client(deep, document_max_bytes=1 << 20).get_order_status(7)
    with pytest.raises(MalformedResponse, match="deeper than 64 levels"):
        await commerce_client(deep).holidays()
    with pytest.raises(MalformedResponse, match="deeper than 64 levels"):
        await newspaper_client(deep, document_max_bytes=1 << 20).get_structure_files(StructureFileCode.BOTH)


async def test_a_deep_error_answer_is_mapped_by_its_status() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers=STATUS_JSON, content=DEEP)

    with pytest.raises(ServerError):
        await newspaper_client(handler, document_max_bytes=1 << 20).get_order_status(7)


async def test_a_deep_status_in_place_of_a_download_is_read_as_no_status() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=STATUS_JSON, content=b"[" * 60_000)

    with pytest.raises(Exception) as raised:
        async with address_client(handler).download("file-1"):
            pass
    assert not isinstance(raised.value, RecursionError)
    assert "999" in str(raised.value)


@pytest.mark.parametrize(
    ("text", "too_deep"),
    [
        (b"[" * 64 + b"]" * 64, False),
        (b"[" * 65 + b"]" * 65, True),
        (b'{"a":' * 65 + b"1" + b"}" * 65, True),
        (b"  \r\n" + b"[" * 65, True),
        (b"\xef\xbb\xbf" + b"[" * 65, True),
        (("[" * 65 + "]" * 65).encode("utf-16"), True),
        (json.dumps(["[" * 1000, {"k": "{{{{"}]).encode(), False),
        (b'["' + b'\\"[' * 1000, False),  # brackets inside an unterminated string
        (b"[" * 10 + b"]" * 20 + b"[" * 100, False),  # the parser stops at the eleventh ]
        (b"%PDF-1.7 " + b"[" * 100, False),
        (b"", False),
        (json.dumps([{"a": [1, 2, {"b": []}]}] * 10_000).encode(), False),
    ],
)
def test_nesting_is_measured_without_parsing(text: bytes, too_deep: bool) -> None:
    assert json_nesting_exceeds(text) is too_deep


def test_parse_json_refuses_deep_text_as_malformed_and_as_not_json() -> None:
    with pytest.raises(JsonTooDeep) as raised:
        parse_json(DEEP, api="demo")
    assert isinstance(raised.value, MalformedResponse) and isinstance(raised.value, ValueError)
    assert parse_json(b"[" * 64 + b"]" * 64, api="demo") is not None
    with pytest.raises(ValueError):
        parse_json(b"{not json", api="demo")
