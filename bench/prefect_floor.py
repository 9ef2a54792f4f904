"""What Prefect itself costs a flow run in one process: an async flow that does nothing, and one that awaits
``tasks`` async tasks that do nothing (``cache_policy=NO_CACHE``, as the project's steps are), each called
one after the other on a Prefect server; medians of ``repeats`` calls after one unmeasured call of each.

The floor under ``small_batch`` and ``flow_overhead`` (docs/performance.md, "What Prefect costs a flow
run"): whatever a flow does, its call costs at least the empty flow's, and each task run adds its share.

``python -m bench.prefect_floor [--repeats 9] [--tasks 10]`` runs on a Prefect server of its own (as the
flow benchmarks do, :func:`bench.flow_runs.prefect_api_url`) and prints the figures as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE


@task(cache_policy=NO_CACHE)
async def nothing(number: int) -> int:
    """Does nothing."""
    return number


@flow
async def empty_async() -> None:
    """Does nothing."""


@flow
async def awaits_tasks(tasks: int) -> int:
    """Awaits ``tasks`` task runs that do nothing, one after the other."""
    for number in range(tasks):
        await nothing(number)
    return tasks


async def _median_s(call: Callable[[], Awaitable[Any]], repeats: int) -> float:
    await call()  # unmeasured: first-use costs
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        await call()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


async def measure(repeats: int = 9, tasks: int = 10) -> dict[str, float]:
    """Median seconds of an empty flow's call and of a flow awaiting ``tasks`` empty tasks, and the share of
    one task run; on the Prefect API configured now."""
    empty_s = await _median_s(empty_async, repeats)
    with_tasks_s = await _median_s(lambda: awaits_tasks(tasks), repeats)
    return {
        "empty_flow_s": round(empty_s, 4),
        "flow_with_tasks_s": round(with_tasks_s, 4),
        "tasks": tasks,
        "per_task_s": round((with_tasks_s - empty_s) / tasks, 4) if tasks else 0.0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.prefect_floor", description=__doc__)
    parser.add_argument("--repeats", type=int, default=9, help="measured calls of each flow (default 9)")
    parser.add_argument("--tasks", type=int, default=10, help="task runs of the second flow (default 10)")
    args = parser.parse_args(argv)
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from bench.config import BenchConfig
    from bench.flow_runs import prefect_api_url

    with temporary_settings({PREFECT_API_URL: prefect_api_url(BenchConfig())}):
        figures = asyncio.run(measure(args.repeats, args.tasks))
    sys.stdout.write(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
