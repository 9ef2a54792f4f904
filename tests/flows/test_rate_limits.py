"""The per-API rate limits on a real Prefect server: ``postflows setup`` creates them from the settings, every
request of a flow run takes a slot, and nothing changes where a limit does not exist or outside a run."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
from prefect.client.schemas.responses import GlobalConcurrencyLimitResponse
from prefect.exceptions import ObjectNotFound
from typer.testing import CliRunner

from flows.address_batch import address_batch
from postflows.cli import app
from runtime.api_limits import (
    ADDRESS_SERVICE,
    COMMERCE_API,
    NEWSPAPER_API,
    ApiLimit,
    RateLimitHook,
    ensure_api_limits,
    forget_known_limits,
)
from runtime.settings import get_settings
from tests.flows.calls import call
from tests.flows.conftest import Sandbox, delete_api_limits

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}
NAMES = (ADDRESS_SERVICE, NEWSPAPER_API, COMMERCE_API)


@pytest.fixture(autouse=True)
async def _no_limits_left() -> AsyncIterator[None]:
    """The harness server is shared by every flow test: each test here starts and ends without limits."""
    await delete_api_limits()
    yield
    await delete_api_limits()


def test_a_rate_per_minute_never_allows_more_in_any_minute() -> None:
    for per_minute in (2, 60, 600, 1200, 1201):
        limit = ApiLimit("x", per_minute)
        assert limit.burst + 60 * limit.slot_decay_per_second == pytest.approx(per_minute)
    assert ApiLimit("x", 600).burst == 100


async def _read(name: str) -> GlobalConcurrencyLimitResponse | None:
    async with get_client() as client:
        try:
            return await client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            return None


def test_setup_creates_the_limits_from_the_settings_and_updates_them(
    setup_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect.settings import PREFECT_API_URL

    monkeypatch.setenv("POSTFLOWS_NEWSPAPER_RATE_PER_MINUTE", "0")
    result = CliRunner().invoke(app, ["setup"])
    assert result.exit_code == 0, result.output
    assert f"Prefect server: {PREFECT_API_URL.value()} (PREFECT_API_URL)" in result.output
    assert "rate limit address-service: 1200 requests per minute (burst 200" in result.output
    address, newspaper, commerce = (asyncio.run(_read(name)) for name in NAMES)
    assert address is not None and commerce is not None and newspaper is None
    assert (address.limit, address.slot_decay_per_second) == (200, pytest.approx(1000 / 60))
    assert address.active and commerce.limit == 200

    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_RATE_PER_MINUTE", "60")
    asyncio.run(ensure_api_limits(get_settings()))
    address = asyncio.run(_read(ADDRESS_SERVICE))
    assert address is not None
    assert (address.limit, address.slot_decay_per_second) == (10, pytest.approx(50 / 60))


def test_setup_without_a_server_is_refused_not_done_on_a_temporary_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_PROFILES_PATH", str(tmp_path / "no-profiles.toml"))
    monkeypatch.setenv("POSTFLOWS_DATA_DIR", str(tmp_path / "data"))  # no local server runs for it
    result = CliRunner().invoke(app, ["setup"])
    assert result.exit_code == 2
    assert "no Prefect server to set up: start one with `postflows server start`" in result.output
    assert "rate limit" not in result.output


async def test_every_request_of_a_run_takes_a_slot_of_its_api_limit(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    async with get_client() as client:
        # Slots come free so slowly that every one taken during the run is still counted at its end.
        await client.create_global_concurrency_limit(
            GlobalConcurrencyLimitCreate(name=ADDRESS_SERVICE, limit=10_000, slot_decay_per_second=0.0001)
        )
    await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    requests = sum(sandbox.transport.calls.values())
    async with get_client() as client:
        limit = await client.read_global_concurrency_limit_by_name(ADDRESS_SERVICE)
    assert requests >= 5  # upload, createfile, runbatch, status, download, deletes
    assert limit.active_slots == requests


async def test_without_a_limit_a_run_takes_no_slot(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[str] = []

    async def rate_limit(names: str, **_: object) -> None:
        taken.append(names)

    monkeypatch.setattr("prefect.concurrency.asyncio.rate_limit", rate_limit)
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert summary.result_rows > 0 and taken == []


async def test_outside_a_run_the_hook_never_asks_prefect(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_prefect(*_: object, **__: object) -> None:
        raise AssertionError("the hook talked to Prefect outside a run")

    monkeypatch.setattr("prefect.client.orchestration.get_client", no_prefect)
    hook = RateLimitHook(ADDRESS_SERVICE)
    await hook()
    assert hook.taken == 0


async def test_the_clients_of_a_process_ask_whether_a_limit_exists_once_a_minute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []

    async def read_limit(name: str) -> bool:
        asked.append(name)
        return False

    monkeypatch.setattr("runtime.api_limits._in_run", lambda: True)
    monkeypatch.setattr("runtime.api_limits._read_limit", read_limit)
    for _ in range(3):
        await RateLimitHook(ADDRESS_SERVICE)()
    assert asked == [ADDRESS_SERVICE]
    forget_known_limits()
    await RateLimitHook(ADDRESS_SERVICE)()
    assert asked == [ADDRESS_SERVICE, ADDRESS_SERVICE]
