"""The newspaper-reports sweep against the in-process sandbox: the orders of the last days whose reports were
never fetched or were fetched at another status get them again, in their own folder; up-to-date and older
orders are only looked at or left alone; one order failing does not stop the others.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

import history
from fileio.errors import InputError
from flows.newspaper_order import newspaper_order
from flows.newspaper_reports import ReportsNotFetched, newspaper_reports
from history.models import RemoteJob, Run, RunMessage
from tasks.polling import PollTimedOut
from tests.clocks import Clock
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.flows.test_newspaper_order import QUICK, THREE_STATUSES, order_body, write_order

JOB_SECONDS = 100.0


@pytest.fixture
def clock(sandbox: Sandbox) -> Clock:
    """Orders go LOADED → CONTROL → DONE over 100 s of a clock that only the test moves."""
    moved = Clock()
    sandbox.config.clock = moved
    sandbox.config.job_seconds = JOB_SECONDS
    sandbox.config.order_statuses = THREE_STATUSES
    return moved


def _factory(data_dir: Path) -> Any:
    return history.session_factory(f"sqlite:///{data_dir / 'history.db'}")


def order_job(data_dir: Path, order_id: int) -> RemoteJob:
    with _factory(data_dir)() as session:
        job = history.job_with_remote_id(session, api="newspaper", kind="order", remote_id=str(order_id))
        assert job is not None
        return job


def sweep_runs(data_dir: Path) -> list[Run]:
    with _factory(data_dir)() as session:
        statement = select(Run).where(Run.flow == "newspaper-reports").order_by(Run.id)
        return list(session.scalars(statement))


def errors_of(data_dir: Path, run: Run) -> list[RunMessage]:
    with _factory(data_dir)() as session:
        statement = select(RunMessage).where(RunMessage.run_id == run.id, RunMessage.level == "error")
        return list(session.scalars(statement))


def requests_for(sandbox: Sandbox, order_id: int) -> dict[str, int]:
    """GET requests about one order by leaf (status, summary, sendings, …)."""
    counts: dict[str, int] = {}
    for (method, path), count in sandbox.transport.calls.items():
        if method == "GET" and f"/orders/{order_id}/" in path:
            leaf = path.rsplit("/", 1)[1]
            counts[leaf] = counts.get(leaf, 0) + count
    return counts


async def submit(tmp_path: Path, issue: int) -> tuple[int, Path]:
    """An order run with the default wait: it ends at LOADED right after the POST."""
    out = tmp_path / f"order-{issue}"
    summary = await call(
        newspaper_order, write_order(tmp_path, order_body(issue=issue), f"{issue}.json"), out, **QUICK
    )
    assert summary.status == "LOADED"
    return int(summary.order_id), out


async def test_a_sweep_fetches_the_reports_again_once_the_status_changed(
    sandbox: Sandbox, clock: Clock, flow_env: Path, tmp_path: Path
) -> None:
    order_id, out = await submit(tmp_path, 201)
    assert requests_for(sandbox, order_id) == {
        "delivery-note": 1,
        "status": 1,
        "summary": 1,
        "sendings": 1,
        "corrected-standard-order": 1,
    }
    loaded_at = order_job(flow_env, order_id).data["reports_status"]

    # Nothing changed: one look at the status, nothing fetched.
    first = await call(
        newspaper_reports,
    )
    assert first.orders == {str(order_id): "up to date"}
    assert first.counts == {"fetched": 0, "up to date": 1, "failed": 0}
    assert requests_for(sandbox, order_id)["status"] == 2 and requests_for(sandbox, order_id)["summary"] == 1

    clock.advance(JOB_SECONDS)
    second = await call(
        newspaper_reports,
    )
    assert second.orders == {str(order_id): "fetched"}
    assert requests_for(sandbox, order_id) == {
        "delivery-note": 1,
        "status": 3,
        "summary": 2,
        "sendings": 2,
        "corrected-standard-order": 2,
    }
    # Into the order's own folder: the status it is in now, and the order as released.
    assert json.loads((out / "status.json").read_text())["statusValue"] == "DONE"
    assert json.loads((out / "summary.json").read_text())["statusValue"] == "DONE"
    corrected = json.loads((out / "corrected-order.json").read_text())
    assert corrected["basisInformation"]["issueNumber"] == {"from": 201}
    assert "DONE" in (out / "summary.md").read_text()
    job = order_job(flow_env, order_id)
    assert job.data["reports_status"]["statusValue"] == "DONE"
    assert job.data["reports_status"]["statusDate"] != loaded_at["statusDate"]
    assert dt.datetime.fromisoformat(job.data["reports_fetched_at"]) > job.created_at
    assert [entry["statusValue"] for entry in job.data["status_history"]] == ["LOADED", "DONE"]
    assert job.remote_status == "DONE"

    # Up to date again: only the status is looked at.
    third = await call(
        newspaper_reports,
    )
    assert third.orders == {str(order_id): "up to date"}
    assert requests_for(sandbox, order_id) == {
        "delivery-note": 1,
        "status": 4,
        "summary": 2,
        "sendings": 2,
        "corrected-standard-order": 2,
    }
    assert [run.state for run in sweep_runs(flow_env)] == ["COMPLETED"] * 3


async def test_a_sweep_fetches_missing_reports_and_leaves_older_orders_alone(
    sandbox: Sandbox, clock: Clock, flow_env: Path, tmp_path: Path
) -> None:
    old_id, _ = await submit(tmp_path, 202)
    with _factory(flow_env).begin() as session:
        session.execute(
            update(RemoteJob)
            .where(RemoteJob.remote_id == str(old_id))
            .values(created_at=dt.datetime.now(dt.UTC) - dt.timedelta(days=31))
        )
    # An order whose run gave up in CONTROL: its reports were never fetched.
    sandbox.config.order_statuses = ("CONTROL",)
    with pytest.raises(PollTimedOut):
        await call(
            newspaper_order,
            write_order(tmp_path, order_body(issue=203), "203.json"),
            tmp_path / "order-203",
            min_poll_interval_s=0.05,
            max_poll_interval_s=0.1,
            max_wait_s=0.3,
        )
    [control_job] = [job for job in _order_jobs(flow_env) if job.remote_id != str(old_id)]
    control_id = int(control_job.remote_id)
    assert "reports_status" not in control_job.data
    clock.advance(JOB_SECONDS)
    old_requests = requests_for(sandbox, old_id)

    swept = await call(
        newspaper_reports,
    )
    assert swept.orders == {str(control_id): "fetched"}
    assert requests_for(sandbox, old_id) == old_requests
    # In CONTROL summary and sendings are not asked for; what the service gives is written.
    assert "summary" not in requests_for(sandbox, control_id)
    assert "sendings" not in requests_for(sandbox, control_id)
    folder = tmp_path / "order-203"
    assert json.loads((folder / "status.json").read_text())["statusValue"] == "CONTROL"
    assert (folder / "delivery-note.pdf").is_file() and (folder / "report.xlsx").is_file()
    assert order_job(flow_env, control_id).data["reports_status"]["statusValue"] == "CONTROL"

    # A longer look back takes the older order in too; its status changed since its run.
    wider = await call(newspaper_reports, days=40)
    assert wider.orders == {str(old_id): "fetched", str(control_id): "up to date"}


async def test_one_failing_order_does_not_stop_the_others(
    sandbox: Sandbox, clock: Clock, flow_env: Path, tmp_path: Path
) -> None:
    failing_id, failing_out = await submit(tmp_path, 204)
    other_id, other_out = await submit(tmp_path, 205)
    clock.advance(JOB_SECONDS)
    sandbox.inject(
        api="newspaper", endpoint=f"*orders/{failing_id}/summary", kind="http_status", value=500, times=None
    )

    with pytest.raises(ReportsNotFetched, match=f"1 of 2 orders not fetched: order {failing_id}"):
        await call(
            newspaper_reports,
        )
    assert json.loads((other_out / "status.json").read_text())["statusValue"] == "DONE"
    assert order_job(flow_env, other_id).data["reports_status"]["statusValue"] == "DONE"
    assert json.loads((failing_out / "status.json").read_text())["statusValue"] == "LOADED"
    assert order_job(flow_env, failing_id).data["reports_status"]["statusValue"] == "LOADED"
    [failed] = sweep_runs(flow_env)
    assert failed.state == "FAILED" and failed.summary is not None
    assert failed.summary["orders"] == {str(failing_id): "failed", str(other_id): "fetched"}
    [message] = errors_of(flow_env, failed)
    assert f"order {failing_id}: reports not fetched: ServerError" in message.text

    # Once the service answers again, the next sweep fetches only what is still due.
    sandbox.config.faults.clear()
    again = await call(
        newspaper_reports,
    )
    assert again.orders == {str(failing_id): "fetched", str(other_id): "up to date"}
    assert json.loads((failing_out / "summary.json").read_text())["statusValue"] == "DONE"


async def test_one_orders_reports_go_to_its_own_folder_unless_told(
    sandbox: Sandbox, clock: Clock, flow_env: Path, tmp_path: Path
) -> None:
    order_id, out = await submit(tmp_path, 206)
    clock.advance(JOB_SECONDS)
    summary = await call(newspaper_reports, order_id)
    assert summary.status == "DONE" and summary.kind == "standard"
    assert json.loads((out / "status.json").read_text())["statusValue"] == "DONE"
    assert (out / "original-order.json").is_file()
    # Unknown to the history: <data dir>/newspaper-orders/<order id>.
    with _factory(flow_env).begin() as session:
        session.execute(update(RemoteJob).where(RemoteJob.remote_id == str(order_id)).values(data={}))
    await call(newspaper_reports, order_id)
    assert (flow_env / "newspaper-orders" / str(order_id) / "status.json").is_file()


async def test_a_sweep_refuses_the_options_of_one_order(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    with pytest.raises(InputError, match="an output folder is for one order's reports"):
        await call(newspaper_reports, output_dir=tmp_path / "out")
    with pytest.raises(InputError, match="standard names one order's kind"):
        await call(newspaper_reports, kind="standard")
    assert sum(sandbox.transport.calls.values()) == 0


def _order_jobs(data_dir: Path) -> list[RemoteJob]:
    with _factory(data_dir)() as session:
        statement = select(RemoteJob).where(RemoteJob.kind == "order").order_by(RemoteJob.id)
        return list(session.scalars(statement))
