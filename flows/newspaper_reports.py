"""Reports of newspaper orders: status, summary and sendings (never while CONTROL), original and corrected
order → JSON files, report.xlsx and summary.md.

With an order id, the reports of that order. Without one (the daily schedule), a sweep of the run history:
each order recorded in the last days whose reports were never fetched, or were fetched at another status
than the one the service now gives, has them fetched again into its own folder.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any, Literal

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from connectors.newspaper import NewspaperClient, NewspaperRejected
from core.errors import PostflowsError
from fileio.errors import InputError
from fileio.files import write_text
from fileio.newspaper.outputs import summary_markdown
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import parameter_value, run_name
from flows.requests import OptionalOutputOptions, ReportsRequest
from flows.results import RunResult
from flows.runs import begin_run, recorded_run
from history.identity import named_key
from history.jobs import JobSnapshot
from history.recorder import RunRecorder
from history.remote_jobs import RemoteReport
from runtime.run import Run
from runtime.settings import Settings
from tasks.newspaper.order_report import (
    identity_of,
    order_summary_text,
    recorded_identity,
    write_order_files,
)
from tasks.newspaper.order_report_data import OrderOutcome
from tasks.newspaper.orders import OrderKind, fetch_order_reports, fetch_order_status
from tasks.newspaper.report_sweep import (
    order_facts,
    order_folder,
    recorded_kind,
    recorded_order,
    recorded_orders,
    reports_current,
    reports_data,
    with_status,
)
from tasks.newspaper.submissions import WarningLog
from tasks.retrying import run_step

FLOW_NAME = "newspaper-reports"
FORM_KIND = "Kind of order"
FETCHED = "fetched"
UP_TO_DATE = "up to date"
FAILED = "failed"
OUTCOMES = (FETCHED, UP_TO_DATE, FAILED)


class ReportsNotFetched(PostflowsError):
    """The reports of some orders of a sweep could not be fetched; those of the others were."""


class ReportsResult(RunResult):
    """What a run fetched of one order: its id and kind, the status its reports reflect (null when the
    service gave none), the API's warnings and notes on the reports the service does not give in that
    status."""

    order_id: int
    kind: OrderKind | None
    status: str | None
    warnings: list[str]
    notes: list[str]

    def summary(self) -> dict[str, Any]:
        """The result as JSON values; ``kind`` and ``status`` are there even when null."""
        return {**super().summary(), "kind": self.kind, "status": self.status}


class ReportsSweepResult(RunResult):
    """What a sweep of the orders recorded in the last ``days`` did: per order (its id), whether its
    reports were fetched, up to date or failed; the count of each; why each failed order failed; the API's
    warnings."""

    days: int
    orders: dict[str, str]
    counts: dict[str, int]
    failures: dict[str, str]
    warnings: list[str]


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    log_prints=False,
    flow_run_name=run_name(
        FLOW_NAME, lambda parameters: str(parameter_value(parameters, "request.order_id") or "sweep")
    ),
)
async def newspaper_reports(
    request: Annotated[
        ReportsRequest, form("Orders", "One order by its id, or every recent order whose reports are due.")
    ] = ReportsRequest(),  # noqa: B008 - an immutable part, the form's default
    output: Annotated[
        OptionalOutputOptions, form("Output", "Where one order's reports go on the worker.")
    ] = OptionalOutputOptions(),  # noqa: B008
) -> ReportsResult | ReportsSweepResult:
    """Fetch every report of an order that exists already, or of each recent order whose reports are due.

    Args:
        request: the order id the service returned on submission (none, or 0, sweeps the run history), the
            kind (standard or gratis; found out from the original order when auto) and how many last days
            a sweep looks at.
        output: where one order's JSON files, report.xlsx and summary.md go (default: the order's own
            folder: the one its order run recorded, else data dir/newspaper-orders/<order id>); a sweep
            always writes there.

    Returns:
        The run's result. One order: status, which reports were fetched, notes on those not available, files
        written. A sweep: per order whether its reports were fetched, up to date or failed.

    Raises:
        ReportsNotFetched: a sweep could not fetch the reports of some orders (after trying all of them).
    """
    run = begin_run(FLOW_NAME)
    kind, output_dir = request.kind, output.output_dir
    known: Literal["standard", "gratis"] | None = None if kind is None or kind == "auto" else kind
    if not request.order_id:
        if output_dir is not None:
            raise InputError(
                "an output folder is for one order's reports: a sweep writes each order's into its own "
                "folder; give an order id, or leave the folder empty",
                path=output_dir,
            )
        if known is not None:
            raise InputError(
                f"{known} names one order's kind: a sweep takes each order's from the run history; give an "
                "order id, or leave it auto",
                path=FORM_KIND,
            )
        return await _sweep(run, request.days)
    return await _one_order(run, request.order_id, None if output_dir is None else Path(output_dir), known)


async def _one_order(
    run: Run, order_id: int, output_dir: Path | None, known: Literal["standard", "gratis"] | None
) -> ReportsResult:
    """The reports of one order, into ``output_dir`` (default: the order's own folder)."""
    settings = run.settings
    parameters = {"order_id": order_id, "output_dir": output_dir, "kind": known}
    async with recorded_run(
        run,
        idempotency_key=named_key(f"{FLOW_NAME}:{order_id}", endpoint=run.endpoint("newspaper")),
        parameters=parameters,
    ) as (recorder, summary):
        if output_dir is None:
            output_dir = order_folder(settings.data_dir, order_id, await recorded_order(recorder, order_id))
        warnings = WarningLog(recorder)
        async with run.newspaper(recorder.request_log) as client:
            reports = await run_step(fetch_order_reports, client, order_id, kind=known)
        await warnings.add("reports", reports.warnings)
        for note in reports.notes:
            await recorder.message("info", "not-requested", note)
        outcome = OrderOutcome(order_id, reports=reports, warnings=warnings.lines)
        if reports.original is not None and isinstance(reports.original.body, dict):
            outcome.identity = identity_of(reports.original.body.get("basisInformation") or {})
        files = write_order_files(
            outcome, output_dir, max_bytes=settings.download_max_bytes, sandbox=recorder.outputs.sandbox
        )
        await recorder.documents((path.stem, path) for path in files)
        text = order_summary_text(f"Reports of newspaper order {order_id}", outcome, files)
        status = reports.status.status_value if reports.status else None
        summary.update(
            order_id=order_id,
            kind=reports.kind,
            status=str(status) if status is not None else None,
            warnings=warnings.lines,
            notes=reports.notes,
        )
        await summary.publish(text, output_dir, description="Order reports")
        get_run_logger().info("reports of order %s written to %s", order_id, output_dir)
        return summary.result(ReportsResult)


async def _sweep(run: Run, days: int) -> ReportsSweepResult:
    """Fetch again the reports of each order recorded in the last ``days`` whose reports are due; one order
    failing does not stop the others, and the run fails at the end naming every order that failed."""
    logger = get_run_logger()
    since = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
    settings = run.settings
    async with recorded_run(
        run,
        idempotency_key=named_key(f"{FLOW_NAME}:sweep", endpoint=run.endpoint("newspaper")),
        parameters={"days": days},
    ) as (recorder, summary):
        orders = await recorded_orders(recorder, since=since)
        outcomes: dict[str, str] = {}
        failures: dict[str, str] = {}
        warnings = WarningLog(recorder)
        async with run.newspaper(recorder.request_log) as client:
            for job in orders:
                try:
                    outcomes[job.remote_id] = await _refresh(client, recorder, warnings, job, settings)
                except Exception as error:  # noqa: BLE001 - one order's failure must not stop the others
                    outcomes[job.remote_id] = FAILED
                    failures[job.remote_id] = f"{type(error).__name__}: {error}"
                    code = error.code if isinstance(error, NewspaperRejected) and error.code else "reports"
                    await recorder.message(
                        "error",
                        code,
                        f"order {job.remote_id}: reports not fetched: {failures[job.remote_id]}",
                    )
                    logger.error("reports of order %s not fetched: %s", job.remote_id, error)
        counts = {state: list(outcomes.values()).count(state) for state in OUTCOMES}
        summary.update(
            days=days,
            orders=outcomes,
            counts=counts,
            failures=failures,
            warnings=warnings.lines,
        )
        facts: dict[str, Any] = {"days back": days, "orders looked at": len(orders), **counts}
        facts.update({f"order {order}": state for order, state in outcomes.items()})
        notes = [f"order {order}: {reason}" for order, reason in failures.items()]
        text = summary_markdown("Reports of recent newspaper orders", facts, warnings.lines, notes)
        await summary.publish(text, None, description="Order reports sweep")
        if failures:
            raise ReportsNotFetched(
                f"reports of {len(failures)} of {len(orders)} orders not fetched: "
                + "; ".join(f"order {order} ({reason})" for order, reason in failures.items())
            )
        logger.info("reports of %d orders fetched, %d up to date", counts[FETCHED], counts[UP_TO_DATE])
        return summary.result(ReportsSweepResult)


async def _refresh(
    client: NewspaperClient,
    recorder: RunRecorder,
    warnings: WarningLog,
    job: JobSnapshot,
    settings: Settings,
) -> str:
    """Look at one order's status; when its reports were never fetched or were fetched at another status,
    fetch them into the order's folder and record the status they reflect. Returns what was done."""
    order_id = int(job.remote_id)
    looked = await run_step(fetch_order_status, client, order_id)
    status = looked.value
    first_warning = len(warnings.lines)
    await warnings.add(f"order {order_id} status", looked.warnings)
    if reports_current(job.data, status):
        return UP_TO_DATE
    reports = await run_step(
        fetch_order_reports, client, order_id, kind=recorded_kind(job), status=status, original=False
    )
    await warnings.add(f"order {order_id} reports", reports.warnings)
    for note in reports.notes:
        await recorder.message("info", "not-requested", note)
    history = with_status(order_facts(job).status_history or [], status)
    outcome = OrderOutcome(
        order_id,
        reports=reports,
        identity=recorded_identity(job.data),
        status_history=history,
        warnings=warnings.lines[first_warning:],
    )
    folder = order_folder(settings.data_dir, order_id, job)
    files = write_order_files(
        outcome, folder, max_bytes=settings.download_max_bytes, sandbox=recorder.outputs.sandbox
    )
    summary_file = write_text(
        folder / "summary.md",
        order_summary_text(f"Reports of newspaper order {order_id}", outcome, files),
    )
    await recorder.documents(((path.stem, path) for path in [*files, summary_file]), job=job)
    await recorder.update_job(
        job,
        data=reports_data(status, history=history),
        report=RemoteReport(remote_status=history[-1]["statusValue"], status_date=status.status_date),
    )
    return FETCHED
