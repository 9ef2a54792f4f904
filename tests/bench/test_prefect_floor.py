"""The floor of a flow run in one process (bench/prefect_floor.py) measures what it says: an empty flow's
call, and a flow's whose task runs the server records, one per task asked for. No timing is asserted."""

from __future__ import annotations

import asyncio
import time

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowFilter, FlowFilterName, FlowRunFilter, FlowRunFilterId
from prefect.client.schemas.sorting import FlowRunSort

from bench.prefect_floor import measure


async def test_the_floor_times_an_empty_flow_and_one_with_its_task_runs(prefect_harness: None) -> None:
    figures = await measure(repeats=1, tasks=3)
    assert figures["tasks"] == 3
    assert figures["empty_flow_s"] > 0 and figures["flow_with_tasks_s"] > 0
    share = (figures["flow_with_tasks_s"] - figures["empty_flow_s"]) / 3
    assert abs(figures["per_task_s"] - share) < 0.001
    async with get_client() as client:
        (last,) = await client.read_flow_runs(
            flow_filter=FlowFilter(name=FlowFilterName(any_=["awaits-tasks"])),
            sort=FlowRunSort.START_TIME_DESC,
            limit=1,
        )
        of_last = FlowRunFilter(id=FlowRunFilterId(any_=[last.id]))
        deadline = time.monotonic() + 30
        # Task runs reach the server as events, after the flow run has returned.
        while len(task_runs := await client.read_task_runs(flow_run_filter=of_last)) < 3:
            assert time.monotonic() < deadline, task_runs
            await asyncio.sleep(0.1)
    assert last.state is not None and last.state.is_completed()
    assert sorted(run.name.rsplit("-", 1)[0] for run in task_runs) == ["nothing"] * 3
