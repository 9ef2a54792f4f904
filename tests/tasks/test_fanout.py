"""How a fan-out cuts its rows: one chunk where the chunks run in this process, lanes of a few chunks each
where they run elsewhere, never more than ``concurrency`` requests in flight; outside a flow run the one chunk
runs inline."""

from __future__ import annotations

import pandas as pd
import pytest
from prefect import task

from tasks.fanout import LANE_CONCURRENCY, ChunkPart, ChunkPlan, fan_out
from tasks.progress import Progress, listening


@pytest.mark.parametrize(("rows", "concurrency"), [(1, 1), (38, 8), (10_000, 32), (5, 64)])
def test_in_this_process_every_row_is_one_chunk_with_the_whole_concurrency(
    rows: int, concurrency: int
) -> None:
    plan = ChunkPlan.for_runner(rows, concurrency, in_process=True)
    assert (plan.lanes, plan.concurrency) == (1, concurrency)
    assert plan.bounds(rows) == [(0, rows)]


@pytest.mark.parametrize(
    ("rows", "concurrency", "lanes", "per_chunk", "chunks"),
    [(38, 8, 1, 8, 4), (38, 16, 2, 8, 8), (4, 16, 2, 8, 4), (10_000, 20, 3, 6, 12), (3, 1, 1, 1, 3)],
)
def test_elsewhere_rows_go_in_lanes_and_the_requests_in_flight_stay_within_concurrency(
    rows: int, concurrency: int, lanes: int, per_chunk: int, chunks: int
) -> None:
    plan = ChunkPlan.for_runner(rows, concurrency, in_process=False)
    bounds = plan.bounds(rows)
    assert (plan.lanes, plan.concurrency, len(bounds)) == (lanes, per_chunk, chunks)
    assert plan.lanes * plan.concurrency <= concurrency and plan.concurrency <= LANE_CONCURRENCY
    assert bounds[0][0] == 0 and bounds[-1][1] == rows
    assert all(stop == start for (_, stop), (start, _) in zip(bounds, bounds[1:], strict=False))  # no gap


@task(name="double-rows")
async def double_rows(rows: pd.DataFrame, *, part: ChunkPart, concurrency: int, factor: int) -> list[int]:
    answers = []
    for value in rows["value"]:
        answers.append(int(value) * factor)
        part.row_done()
    return answers


async def test_outside_a_flow_run_the_one_chunk_runs_here_and_progress_reaches_the_end() -> None:
    seen: list[tuple[float, str]] = []
    rows = pd.DataFrame({"value": range(1, 6)})
    with listening(lambda label, percent, detail: seen.append((percent, detail))):
        progress = await Progress.start("doubling")
        chunks = await fan_out(double_rows, rows, concurrency=3, progress=progress, factor=2)

    assert chunks == [[2, 4, 6, 8, 10]]
    assert seen[-1] == (100.0, "5/5 rows")
