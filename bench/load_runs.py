"""The load test's flow runs: a mix of four deployments over the three APIs, each run with its own input (a
copy of an example of ``examples/``, varied by its number, so each run is distinct work with an idempotency
identity of its own), all created at once through the Prefect client, then watched until every one is final;
then as many runs of the empty flow (:mod:`bench.empty_flow`), created and watched the same way.

* ``address-batch`` (address service: upload, createfile, runbatch, status checks, download): an explicit
  idempotency key per run;
* ``address-query`` (address service, runquery2 per row): reads only;
* ``address-validation`` (commerce API, one validation per row): reads only;
* ``newspaper-order`` (newspaper API: one order posted, its status, delivery note and reports): the order's
  issue number varies, so its key (a hash of the order) does.
"""

from __future__ import annotations

import asyncio
import csv
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.load_world import EMPTY_FLOW
from bench.prefect_requests import RequestTally

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
MIX = ("address-batch", "address-query", "address-validation", "newspaper-order")
FINAL_STATES = frozenset({"COMPLETED", "FAILED", "CRASHED", "CANCELLED"})
ROWS_PER_FILE = 4
CREATE_AT_ONCE = 25
"""Flow runs being created at the same moment (the rest wait for a free place): all at once, as fast as the
server takes them, without opening hundreds of connections."""


@dataclass
class PlannedRun:
    """One flow run to create: its deployment, parameters and (for submitting flows) idempotency key."""

    number: int
    flow: str
    parameters: dict[str, Any]
    key: str | None = None
    flow_run_id: str | None = None
    created_at: float | None = None
    run: dict[str, Any] = field(default_factory=dict)


def _rows(example: Path) -> tuple[list[str], list[list[str]]]:
    with example.open(encoding="utf-8", newline="") as source:
        table = list(csv.reader(source, delimiter=";"))
    return table[0], table[1:]


def _table_copy(example: Path, number: int, target: Path) -> Path:
    """``ROWS_PER_FILE`` rows of ``example`` from a place ``number`` chooses, their ids made the run's own."""
    header, rows = _rows(example)
    chosen = [list(rows[(number + offset) % len(rows)]) for offset in range(ROWS_PER_FILE)]
    for index, row in enumerate(chosen):
        row[0] = f"{number:05d}{index:02d}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8", newline="") as sink:
        csv.writer(sink, delimiter=";").writerows([header, *chosen])
    return target


def _order_copy(number: int, target: Path) -> Path:
    """The example newspaper order with an issue number of the run's own."""
    order = json.loads((EXAMPLES / "newspaper-order.json").read_text(encoding="utf-8"))
    order["basisInformation"]["issueNumber"] = {"from": 1000 + number}
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(order, indent=2), encoding="utf-8")
    return target


def plan_runs(count: int, workdir: Path, stamp: str) -> list[PlannedRun]:
    """``count`` runs cycling through :data:`MIX`, inputs under ``workdir/inputs``, outputs under
    ``workdir/out``; ``stamp`` makes the keys of this load test its own."""
    planned = []
    for number in range(count):
        flow = MIX[number % len(MIX)]
        inputs, out = workdir / "inputs" / f"{number:04d}", workdir / "out" / f"{number:04d}"
        output = {"output_dir": str(out)}
        key = None
        if flow == "address-batch":
            key = f"load-{stamp}-{number:04d}"
            source = _table_copy(EXAMPLES / "address-batch.csv", number, inputs / "addresses.csv")
            request: dict[str, Any] = {"input_path": str(source), "idempotency_key": key}
            parameters = {"request": request, "output": output, "polling": {"min_poll_interval_s": 1.0}}
        elif flow == "address-query":
            source = _table_copy(EXAMPLES / "address-batch.csv", number, inputs / "addresses.csv")
            parameters = {"request": {"input_path": str(source)}, "output": output}
        elif flow == "address-validation":
            source = _table_copy(EXAMPLES / "commerce-addresses.csv", number, inputs / "addresses.csv")
            parameters = {"request": {"input_path": str(source)}, "output": output}
        else:
            order = _order_copy(number, inputs / "order.json")
            parameters = {
                "request": {"order_path": str(order)},
                "output": output,
                "polling": {"min_poll_interval_s": 1.0},
            }
        planned.append(PlannedRun(number, flow, parameters, key))
    return planned


def plan_empty_runs(count: int) -> list[PlannedRun]:
    """``count`` runs of the empty flow's deployment (``empty/empty``), without parameters."""
    return [PlannedRun(number, EMPTY_FLOW, {}) for number in range(count)]


async def create_runs(api_url: str, planned: list[PlannedRun], stamp: str, tally: RequestTally) -> None:
    """Create every planned run of its deployment (``<flow>/<flow>``) at once on the Prefect API at
    ``api_url``; notes ids and times. ``tally`` counts the requests this sends."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: api_url}):
        await _create(get_client(httpx_settings=tally.httpx_settings()), planned, stamp)


async def _create(prefect: Any, planned: list[PlannedRun], stamp: str) -> None:
    async with prefect as client:
        flows = dict.fromkeys(run.flow for run in planned)
        deployments = {flow: await client.read_deployment_by_name(f"{flow}/{flow}") for flow in flows}
        gate = asyncio.Semaphore(CREATE_AT_ONCE)

        async def create(run: PlannedRun) -> None:
            async with gate:
                created = await client.create_flow_run_from_deployment(
                    deployments[run.flow].id,
                    parameters=run.parameters,
                    idempotency_key=f"load-{stamp}-run-{run.flow}-{run.number:04d}",
                )
                run.flow_run_id, run.created_at = str(created.id), time.time()

        await asyncio.gather(*(create(run) for run in planned))


async def wait_until_final(
    api_url: str, planned: list[PlannedRun], timeout_s: float, tally: RequestTally, poll_s: float = 2.0
) -> bool:
    """Poll the runs until every one is final or ``timeout_s`` passed; each run's last reading is kept in
    ``run`` (state, times, message). True when all ended. ``tally`` counts the requests this sends."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: api_url}):
        client = get_client(httpx_settings=tally.httpx_settings())
        return await _watch(client, planned, time.monotonic() + timeout_s, poll_s)


async def _watch(prefect: Any, planned: list[PlannedRun], deadline: float, poll_s: float) -> bool:
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    by_id = {run.flow_run_id: run for run in planned}
    async with prefect as client:
        while True:
            ids = [run_id for run_id, run in by_id.items() if run.run.get("state_type") not in FINAL_STATES]
            for start in range(0, len(ids), 200):
                chunk = ids[start : start + 200]
                found = await client.read_flow_runs(
                    flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=chunk)), limit=len(chunk)
                )
                for flow_run in found:
                    by_id[str(flow_run.id)].run = _reading(flow_run)
            if all(run.run.get("state_type") in FINAL_STATES for run in planned):
                return True
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(poll_s)


def _reading(flow_run: Any) -> dict[str, Any]:
    state = flow_run.state
    return {
        "name": flow_run.name,
        "state_type": state.type.value if state else None,
        "state_name": state.name if state else None,
        "message": (state.message or "") if state else "",
        "expected_start_time": _epoch(flow_run.expected_start_time),
        "start_time": _epoch(flow_run.start_time),
        "end_time": _epoch(flow_run.end_time),
        "run_count": flow_run.run_count,
    }


def _epoch(moment: Any) -> float | None:
    return None if moment is None else float(moment.timestamp())
