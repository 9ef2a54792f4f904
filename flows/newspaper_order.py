"""The newspaper order, end to end: submit (standard or gratis) → record the order id → delivery note →
wait for the status → summary, sendings and corrected order → JSON files, report.xlsx and summary.md.

The order's identity is newspaper number + issue number + delivery date: a re-run resumes the recorded
order and never posts a second one.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from connectors.newspaper import ApiResult, NewspaperClient, OrderStatus
from flows.runs import recorded_run
from history.models import JobState
from postflows.settings import get_settings
from postflows.wiring import newspaper_client, newspaper_endpoint
from tasks.idempotency import named_key
from tasks.newspaper.order_report import identity_of, order_summary_text, write_order_files
from tasks.newspaper.order_report_data import OrderOutcome
from tasks.newspaper.orders import (
    OrderKind,
    check_order,
    fetch_order_reports,
    load_order,
    order_key,
    save_delivery_note,
    submit_order,
    wait_for_order,
    waiting_set,
)
from tasks.newspaper.submissions import WarningLog, submit_newspaper
from tasks.polling import PollPolicy
from tasks.run_history import JobSnapshot, RunRecorder
from tasks.submission import recording_wait

FLOW_NAME = "newspaper-order"


@flow(name=FLOW_NAME, log_prints=False)
async def newspaper_order(
    order_path: Path,
    output_dir: Path,
    gratis: bool = False,
    resubmit: bool = False,
    waiting_statuses: list[str] | None = None,
    max_wait_s: float = 3600.0,
    min_poll_interval_s: float = 2.0,
    max_poll_interval_s: float = 60.0,
) -> dict[str, Any]:
    """Submit a newspaper order and collect its delivery note and reports.

    Args:
        order_path: the order body as JSON (§2.1; a gratis order adds its ``gratisDelivery``).
        output_dir: where the delivery note, JSON files, report.xlsx and summary.md go.
        gratis: POST orders/gratis instead of orders/standard.
        resubmit: post even though an earlier POST of this order may have reached the service.
        waiting_statuses: statuses to keep polling in (default LOADED and CONTROL; CONTROL always is).
        max_wait_s: give up waiting for the status after this many seconds (a re-run resumes).
        min_poll_interval_s: first wait between status checks.
        max_poll_interval_s: longest wait between status checks.

    Returns:
        The run summary: order id, final status, files written and the API's warnings.
    """
    settings = get_settings()
    logger = get_run_logger()
    order_path, output_dir = Path(order_path), Path(output_dir)
    kind: OrderKind = "gratis" if gratis else "standard"
    order = load_order(order_path, kind)
    basis = order.to_body().get("basisInformation") or {}
    key = (
        named_key(order_key(order, kind), endpoint=newspaper_endpoint(settings))
        if _identified(order)
        else None
    )
    parameters = {"order_path": order_path, "output_dir": output_dir, "kind": kind, "resubmit": resubmit}
    async with recorded_run(settings, flow=FLOW_NAME, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        async with recorder.step("check order"):
            check_order(order, today=dt.date.today())
        warnings = WarningLog(recorder)
        identity = identity_of(basis)
        async with newspaper_client(settings, request_log=recorder.request_log) as client:
            submission = await submit_newspaper(
                recorder,
                warnings,
                kind="order",
                what=f"{kind} order",
                send=lambda: submit_order(client, order),
                resubmit=resubmit,
                hint=(
                    "check in the online dispatch-list service whether an order for newspaper "
                    f"{identity['newspaper number']}, issue {identity['issue number']}, delivery date "
                    f"{identity['delivery date']} exists"
                ),
                data={"order_kind": kind, **identity},
            )
            order_id = int(submission.job.remote_id)
            summary.update(order_id=order_id, resumed=submission.resumed, idempotency_key=key)
            logger.info("%s order %s", "resuming" if submission.resumed else "submitted", order_id)
            await _delivery_note(
                client,
                recorder,
                submission.job,
                output_dir,
                warnings,
                max_bytes=settings.download_max_bytes,
            )
            outcome = OrderOutcome(order_id, identity=identity, resumed=submission.resumed)
            async with recording_wait(recorder, submission.job, what=f"order {order_id}"):
                status = await _wait(
                    client,
                    recorder,
                    submission.job,
                    outcome,
                    warnings,
                    waiting=waiting_set(waiting_statuses),
                    policy=PollPolicy(max_wait_s, min_poll_interval_s, max_poll_interval_s),
                )
            outcome.reports = await fetch_order_reports(
                client, order_id, kind=kind, status=status, original=False
            )
        await warnings.add("reports", outcome.reports.warnings)
        outcome.warnings = warnings.lines
        files = write_order_files(outcome, output_dir, max_bytes=settings.download_max_bytes)
        for path in files:
            await recorder.document(path.stem, path, job=submission.job)
        await recorder.update_job(
            submission.job, status=JobState.COMPLETED, remote_status=str(status.status_value), finished=True
        )
        text = order_summary_text(f"Newspaper {kind} order {order_id}", outcome, files)
        summary.update(status=str(status.status_value), warnings=warnings.lines, notes=outcome.reports.notes)
        await summary.publish(text, output_dir, description="Order summary")
        return dict(summary)


def _identified(order: Any) -> bool:
    basis = order.basis_information
    return bool(
        basis is not None
        and basis.newspaper_number
        and basis.issue_number is not None
        and basis.issue_number.from_ is not None
        and basis.delivery_date is not None
    )


async def _delivery_note(
    client: NewspaperClient,
    recorder: RunRecorder,
    job: JobSnapshot,
    output_dir: Path,
    warnings: WarningLog,
    *,
    max_bytes: int,
) -> None:
    """Fetch and save the delivery note unless an earlier run of this order already did."""
    saved = [Path(name) for name in job.data.get("delivery_note", [])]
    if saved and all(path.is_file() for path in saved):
        return
    paths, note_warnings = await save_delivery_note(
        client, int(job.remote_id), output_dir, max_bytes=max_bytes
    )
    await warnings.add("delivery note", note_warnings)
    await recorder.update_job(job, data={"delivery_note": [str(path) for path in paths]})
    for path in paths:
        await recorder.document("delivery-note", path, job=job)


async def _wait(
    client: NewspaperClient,
    recorder: RunRecorder,
    job: JobSnapshot,
    outcome: OrderOutcome,
    warnings: WarningLog,
    *,
    waiting: frozenset[str],
    policy: PollPolicy,
) -> OrderStatus:
    """Poll the status, recording every change with its statusDate (continuing an earlier run's history)."""
    history: list[dict[str, Any]] = list(job.data.get("status_history", []))

    async def on_status(result: ApiResult[OrderStatus]) -> None:
        await warnings.add("status", result.warnings)
        status = result.value
        value = str(status.status_value) if status.status_value is not None else None
        date = status.status_date.isoformat() if status.status_date else None
        if history and (history[-1]["statusValue"], history[-1]["statusDate"]) == (value, date):
            return
        history.append(
            {"statusValue": value, "statusDate": date, "recordedAt": dt.datetime.now(dt.UTC).isoformat()}
        )
        await recorder.update_job(
            job,
            status=JobState.RUNNING,
            remote_status=value,
            status_date=status.status_date,
            data={"status_history": history},
        )

    status = await wait_for_order(
        client, int(job.remote_id), waiting=waiting, policy=policy, on_status=on_status
    )
    outcome.status_history = history
    return status
