"""The batch tasks' download: streamed to its file atomically, within a size limit; hostile answers are built
here with a mock transport."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
from prefect.states import Failed
from pydantic import SecretStr

from connectors.address_service import AddressServiceClient, DatabaseStatusError
from connectors.errors import TransportFailure
from connectors.http import ClientOptions
from connectors.retry import RetryPolicy
from fileio.errors import ResultFileError
from fileio.limits import DOWNLOAD_MAX_BYTES
from runtime.settings import Settings
from tasks.address_service.batch import download_output, start_batch
from tasks.address_service.billing import Billing
from tasks.retrying import transient_failure

Handler = Callable[[httpx.Request], httpx.Response]


def make_client(handler: Handler) -> AddressServiceClient:
    async def no_sleep(seconds: float) -> None:
        return None

    return AddressServiceClient(
        "https://aws.example.test/REST/v1",
        username="tech-user",
        password=SecretStr("pw"),
        options=ClientOptions(
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(max_attempts=2, base_delay=0, jitter=0),
            sleep=no_sleep,
        ),
    )


def serving(body: bytes | AsyncIterator[bytes], content_type: str = "application/octet-stream") -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith("/downloadfile/out-1")
        return httpx.Response(200, content=body, headers={"content-type": content_type})

    return handler


async def test_download_is_written_to_its_destination(tmp_path: Path) -> None:
    content = b"RecordId\tQSTAT\r\n" + b"1\t1\r\n" * 100_000
    destination = tmp_path / "download" / "output.bin"
    async with make_client(serving(content)) as client:
        assert await download_output.fn(client, "out-1", destination) == destination
    assert destination.read_bytes() == content
    assert [path.name for path in destination.parent.iterdir()] == ["output.bin"]


async def test_download_larger_than_the_limit_fails_and_leaves_nothing(tmp_path: Path) -> None:
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        while True:
            sent += 1 << 16
            yield b"\0" * (1 << 16)

    destination = tmp_path / "download" / "output.bin"
    async with make_client(serving(endless())) as client:
        with pytest.raises(ResultFileError) as caught:
            await download_output.fn(client, "out-1", destination, max_bytes=1_000_000)
    message = str(caught.value)
    assert "larger than the limit of 1,000,000 bytes" in message
    assert "POSTFLOWS_DOWNLOAD_MAX_BYTES" in message
    assert sent < 2_000_000  # stopped at the limit, not read to the end
    assert list(destination.parent.iterdir()) == []


async def test_download_within_the_limit_is_kept_whole(tmp_path: Path) -> None:
    destination = tmp_path / "output.bin"
    async with make_client(serving(b"x" * 1000)) as client:
        await download_output.fn(client, "out-1", destination, max_bytes=1000)
    assert destination.read_bytes() == b"x" * 1000


async def test_status_answer_in_place_of_the_file_writes_nothing(tmp_path: Path) -> None:
    destination = tmp_path / "output.bin"
    async with make_client(serving(b'{"Status": 302}', "application/json")) as client:
        with pytest.raises(DatabaseStatusError):
            await download_output.fn(client, "out-1", destination)
    assert list(tmp_path.iterdir()) == []


async def test_a_download_dropped_mid_body_is_a_transient_typed_failure(tmp_path: Path) -> None:
    """A dropped connection after the status line is the step's to retry, as a 503 is: the HTTP core never
    retries in the middle of a body, so the error must reach the step typed."""
    requests = 0

    async def drops() -> AsyncIterator[bytes]:
        yield b"RecordId\tQSTAT\r\n" + b"1\t1\r\n" * 1000
        raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal requests
        requests += 1
        return httpx.Response(200, content=drops(), headers={"content-type": "application/octet-stream"})

    destination = tmp_path / "download" / "output.bin"
    async with make_client(handler) as client:
        with pytest.raises(TransportFailure, match="RemoteProtocolError") as caught:
            await download_output.fn(client, "out-1", destination)
    assert requests == 1 and caught.value.retryable
    assert transient_failure(download_output, None, Failed(data=caught.value))  # type: ignore[arg-type]
    assert not destination.exists()


def test_the_limit_defaults_to_one_gibibyte_in_the_task_and_the_settings() -> None:
    assert DOWNLOAD_MAX_BYTES == 1 << 30
    assert inspect.signature(download_output.fn).parameters["max_bytes"].default == DOWNLOAD_MAX_BYTES
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.download_max_bytes == DOWNLOAD_MAX_BYTES
    assert settings.zip_max_ratio == 100.0


def test_the_limits_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTFLOWS_DOWNLOAD_MAX_BYTES", "5000")
    monkeypatch.setenv("POSTFLOWS_ZIP_MAX_RATIO", "20")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (settings.download_max_bytes, settings.zip_max_ratio) == (5000, 20.0)


def _starting(seen: list[tuple[str, dict[str, object]]]) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.path.rsplit("/", 1)[-1], json.loads(request.content)))
        return httpx.Response(
            200, json={"RunBatchResult": {"BatchToken": "b-1", "SettlementId": 9, "Status": 0}}
        )

    return handler


async def test_a_batch_is_billed_to_the_contract_or_to_the_client_its_billing_names() -> None:
    seen: list[tuple[str, dict[str, object]]] = []
    async with make_client(_starting(seen)) as client:
        await start_batch.fn(client, key="k", input_token="in-1", output_token="out-1")
        await start_batch.fn(
            client,
            key="k",
            input_token="in-1",
            output_token="out-1",
            billing=Billing("R-7", "C-1", "Muster AG"),
            extra_items={"{###STATISTICFILE_FR###}": "stat-1"},
        )
    (contract, contract_body), (with_client, client_body) = seen
    assert contract == "runbatch" and "billingReferenceNumber" not in contract_body
    assert with_client == "runbatchwithclient"
    assert (
        client_body["billingReferenceNumber"],
        client_body["clientIdentifier"],
        client_body["clientName"],
    ) == (
        "R-7",
        "C-1",
        "Muster AG",
    )
    assert {"Search": "{###STATISTICFILE_FR###}", "Replacement": "stat-1"} in client_body["replaceItems"]  # type: ignore[operator]
