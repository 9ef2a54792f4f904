"""Fan-outs on a flow's task runner: chunks come back in order, at most ``lanes`` run at once, a failed chunk
stops new ones and its error reaches the flow; ``POSTFLOWS_TASK_RUNNER`` picks the runner as a run starts."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pandas as pd
import pytest
from prefect import flow, task
from prefect.task_runners import ThreadPoolTaskRunner
from prefect_dask.task_runners import DaskTaskRunner
from pydantic import ValidationError

from runtime.settings import Settings
from runtime.task_runners import fan_out_task_runner, task_runner_for
from tasks.fanout import ChunkPart, FanOutTaskRunner, fan_out
from tasks.progress import Progress, listening


class ChunkLog:
    """What the chunk tasks of one test saw (they run on the thread pool's threads)."""

    def __init__(self) -> None:
        self.guard = threading.Lock()
        self.running = self.most_running = 0
        self.started: list[int] = []
        self.concurrency: set[int] = set()


LOG = ChunkLog()


@task(name="slow-double-rows")
async def slow_double_rows(
    rows: pd.DataFrame, *, part: ChunkPart, concurrency: int, fail_chunk: int | None = None
) -> list[int]:
    with LOG.guard:
        LOG.started.append(part.index)
        LOG.concurrency.add(concurrency)
        LOG.running += 1
        LOG.most_running = max(LOG.most_running, LOG.running)
    try:
        if part.index == fail_chunk:
            raise ValueError(f"chunk {part.label} failed")
        await asyncio.sleep(0.05 if part.index else 0.3)
        for _ in range(len(rows)):
            part.row_done()
        return [int(value) * 2 for value in rows["value"]]
    finally:
        with LOG.guard:
            LOG.running -= 1


@flow(name="fan-out-check", task_runner=ThreadPoolTaskRunner())
async def doubled(rows: pd.DataFrame, fail_chunk: int | None = None) -> list[list[int]]:
    progress = await Progress.start("doubling")
    return await fan_out(slow_double_rows, rows, concurrency=16, progress=progress, fail_chunk=fail_chunk)


@pytest.fixture
def spread(monkeypatch: pytest.MonkeyPatch) -> ChunkLog:
    """The thread pool runner cut as if its chunks ran on other processes: two lanes of 8."""
    global LOG
    LOG = ChunkLog()
    monkeypatch.setattr("tasks.fanout.runs_in_this_process", lambda runner: False)
    return LOG


async def test_chunks_come_back_in_order_with_at_most_one_per_lane_running(spread: ChunkLog) -> None:
    rows = pd.DataFrame({"value": range(50)})
    seen: list[tuple[float, str]] = []
    with listening(lambda label, percent, detail: seen.append((percent, detail))):
        chunks = await doubled(rows)

    assert [value for chunk in chunks for value in chunk] == [2 * n for n in range(50)]
    assert len(chunks) == 8 and sorted(spread.started) == list(range(8))
    assert spread.most_running == 2 and spread.concurrency == {8}
    assert seen[-1] == (100.0, "50/50 rows")


async def test_a_failed_chunk_starts_no_other_and_its_error_reaches_the_flow(spread: ChunkLog) -> None:
    with pytest.raises(ValueError, match="chunk 2-of-8 failed"):
        await doubled(pd.DataFrame({"value": range(50)}), fail_chunk=1)
    # The first chunk was still running when the second failed: it ends, and nothing else starts.
    assert sorted(spread.started) == [0, 1]


def test_the_setting_names_the_runner() -> None:
    assert isinstance(task_runner_for("default"), ThreadPoolTaskRunner)
    local = task_runner_for("dask")
    assert isinstance(local, DaskTaskRunner) and local.address is None
    remote = task_runner_for("dask:tcp://10.0.0.5:8786")
    assert isinstance(remote, DaskTaskRunner) and remote.address == "tcp://10.0.0.5:8786"
    for wrong in ("spark", "dask:", "dask: "):
        with pytest.raises(ValidationError, match="task_runner"):
            Settings(task_runner=wrong)
        with pytest.raises(ValueError, match="POSTFLOWS_TASK_RUNNER"):
            task_runner_for(wrong)


def test_the_runner_is_chosen_when_a_run_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = fan_out_task_runner()  # as a flow module builds it on import
    monkeypatch.setenv("POSTFLOWS_TASK_RUNNER", "dask:tcp://10.0.0.5:8786")
    chosen: list[Any] = []
    for each in (runner.duplicate(), runner.duplicate()):  # the flow engine duplicates it for each run
        with each:
            chosen.append(each.delegate)
        monkeypatch.setenv("POSTFLOWS_TASK_RUNNER", "default")
    assert isinstance(chosen[0], DaskTaskRunner) and chosen[0].address == "tcp://10.0.0.5:8786"
    assert isinstance(chosen[1], ThreadPoolTaskRunner)
    assert isinstance(runner, FanOutTaskRunner)
    with pytest.raises(RuntimeError, match="not started"):
        runner.delegate  # noqa: B018
