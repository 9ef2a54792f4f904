"""The newspaper order flow against the in-process sandbox: submit, delivery note, status, reports; an order
that stays LOADED ends the run at once, named statuses are waited in; resuming without a second POST; the
pending-marker refusal; the CONTROL rule; warnings; validation before any call.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook
from prefect.client.orchestration import get_client
from sqlalchemy import select

import history
from connectors.errors import ServerError, TransportFailure
from connectors.newspaper import OrderInvalid
from fileio.errors import InputError
from fileio.sandbox_marks import BANNER_SHEET
from flows.newspaper_order import newspaper_order
from flows.newspaper_reports import newspaper_reports
from history.models import JobEvent, RemoteJob, Run, RunMessage
from tasks.polling import PollTimedOut
from tasks.submission import SubmissionUncertain
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

ORDERS_STANDARD = "/orders/standard"
QUICK = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.1, "max_wait_s": 10.0}
# A sandbox order that goes through LOADED and CONTROL to DONE, and a run that waits in LOADED too: it ends
# at DONE, with the corrected order released.
THREE_STATUSES = ("LOADED", "CONTROL", "DONE")
TO_DONE = {**QUICK, "waiting_statuses": ["LOADED"]}


def order_body(
    *, issue: int = 101, days: int = 7, late: bool = False, weight: int | None = 180
) -> dict[str, Any]:
    shipment: dict[str, Any] = {
        "countMailMan": 120,
        "countCity": 40,
        "countRest": 5,
        "shipmentRemark": "Stapel",
    }
    if weight is not None:
        shipment["weight"] = weight
    return {
        "language": "DE",
        "basisInformation": {
            "newspaperNumber": "4711",
            "issueNumber": {"from": issue},
            "lateDelivery": late,
            "deliveryDate": (dt.date.today() + dt.timedelta(days=days)).isoformat(),
            "differenceEmails": ["vertrieb@seetaler-bote.ch"],
            "confirmationEmails": ["druck@seetaler-bote.ch"],
        },
        "sender": {
            "companyName1": "Seetal Medien AG",
            "address1": "Hauptstrasse 1",
            "zipCode": 6280,
            "city": "Hochdorf",
        },
        "nationalDelivery": {"sortedDelivery": {"sortedShipments": [shipment]}},
    }


def write_order(tmp_path: Path, body: dict[str, Any], name: str = "order.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def runs(data_dir: Path) -> list[Run]:
    factory = history.session_factory(f"sqlite:///{data_dir / 'history.db'}")
    with factory() as session:
        return list(session.scalars(select(Run).order_by(Run.id)))


def messages(data_dir: Path) -> list[RunMessage]:
    factory = history.session_factory(f"sqlite:///{data_dir / 'history.db'}")
    with factory() as session:
        return list(session.scalars(select(RunMessage).order_by(RunMessage.id)))


def order_jobs(data_dir: Path) -> list[RemoteJob]:
    factory = history.session_factory(f"sqlite:///{data_dir / 'history.db'}")
    with factory() as session:
        return list(
            session.scalars(select(RemoteJob).where(RemoteJob.kind == "order").order_by(RemoteJob.id))
        )


async def test_order_end_to_end(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    sandbox.config.order_statuses = THREE_STATUSES
    out = tmp_path / "out"
    summary = await call(newspaper_order, write_order(tmp_path, order_body()), out, **TO_DONE)

    assert summary.status == "DONE"
    assert summary.resumed is False
    order_id = summary.order_id
    assert (out / "delivery-note.pdf").read_bytes().startswith(b"%PDF")
    assert (out / "delivery-note.response.json").is_file()
    for name in (
        "status.json",
        "summary.json",
        "sendings.json",
        "corrected-order.json",
        "report.xlsx",
        "summary.md",
    ):
        assert (out / name).is_file(), name
    assert json.loads((out / "summary.json").read_text())["totalNewspaper"] == 165
    sendings = json.loads((out / "sendings.json").read_text())
    assert sendings["nationalItems"][0]["count"] == 165
    workbook = load_workbook(out / "report.xlsx", read_only=True)
    assert workbook.sheetnames == [BANNER_SHEET, "order", "status history", "sendings", "warnings"]
    facts = {row[0]: row[1] for row in workbook["order"].iter_rows(min_row=2, values_only=True)}
    assert facts["order id"] == order_id and facts["status"] == "DONE" and facts["total newspapers"] == 165
    statuses = [row[0] for row in workbook["status history"].iter_rows(min_row=2, values_only=True)]
    assert statuses[-1] == "DONE" and statuses[0] in ("LOADED", "CONTROL")
    assert f"order {order_id}" in (out / "summary.md").read_text()

    assert sandbox.transport.count(ORDERS_STANDARD) == 1
    [run] = runs(flow_env)
    assert run.state == "COMPLETED" and run.summary is not None and run.summary["order_id"] == order_id
    # The marker committed before the POST became the order's row: one row, the service's id, all states.
    [job] = order_jobs(flow_env)
    assert job.remote_id == str(order_id) and job.status == "COMPLETED" and job.finished_at is not None
    assert job.remote_status == "DONE"
    # Where the order's files are and the status its reports reflect, for the reports sweep.
    assert job.data["output_dir"] == str(out.resolve())
    assert job.data["reports_status"] == {
        "statusValue": "DONE",
        "statusDate": job.data["status_history"][-1]["statusDate"],
    }
    assert dt.datetime.fromisoformat(job.data["reports_fetched_at"]) <= dt.datetime.now(dt.UTC)
    factory = history.session_factory(f"sqlite:///{flow_env / 'history.db'}")
    with factory() as session:
        events = list(
            session.scalars(select(JobEvent).where(JobEvent.job_id == job.id).order_by(JobEvent.id))
        )
    # Every status change is recorded with the service's statusDate.
    assert [event.status for event in events][:2] == ["PENDING", "SUBMITTED"]
    assert events[-1].status == "COMPLETED" and events[-1].remote_status == "DONE"
    running = [event for event in events if event.status == "RUNNING"]
    assert running and all(event.status_date is not None for event in running)


async def test_rerun_resumes_the_recorded_order(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    path = write_order(tmp_path, order_body(issue=102))
    first = await call(newspaper_order, path, tmp_path / "first", **QUICK)
    second = await call(newspaper_order, path, tmp_path / "second", **QUICK)

    assert second.order_id == first.order_id
    assert second.resumed is True
    assert sandbox.transport.count(ORDERS_STANDARD) == 1
    assert (tmp_path / "second" / "report.xlsx").is_file()


async def test_failure_after_submit_resumes_without_second_post(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = write_order(tmp_path, order_body(issue=103))
    sandbox.inject(api="newspaper", endpoint="*delivery-note", kind="http_status", value=500, times=None)
    with pytest.raises(ServerError):
        await call(newspaper_order, path, tmp_path / "out", **QUICK)
    [failed] = runs(flow_env)
    assert failed.state == "FAILED"
    assert [job.remote_id for job in order_jobs(flow_env) if not job.remote_id.startswith("pending:")]

    sandbox.config.faults.clear()
    summary = await call(newspaper_order, path, tmp_path / "out", **QUICK)
    assert summary.resumed is True and summary.status == "LOADED"
    assert sandbox.transport.count(ORDERS_STANDARD) == 1
    assert (tmp_path / "out" / "delivery-note.pdf").is_file()


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ({"kind": "http_status", "value": 502}, ServerError),
        ({"kind": "drop"}, TransportFailure),
        ({"kind": "lost_answer"}, TransportFailure),
    ],
    ids=["502", "dropped connection", "order made, answer lost"],
)
async def test_lost_answer_leaves_a_marker_that_refuses_a_blind_resubmission(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, fault: dict[str, Any], error: type[Exception]
) -> None:
    path = write_order(tmp_path, order_body(issue=104))
    sandbox.inject(api="newspaper", endpoint="*orders/standard", method="POST", **fault)
    with pytest.raises(error):
        await call(newspaper_order, path, tmp_path / "out", **QUICK)
    [marker] = order_jobs(flow_env)
    assert marker.status == "UNCERTAIN" and marker.remote_id.startswith("pending:")
    assert sandbox.transport.count(ORDERS_STANDARD) == 1

    with pytest.raises(SubmissionUncertain, match="--resubmit"):
        await call(newspaper_order, path, tmp_path / "out", **QUICK)
    assert sandbox.transport.count(ORDERS_STANDARD) == 1

    summary = await call(newspaper_order, path, tmp_path / "out", resubmit=True, **QUICK)
    assert summary.status == "LOADED" and summary.resumed is False
    assert sandbox.transport.count(ORDERS_STANDARD) == 2
    # From now on the recorded id is resumed, the marker is gone.
    again = await call(newspaper_order, path, tmp_path / "out", **QUICK)
    assert again.order_id == summary.order_id and again.resumed is True
    assert sandbox.transport.count(ORDERS_STANDARD) == 2


async def test_control_blocks_summary_and_sendings(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    sandbox.config.order_statuses = ("CONTROL",)
    path = write_order(tmp_path, order_body(issue=105))
    with pytest.raises(PollTimedOut, match="CONTROL"):
        await call(
            newspaper_order,
            path,
            tmp_path / "out",
            min_poll_interval_s=0.05,
            max_poll_interval_s=0.1,
            max_wait_s=1.0,
        )
    assert sandbox.transport.count("/summary") == 0
    assert sandbox.transport.count("/sendings") == 0
    # The time-out leaves the order WAITING: a re-run with the same order picks it up.
    [job] = order_jobs(flow_env)
    assert job.status == "WAITING" and job.remote_status == "CONTROL" and job.finished_at is None
    order_id = int(job.remote_id)

    report = await call(newspaper_reports, order_id, tmp_path / "reports")
    assert report.status == "CONTROL"
    assert sandbox.transport.count("/summary") == 0
    assert sandbox.transport.count("/sendings") == 0
    assert "CONTROL" in (tmp_path / "reports" / "summary.md").read_text()
    assert (tmp_path / "reports" / "original-order.json").is_file()


async def test_api_warnings_are_recorded_and_summarised(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.config.order_statuses = THREE_STATUSES
    path = write_order(tmp_path, order_body(issue=106, late=True, weight=None))
    summary = await call(newspaper_order, path, tmp_path / "out", **TO_DONE)

    # 0900 and 0901 are the sandbox's own warning numbers, no §7 codes: the texts carry them.
    recorded = [message.text for message in messages(flow_env) if message.level == "warning"]
    assert any("0900" in text for text in recorded) and any("0901" in text for text in recorded)
    assert all(text.startswith(f"standard order {summary.order_id}: ") for text in recorded)
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "0900" in text and "0901" in text
    assert any("0900" in line for line in summary.warnings)
    workbook = load_workbook(tmp_path / "out" / "report.xlsx", read_only=True)
    assert len(list(workbook["warnings"].iter_rows(min_row=2))) == 2
    # The corrected order completes the missing weight; it is kept as received.
    corrected = json.loads((tmp_path / "out" / "corrected-order.json").read_text())
    assert corrected["nationalDelivery"]["sortedDelivery"]["sortedShipments"][0]["weight"] == 180


async def test_invalid_order_fails_before_any_request(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    body = order_body(days=-3)
    body["basisInformation"]["confirmationEmails"] = ["not-an-address"]
    with pytest.raises(OrderInvalid) as caught:
        await call(newspaper_order, write_order(tmp_path, body), tmp_path / "out", **QUICK)
    assert "basisInformation.deliveryDate" in str(caught.value)
    assert "basisInformation.confirmationEmails[0]" in str(caught.value)
    assert sum(sandbox.transport.calls.values()) == 0
    [run] = runs(flow_env)
    assert run.state == "FAILED" and "deliveryDate" in (run.error or "")


async def test_service_rejection_is_recorded_and_may_be_retried(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    body = order_body(issue=107)
    body["nationalDelivery"]["sortedDelivery"]["sortedShipments"][0]["weight"] = 5000
    path = write_order(tmp_path, body)
    with pytest.raises(Exception, match="0030"):
        await call(newspaper_order, path, tmp_path / "out", **QUICK)
    assert any(m.level == "error" and m.code == "0030" for m in messages(flow_env))
    # Refused by the service: nothing exists, so the next run may post again.
    body["nationalDelivery"]["sortedDelivery"]["sortedShipments"][0]["weight"] = 180
    write_order(tmp_path, body)
    summary = await call(newspaper_order, path, tmp_path / "out", **QUICK)
    assert summary.status == "LOADED"
    assert sandbox.transport.count(ORDERS_STANDARD) == 2


async def test_gratis_order_saves_partial_delivery_notes(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    body = order_body(issue=108)
    body["basisInformation"]["newspaperNumber"] = "5120"
    del body["nationalDelivery"]
    body["gratisDelivery"] = {
        "gratisShipments": [{"locationCategory": "A", "weight": 90}, {"locationCategory": "B", "weight": 90}]
    }
    sandbox.config.order_statuses = THREE_STATUSES
    summary = await call(
        newspaper_order, write_order(tmp_path, body), tmp_path / "out", gratis=True, **TO_DONE
    )

    assert summary.status == "DONE"
    notes = sorted(path.name for path in (tmp_path / "out").glob("delivery-note*.pdf"))
    assert notes == ["delivery-note-2.pdf", "delivery-note-3.pdf", "delivery-note.pdf"]
    corrected = json.loads((tmp_path / "out" / "corrected-order.json").read_text())
    assert corrected["gratisDelivery"]["gratisShipments"][0]["count"] == 2930
    assert sandbox.transport.count("/orders/gratis") == 1


async def test_cancellation_while_polling_leaves_the_order_waiting_for_the_next_run(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.config.job_seconds = 2.0
    sandbox.config.order_statuses = THREE_STATUSES
    path = write_order(tmp_path, order_body(issue=109))
    run = asyncio.ensure_future(call(newspaper_order, path, tmp_path / "out", **TO_DONE))
    while sandbox.transport.count("/status") < 2:
        await asyncio.sleep(0.05)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    [job] = order_jobs(flow_env)
    assert job.status == "WAITING" and job.finished_at is None
    assert [run.state for run in runs(flow_env)] == ["INTERRUPTED"]

    summary = await call(newspaper_order, path, tmp_path / "out", **TO_DONE)
    assert summary.resumed is True and summary.order_id == int(job.remote_id)
    assert sandbox.transport.count(ORDERS_STANDARD) == 1


async def test_an_order_filled_in_the_form_is_the_same_order_as_its_file(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    body = order_body(issue=130)
    state = await call(newspaper_order, order=body, return_state=True, **QUICK)
    summary = await state.aresult()
    assert summary.status == "LOADED" and summary.resumed is False
    date = body["basisInformation"]["deliveryDate"]
    assert (flow_env / "newspaper-orders" / f"4711-130-{date}" / "delivery-note.pdf").is_file()
    async with get_client() as client:
        run = await client.read_flow_run(state.state_details.flow_run_id)
    assert run.name.startswith("newspaper-order-4711-130-")

    again = await call(newspaper_order, write_order(tmp_path, body), tmp_path / "file", **QUICK)
    assert again.resumed is True and again.order_id == summary.order_id
    assert sandbox.transport.count(ORDERS_STANDARD) == 1


async def test_an_order_comes_from_a_file_or_the_form_never_both(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    with pytest.raises(InputError, match="no order: give an order file or fill in the order"):
        await call(newspaper_order, order={}, **QUICK)
    with pytest.raises(InputError, match="not both"):
        await call(newspaper_order, write_order(tmp_path, order_body()), order=order_body(), **QUICK)
    with pytest.raises(OrderInvalid, match="basisInformation.deliveryDate"):
        await call(newspaper_order, order=order_body(days=-3), output_dir=tmp_path / "out", **QUICK)
    assert sandbox.transport.count(ORDERS_STANDARD) == 0


async def test_an_order_that_stays_loaded_ends_the_run_right_after_the_post(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    # The sandbox keeps the order LOADED for good (its default); its job is not done within the test, so
    # the corrected order is not released yet.
    sandbox.config.job_seconds = 3600
    out = tmp_path / "out"
    state = await call(
        newspaper_order,
        write_order(tmp_path, order_body(issue=150)),
        out,
        min_poll_interval_s=0.05,
        max_poll_interval_s=0.1,
        max_wait_s=3600.0,
        return_state=True,
    )
    assert state.is_completed(), state.message
    summary = await state.aresult()

    assert summary.status == "LOADED"
    assert sandbox.transport.count(ORDERS_STANDARD) == 1
    assert sandbox.transport.count("/delivery-note") == 1
    # One look at the status: LOADED ends the wait, and the reports are fetched at that status.
    assert sandbox.transport.count("/status") == 1
    assert sandbox.transport.count("/summary") == 1 and sandbox.transport.count("/sendings") == 1
    assert sandbox.transport.count("/corrected-standard-order") == 1
    assert any("corrected order not available" in note for note in summary.notes)
    assert (out / "delivery-note.pdf").is_file() and (out / "summary.json").is_file()
    assert json.loads((out / "status.json").read_text())["statusValue"] == "LOADED"
    assert not (out / "corrected-order.json").exists()
    [job] = order_jobs(flow_env)
    assert job.status == "COMPLETED" and job.remote_status == "LOADED" and job.finished_at is not None
    assert job.data["output_dir"] == str(out.resolve())
    assert job.data["reports_status"]["statusValue"] == "LOADED"
    assert job.data["reports_status"]["statusDate"] == job.data["status_history"][-1]["statusDate"]


async def test_a_status_named_to_wait_in_is_waited_out(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.config.order_statuses = THREE_STATUSES
    sandbox.config.job_seconds = 1.0
    out = tmp_path / "out"
    summary = await call(
        newspaper_order,
        write_order(tmp_path, order_body(issue=151)),
        out,
        waiting_statuses=["loaded"],
        min_poll_interval_s=0.05,
        max_poll_interval_s=0.1,
        max_wait_s=10.0,
    )
    assert summary.status == "DONE"
    assert sandbox.transport.count("/status") > 2
    [job] = order_jobs(flow_env)
    seen = [entry["statusValue"] for entry in job.data["status_history"]]
    assert seen[0] == "LOADED" and seen[-1] == "DONE"
    assert (out / "corrected-order.json").is_file()

    # An order that stays LOADED is waited for until the longest wait is over; the job stays WAITING.
    sandbox.config.order_statuses = ("LOADED",)
    with pytest.raises(PollTimedOut, match="LOADED"):
        await call(
            newspaper_order,
            write_order(tmp_path, order_body(issue=152)),
            tmp_path / "loaded",
            waiting_statuses=["LOADED"],
            min_poll_interval_s=0.05,
            max_poll_interval_s=0.1,
            max_wait_s=0.5,
        )
    waiting = order_jobs(flow_env)[-1]
    assert waiting.status == "WAITING" and waiting.remote_status == "LOADED"
    assert "reports_status" not in waiting.data
