"""A run interrupted at any point (Ctrl-C, a cancellation), even while its record is being made, is never
left RUNNING: it is INTERRUPTED, and the next run of the same work says that it takes it up. A run whose
process exits under it is CRASHED."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import history
from flows.runs import recorded_run
from history.recorder import RunRecorder
from runtime.run import Run
from runtime.settings import get_settings

KEY = "work-to-interrupt"


def _runs() -> list[history.Run]:
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        return list(reversed(history.list_runs(session, limit=10)))


async def _cancel_after(seconds: float, work: Callable[[], Awaitable[Any]]) -> None:
    task = asyncio.ensure_future(work())
    await asyncio.sleep(seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_an_interrupt_while_the_run_is_recorded_closes_the_record(
    flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_start = RunRecorder.start
    recorded = asyncio.Event()

    async def slow_start(*args: Any, **kwargs: Any) -> RunRecorder:
        recorder = await real_start(*args, **kwargs)
        recorded.set()
        await asyncio.sleep(1.0)  # the interrupt arrives now: the row exists, the run has not begun
        return recorder

    monkeypatch.setattr(RunRecorder, "start", slow_start)

    async def run() -> None:
        async with recorded_run(Run.begin("address-batch"), idempotency_key=KEY, parameters={}):
            raise AssertionError("the run's work never begins")

    await _cancel_after(0.3, run)
    assert recorded.is_set()
    [interrupted] = _runs()
    assert (interrupted.state, interrupted.error) == ("INTERRUPTED", "interrupted while starting")
    assert interrupted.finished_at is not None


async def test_an_interrupted_run_is_recorded_so_and_the_next_one_takes_it_up(flow_env: Path) -> None:
    async def interrupted() -> None:
        async with recorded_run(Run.begin("address-batch"), idempotency_key=KEY, parameters={}):
            await asyncio.sleep(30)

    await _cancel_after(0.5, interrupted)
    [first] = _runs()
    assert first.state == "INTERRUPTED"

    async with recorded_run(Run.begin("address-batch"), idempotency_key=KEY, parameters={}) as (
        _,
        summary,
    ):
        await summary.publish("# again", None, description="test")
    assert summary["took_up_interrupted_run"] == first.id
    assert [run.state for run in _runs()] == ["INTERRUPTED", "COMPLETED"]

    async with recorded_run(Run.begin("address-batch"), idempotency_key=KEY, parameters={}) as (
        _,
        after_a_success,
    ):
        await after_a_success.publish("# once more", None, description="test")
    assert "took_up_interrupted_run" not in after_a_success


async def test_a_run_whose_process_exits_under_it_is_crashed_not_failed(flow_env: Path) -> None:
    """A flow process whose worker was killed ends with SystemExit: Prefect records the run Crashed, and so
    does the history (an Exception fails the run)."""
    with pytest.raises(SystemExit):
        async with recorded_run(Run.begin("address-batch"), idempotency_key=KEY, parameters={}):
            raise SystemExit(1)
    with pytest.raises(ValueError, match="bad row"):
        async with recorded_run(Run.begin("address-batch"), idempotency_key="other", parameters={}):
            raise ValueError("bad row")
    crashed, failed = _runs()
    assert (crashed.state, crashed.error) == ("CRASHED", "SystemExit: 1")
    assert (failed.state, failed.error) == ("FAILED", "ValueError: bad row")
    assert crashed.finished_at is not None
