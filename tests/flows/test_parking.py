"""Parking long waits under the Prefect test server: a deployment run of the address batch parks the job,
schedules its follow-up on the same deployment and ends; the follow-up resumes the job from the history,
downloads and cleans up, with one runbatch in all. A purchase or an order without an estimate parks
again and again until it is done, posted once. A run outside a deployment never parks.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
from prefect.client.schemas.objects import FlowRun
from prefect.flow_engine import run_flow

import history
from flows.address_batch import address_batch
from flows.address_purchase import address_purchase
from flows.address_results import AddressBatchResult
from flows.newspaper_order import newspaper_order
from flows.parking import FOLLOW_UP_TAG
from flows.results import RunParked
from runtime.settings import get_settings
from tests.flows.calls import call, json_parameters
from tests.flows.conftest import Sandbox
from tests.flows.test_newspaper_order import order_body, write_order

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


@pytest.fixture(autouse=True)
def _sandbox_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """The deployment runs here run on the embedded sandbox, which a deployment run uses only when asked."""
    monkeypatch.setenv("POSTFLOWS_SANDBOX", "1")


@pytest.fixture
async def deployment() -> AsyncIterator[UUID]:
    """The address batch as a deployment of the test server (nothing serves it: the test runs its runs)."""
    runner_deployment = await address_batch.to_deployment(name="parking-test")  # type: ignore[misc]
    deployment_id: UUID = await runner_deployment.apply()
    yield deployment_id
    async with get_client() as client:
        await client.delete_deployment(deployment_id)


async def _flow_runs(deployment_id: UUID) -> list[FlowRun]:
    async with get_client() as client:
        runs = await client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id]))
        )
    return sorted(runs, key=lambda run: run.created or datetime.min.replace(tzinfo=UTC))


async def _run(flow_run: FlowRun, flow: Any = address_batch) -> Any:
    """Run a deployment's flow run in this process, as a worker would; returns its final state."""
    return await run_flow(flow, flow_run=flow_run, return_type="state")


def _history() -> list[history.Run]:
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        runs = history.list_runs(session, limit=50)
        return sorted((history.get_run(session, run.id) for run in runs), key=lambda run: run.id)  # type: ignore[arg-type, return-value]


async def test_a_long_job_parks_and_its_follow_up_finishes_it(
    sandbox: Sandbox,
    flow_env: Path,
    deployment: UUID,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sandbox.config.job_seconds = 3
    monkeypatch.setenv("POSTFLOWS_PARK_AFTER_S", "1")
    parameters = json_parameters(
        address_batch, input_path=str(EXAMPLE), output_dir=str(tmp_path / "out"), **FAST
    )
    async with get_client() as client:
        first = await client.create_flow_run_from_deployment(deployment, parameters=parameters)

    parked = await _run(first)
    assert parked.is_completed(), parked.message
    summary = await parked.result()
    assert isinstance(summary, RunParked) and summary.parked.startswith("follow-up at ")
    (parked_run,) = _history()
    assert parked_run.state == "PARKED"
    (batch,) = [job for job in parked_run.remote_jobs if job.kind == "batch"]
    assert batch.status == "WAITING" and batch.data["parked"]["count"] == 1
    assert sandbox.transport.count("/runbatch") == 1
    assert sandbox.transport.count("/deletefile") == 0  # the job still runs: its files stay

    # The sandbox says how long the job has left: the follow-up is due then, on the same deployment.
    _, follow_up = await _flow_runs(deployment)
    assert str(follow_up.id) == summary.follow_up_run
    assert follow_up.state is not None and follow_up.state.is_scheduled()
    assert follow_up.parameters == first.parameters and FOLLOW_UP_TAG in follow_up.tags
    assert follow_up.idempotency_key == f"postflows-parked:address-service:batch:{batch.remote_id}:1"
    due = follow_up.expected_start_time
    assert due is not None
    # Due when the 3 s job ends: after the run started plus (nearly) the job's length, and no later than the
    # parked run's end plus the job's length (however slowly the run itself went).
    assert parked_run.started_at.replace(tzinfo=UTC) + timedelta(seconds=2) < due
    assert due <= parked_run.finished_at.replace(tzinfo=UTC) + timedelta(seconds=4)

    await asyncio.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()))
    finished = await _run(follow_up)
    assert finished.is_completed(), finished.message
    result = await finished.result()
    assert isinstance(result, AddressBatchResult) and result.result_rows > 0
    assert (tmp_path / "out" / "results.xlsx").is_file()
    parked_run, resumed = _history()
    assert parked_run.state == "PARKED" and resumed.state == "COMPLETED"
    (batch,) = [job for job in parked_run.remote_jobs if job.kind == "batch"]  # recorded by the first run
    assert batch.status == "COMPLETED" and batch.remote_id == summary.parked_job
    assert sandbox.transport.count("/runbatch") == 1  # resumed from the history, never started again
    assert sandbox.transport.count("/deletefile") == 2
    assert len(await _flow_runs(deployment)) == 2  # done: no further follow-up


async def test_a_run_outside_a_deployment_waits_in_process(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox.config.job_seconds = 1.5
    monkeypatch.setenv("POSTFLOWS_PARK_AFTER_S", "0.1")
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert isinstance(summary, AddressBatchResult) and summary.result_rows > 0
    (run,) = _history()
    assert run.state == "COMPLETED"


async def test_a_short_job_of_a_deployment_run_waits_in_process(
    sandbox: Sandbox, flow_env: Path, deployment: UUID, tmp_path: Path
) -> None:
    parameters = json_parameters(
        address_batch, input_path=str(EXAMPLE), output_dir=str(tmp_path / "out"), **FAST
    )
    async with get_client() as client:
        flow_run = await client.create_flow_run_from_deployment(deployment, parameters=parameters)
    state = await _run(flow_run)
    assert state.is_completed() and isinstance(await state.result(), AddressBatchResult)
    assert len(await _flow_runs(deployment)) == 1


async def _parked_until_done(flow: Any, parameters: dict[str, Any]) -> tuple[list[Any], list[str | None]]:
    """Deploy ``flow``, run one flow run of it and every follow-up it schedules, each when it is due, until
    one finishes without parking. Returns the runs' summaries and the follow-ups' idempotency keys."""
    runner_deployment = await flow.to_deployment(name="parking-test")
    deployment_id: UUID = await runner_deployment.apply()
    try:
        async with get_client() as client:
            flow_run = await client.create_flow_run_from_deployment(deployment_id, parameters=parameters)
        summaries = []
        for _ in range(20):
            state = await _run(flow_run, flow)
            assert state.is_completed(), state.message
            summaries.append(await state.result())
            if not isinstance(summaries[-1], RunParked):
                break
            flow_run = (await _flow_runs(deployment_id))[-1]
            assert str(flow_run.id) == summaries[-1].follow_up_run
            assert flow_run.expected_start_time is not None
            await asyncio.sleep(max(0.0, (flow_run.expected_start_time - datetime.now(UTC)).total_seconds()))
        keys = [run.idempotency_key for run in (await _flow_runs(deployment_id))[1:]]
    finally:
        async with get_client() as client:
            await client.delete_deployment(deployment_id)
    return summaries, keys


def _posted(sandbox: Sandbox, path_part: str) -> int:
    return sum(
        n for (method, path), n in sandbox.transport.calls.items() if method == "POST" and path_part in path
    )


async def test_a_purchase_parks_until_it_is_done_and_is_posted_once(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox.config.job_seconds = 2
    monkeypatch.setenv("POSTFLOWS_PARK_AFTER_S", "0.5")
    examples = EXAMPLE.parent
    parameters = json_parameters(
        address_purchase,
        addresses_path=str(examples / "purchase-addresses.csv"),
        parameters_path=str(examples / "purchase.json"),
        output_dir=str(tmp_path / "out"),
        min_poll_interval_s=0.05,
        max_poll_interval_s=0.1,
        max_wait_s=30.0,
    )
    summaries, keys = await _parked_until_done(address_purchase, parameters)
    assert len(summaries) >= 2 and summaries[-1].output_addresses == 6
    assert [run.state for run in _history()] == ["PARKED"] * (len(summaries) - 1) + ["COMPLETED"]
    assert keys == [
        f"postflows-parked:newspaper:purchase:{summaries[0].parked_job}:{count}"
        for count in range(1, len(summaries))
    ]
    assert _posted(sandbox, "purchases") == 1


async def test_an_order_parks_until_it_is_done_and_is_posted_once(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox.config.job_seconds = 2
    sandbox.config.order_statuses = ("LOADED", "CONTROL", "DONE")
    monkeypatch.setenv("POSTFLOWS_PARK_AFTER_S", "0.5")
    parameters = json_parameters(
        newspaper_order,
        order_path=str(write_order(tmp_path, order_body(issue=140))),
        output_dir=str(tmp_path / "out"),
        waiting_statuses=["LOADED"],
        min_poll_interval_s=0.05,
        max_poll_interval_s=0.1,
        max_wait_s=30.0,
    )
    summaries, keys = await _parked_until_done(newspaper_order, parameters)
    assert len(summaries) >= 2 and summaries[-1].status == "DONE"
    assert summaries[-1].resumed is True and summaries[-1].order_id == int(summaries[0].parked_job)
    assert [run.state for run in _history()] == ["PARKED"] * (len(summaries) - 1) + ["COMPLETED"]
    assert keys == [
        f"postflows-parked:newspaper:order:{summaries[0].parked_job}:{count}"
        for count in range(1, len(summaries))
    ]
    assert (tmp_path / "out" / "delivery-note.pdf").is_file()
    assert _posted(sandbox, "/orders/standard") == 1
