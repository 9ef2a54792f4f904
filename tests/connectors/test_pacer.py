"""The pacer of per-minute limits: requests go evenly spaced just under the limit, concurrent callers in turn,
and a client sends its paced requests (individual queries) through it, its other requests not."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from connectors.address_service import AddressServiceClient
from connectors.http import ClientOptions
from connectors.ratelimit import Pacer


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def test_slots_are_spaced_so_that_no_minute_sees_more_than_the_limit_less_the_margin() -> None:
    time = FakeTime()
    pacer = Pacer(6000, margin=0.0, clock=time.clock, sleep=time.sleep)
    delays = [pacer.take() for _ in range(3)]
    assert delays == pytest.approx([0.0, 0.01, 0.02])


def test_requests_that_fell_behind_catch_up_by_half_the_margin_at_most() -> None:
    time = FakeTime()
    pacer = Pacer(6000, margin=0.02, clock=time.clock, sleep=time.sleep)  # 5880 a minute, 60 to catch up
    time.now += 60.0  # idle (or late) for a minute: the one due now and 60 more go at once, then the pace
    assert [pacer.take() for _ in range(61)] == pytest.approx([0.0] * 61, abs=1e-9)
    assert pacer.take() == pytest.approx(60 / 5880)
    time.now += 600.0
    sent = 0
    while pacer.take() < 1e-9:  # the busiest minute: all that go at once, then a minute at the pace
        sent += 1
    assert sent + round(60.0 / pacer.interval_s) <= 6000


async def test_concurrent_callers_wait_in_turn() -> None:
    time = FakeTime()
    pacer = Pacer(60, margin=0.0, clock=time.clock, sleep=time.sleep)
    await asyncio.gather(*(pacer.wait() for _ in range(4)))
    assert sorted(time.sleeps) == [1.0, 2.0, 3.0]


def test_a_pacer_needs_a_positive_limit() -> None:
    with pytest.raises(ValueError):
        Pacer(0)


async def test_queries_are_paced_and_batch_calls_are_not() -> None:
    time = FakeTime()
    pacer = Pacer(60, margin=0.0, clock=time.clock, sleep=time.sleep)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/runquery2"):
            result = {"Status": 0, "Result": {"Id": 1, "Data": []}}
            return httpx.Response(200, json={"RunQuery2Result": result})
        return httpx.Response(200, json={"CreateFileResult": {"Status": 0, "FileToken": "t"}})

    async with AddressServiceClient(
        "http://service.invalid/REST/v1",
        username="u",
        password=SecretStr("p"),
        options=ClientOptions(transport=httpx.MockTransport(answer), pacer=pacer),
    ) as client:
        await client.create_file()
        await client.create_file()
        assert time.sleeps == []
        for record_id in (1, 2, 3):
            await client.run_query("key", record_id, {"Name_in": "Muster"})
    assert time.sleeps == [1.0, 2.0]


def test_the_wiring_shares_one_pacer_per_service_when_the_limit_is_set(tmp_path: Path) -> None:
    from runtime.settings import Settings
    from runtime.wiring import address_service_client

    paced = Settings(_env_file=None, data_dir=tmp_path, address_service_queries_per_minute=600)
    first, second = address_service_client(paced), address_service_client(paced)
    assert first.pacer is not None and first.pacer is second.pacer
    assert first.pacer.per_minute == 600
    unpaced = Settings(_env_file=None, data_dir=tmp_path)
    assert address_service_client(unpaced).pacer is None
