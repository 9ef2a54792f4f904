"""The newspaper order, end to end: submit (standard or gratis) → record the order id → delivery note →
wait while the order is in CONTROL (or a status the user names) → summary, sendings and corrected order as
the service gives them in the status reached → JSON files, report.xlsx and summary.md.

The order's identity is a hash of what is posted (kind and canonical JSON body) and the service it goes
to: a re-run resumes the recorded order and never posts a second one. An order answered with its id and
errors was taken: it is followed like any other, its errors named with its id in the log, the summary and
summary.md. The run records the order's folder and
the status its reports reflect, so the daily newspaper-reports sweep fetches them again once the status
changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from connectors.newspaper import ApiResult, GratisOrder, NewspaperClient, OrderStatus, StandardOrder
from core.swiss_time import swiss_today
from fileio.errors import InputError
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.newspaper_forms import OrderForm
from flows.parking import poll_policy
from flows.requests import NewspaperOrderRequest, OwnOutputOptions, PollingOptions
from flows.results import RunParked, RunResult
from flows.runs import RunSummary, begin_run, recorded_run
from history.jobs import JobSnapshot
from history.models import JobState
from history.recorder import RunRecorder
from history.remote_jobs import RemoteReport
from runtime.run import Run
from tasks.job_waits import JobParked, recorded_wait, waited_before
from tasks.newspaper.order_report import identity_of, order_summary_text, write_order_files
from tasks.newspaper.order_report_data import OrderOutcome
from tasks.newspaper.orders import (
    OrderKind,
    check_order,
    fetch_order_reports,
    load_order,
    order_from_body,
    order_key,
    save_delivery_note,
    submit_order,
    wait_for_order,
    waiting_set,
)
from tasks.newspaper.report_sweep import (
    ORDERS_FOLDER,
    delivery_note_data,
    folder_data,
    order_facts,
    reports_data,
    status_history_data,
    submitted_data,
    with_status,
)
from tasks.newspaper.submissions import WarningLog, newspaper_context, submit_newspaper
from tasks.polling import PollPolicy, WaitParked
from tasks.retrying import run_step
from tasks.submission import Submission, SubmissionJob

FLOW_NAME = "newspaper-order"
FORM_ORDER = "order (form)"


def _order_words(parameters: Mapping[str, Any]) -> str | None:
    """The newspaper and issue of an order filled in the form, for the run's name."""
    request = parameters.get("request")
    order: Any = request.order if isinstance(request, NewspaperOrderRequest) else None
    if isinstance(request, Mapping):
        order = request.get("order")
    if isinstance(order, OrderForm):
        order = order.to_body()
    basis = order.get("basisInformation") if isinstance(order, Mapping) else None
    if not isinstance(basis, Mapping) or not basis.get("newspaperNumber"):
        return None
    issue = basis.get("issueNumber") or {}
    return f"{basis['newspaperNumber']}-{issue.get('from', '')}".rstrip("-")


class NewspaperOrderResult(RunResult):
    """What a newspaper order run found: the order's id, the status its wait ended in (the status its reports
    reflect), the API's warnings, notes on the reports the service does not give in that status, and the
    errors of the answer that took the order (only when it named some)."""

    order_id: int
    status: str
    warnings: list[str]
    notes: list[str]
    errors: list[str] | None = None


@dataclass(frozen=True)
class _Order:
    """The order a run submits, as read before the run starts: its body and kind, its identity (newspaper,
    issue, delivery date), where its files go, the key its work is recorded under and whether to post it
    again."""

    body: StandardOrder | GratisOrder
    kind: OrderKind
    identity: dict[str, Any]
    output_dir: Path
    key: str
    resubmit: bool


@dataclass(frozen=True)
class _Placed:
    """A submitted order as the run follows it: the run, its recorder and the API's warnings, the order's
    job and what the run found of it so far."""

    run: Run
    recorder: RunRecorder
    warnings: WarningLog
    order: _Order
    job: JobSnapshot
    outcome: OrderOutcome


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    log_prints=False,
    flow_run_name=run_name(FLOW_NAME, "request.order_path", _order_words),
)
async def newspaper_order(
    request: Annotated[
        NewspaperOrderRequest,
        form("Order", "The order: a JSON file on the worker or filled in, standard or gratis."),
    ],
    polling: Annotated[
        PollingOptions, form("Waiting", "How long and how often to check the order's status.")
    ] = PollingOptions(),  # noqa: B008 - an immutable part, the form's default
    output: Annotated[
        OwnOutputOptions, form("Output", "Where the results go on the worker.")
    ] = OwnOutputOptions(),  # noqa: B008
) -> NewspaperOrderResult | RunParked:
    """Submit a newspaper order and collect its delivery note and reports.

    The order is read from its JSON file (§2.1; a gratis order adds its ``gratisDelivery``) or taken as
    filled in, posted once (orders/standard or orders/gratis), its delivery note saved, its status waited
    out while in CONTROL (or a status the request names), and its reports written as the service gives
    them in the status reached. A re-run of the same order resumes it.

    Args:
        request: the order, its kind, the statuses to wait in and whether to post again.
        polling: how long and how often to check the status.
        output: where the delivery note, JSON files, report.xlsx and summary.md go (default: data
            dir/newspaper-orders/<newspaper>-<issue>-<delivery date>).

    Returns:
        The run's result: order id, the status the wait ended in, files written and the API's warnings; or,
        when the wait was parked, when its follow-up run comes.
    """
    run = begin_run(FLOW_NAME)
    order_path = None if request.order_path is None else Path(request.order_path)
    order = _read_order(run, request, order_path, output)
    parameters: dict[str, Any] = {
        "order_path": order_path,
        "order": None if order_path else order.body.to_body(),
    }
    parameters.update(output_dir=order.output_dir, kind=order.kind, resubmit=order.resubmit)
    async with recorded_run(run, idempotency_key=order.key, parameters=parameters) as (
        recorder,
        summary,
    ):
        async with recorder.step("check order"):
            check_order(order.body, today=swiss_today())
        async with run.newspaper(recorder.request_log) as client:
            placed = await _place(run, recorder, summary, client, order)
            status = await _follow(
                placed,
                client,
                waiting=waiting_set(request.waiting_statuses),
                policy=poll_policy(polling, run.settings),
            )
            if isinstance(status, JobParked):
                return await summary.park(status)  # a follow-up run continues the wait
        await _publish(placed, summary, status)
        return summary.result(NewspaperOrderResult)


def _read_order(
    run: Run, request: NewspaperOrderRequest, order_path: Path | None, output: OwnOutputOptions
) -> _Order:
    """The order the request gives (its file or the form), where its files go and its key."""
    kind: OrderKind = "gratis" if request.gratis else "standard"
    submitted = _the_order(order_path, request.order, kind)
    basis = submitted.to_body().get("basisInformation") or {}
    return _Order(
        body=submitted,
        kind=kind,
        identity=identity_of(basis),
        output_dir=output.folder_or(run.settings.data_dir / ORDERS_FOLDER / _folder_name(basis)),
        key=order_key(submitted, kind, endpoint=run.endpoint("newspaper")),
        resubmit=request.resubmit,
    )


async def _place(
    run: Run, recorder: RunRecorder, summary: RunSummary, client: NewspaperClient, order: _Order
) -> _Placed:
    """Post the order once (or find the recorded one); the summary names it."""
    warnings = WarningLog(recorder)
    submission = await _submit(
        recorder, warnings, client, order.body, order.kind, order.identity, order.resubmit
    )
    order_id = int(submission.job.remote_id)
    await recorder.update_job(submission.job, data=folder_data(order.output_dir))
    summary.update(order_id=order_id, resumed=submission.resumed, idempotency_key=order.key)
    if warnings.errors:
        summary.update(errors=warnings.errors)
    get_run_logger().info("%s order %s", "resuming" if submission.resumed else "submitted", order_id)
    outcome = OrderOutcome(order_id, identity=order.identity, resumed=submission.resumed)
    return _Placed(run, recorder, warnings, order, submission.job, outcome)


async def _submit(
    recorder: RunRecorder,
    warnings: WarningLog,
    client: NewspaperClient,
    submitted: StandardOrder | GratisOrder,
    kind: OrderKind,
    identity: Mapping[str, Any],
    resubmit: bool,
) -> Submission[ApiResult[int]]:
    """Post the order once, or find the recorded one (the hint says how to check a POST that got no
    answer)."""
    hint = (
        "check in the online dispatch-list service whether an order for newspaper "
        f"{identity['newspaper number']}, issue {identity['issue number']}, delivery date "
        f"{identity['delivery date']} exists"
    )
    return await submit_newspaper(
        newspaper_context(recorder, resubmit=resubmit),
        warnings,
        SubmissionJob("order", f"{kind} order", hint=hint, data=submitted_data(kind, identity)),
        lambda: submit_order(client, submitted),
    )


async def _publish(placed: _Placed, summary: RunSummary, status: OrderStatus) -> None:
    """Write the order's files and summary.md, and record the job as completed in the status reached."""
    recorder, warnings, outcome, job = placed.recorder, placed.warnings, placed.outcome, placed.job
    await warnings.add("reports", outcome.reports.warnings)
    outcome.warnings = warnings.lines
    outcome.errors = warnings.errors
    files = write_order_files(
        outcome,
        placed.order.output_dir,
        max_bytes=placed.run.settings.download_max_bytes,
        sandbox=recorder.outputs.sandbox,
    )
    await recorder.documents(((path.stem, path) for path in files), job=job)
    await recorder.update_job(
        job,
        status=JobState.COMPLETED,
        finished=True,
        data=reports_data(status),
        report=RemoteReport(remote_status=str(status.status_value)),
    )
    text = order_summary_text(f"Newspaper {placed.order.kind} order {outcome.order_id}", outcome, files)
    summary.update(status=str(status.status_value), warnings=warnings.lines, notes=outcome.reports.notes)
    await summary.publish(text, placed.order.output_dir, description="Order summary")


async def _follow(
    placed: _Placed, client: NewspaperClient, *, waiting: frozenset[str], policy: PollPolicy
) -> OrderStatus | JobParked:
    """The submitted order's delivery note, its wait and its reports (into the outcome); the status
    reached, or the parked job when the wait was parked."""
    await _delivery_note(placed, client)
    outcome = placed.outcome
    status = await recorded_wait(
        placed.recorder,
        placed.job,
        lambda: _wait(placed, client, waiting=waiting, policy=policy),
        what=f"order {outcome.order_id}",
    )
    if isinstance(status, JobParked):
        return status
    outcome.reports = await run_step(
        fetch_order_reports, client, outcome.order_id, kind=placed.order.kind, status=status, original=False
    )
    return status


def _the_order(
    order_path: Path | None, order: OrderForm | None, kind: OrderKind
) -> StandardOrder | GratisOrder:
    """The order to submit: read from the file, or the one filled in the form (exactly one is given)."""
    filled = order is not None and not order.is_empty()
    if order_path is not None and filled:
        raise InputError("give the order as a file or in the form, not both", path=order_path)
    if order_path is not None:
        return load_order(order_path, kind)
    if order is None or not filled:
        raise InputError("no order: give an order file or fill in the order", path=FORM_ORDER)
    return order_from_body(order.to_body(), kind, source=FORM_ORDER)


def _folder_name(basis: Mapping[str, Any]) -> str:
    """``<newspaper>-<issue>-<delivery date>`` of an order, for its default output folder."""
    issue = basis.get("issueNumber") or {}
    words = [basis.get("newspaperNumber"), issue.get("from"), basis.get("deliveryDate")]
    return "-".join(str(word) for word in words if word not in (None, "")) or "order"


async def _delivery_note(placed: _Placed, client: NewspaperClient) -> None:
    """Fetch and save the delivery note unless an earlier run of this order already did."""
    recorder, job, settings = placed.recorder, placed.job, placed.run.settings
    saved = [Path(name) for name in order_facts(job).delivery_note or []]
    if saved and all(path.is_file() for path in saved):
        return
    paths, note_warnings = await run_step(
        save_delivery_note,
        client,
        int(job.remote_id),
        placed.order.output_dir,
        max_bytes=settings.download_max_bytes,
        max_ratio=settings.zip_max_ratio,
    )
    await placed.warnings.add("delivery note", note_warnings)
    await recorder.update_job(job, data=delivery_note_data(paths))
    for path in paths:
        await recorder.document("delivery-note", path, job=job)


async def _wait(
    placed: _Placed, client: NewspaperClient, *, waiting: frozenset[str], policy: PollPolicy
) -> OrderStatus | WaitParked:
    """Poll the status, recording every change with its statusDate (continuing an earlier run's history);
    the status reached, or the parked wait."""
    recorder, job, warnings = placed.recorder, placed.job, placed.warnings
    history: list[dict[str, Any]] = list(order_facts(job).status_history or [])

    async def on_status(result: ApiResult[OrderStatus]) -> None:
        await warnings.add("status", result.warnings)
        status = result.value
        seen = with_status(history, status)
        if len(seen) == len(history):
            return
        history[:] = seen
        await recorder.update_job(
            job,
            status=JobState.RUNNING,
            data=status_history_data(history),
            report=RemoteReport(remote_status=seen[-1]["statusValue"], status_date=status.status_date),
        )

    status = await wait_for_order(
        client,
        int(job.remote_id),
        waiting=waiting,
        policy=policy,
        on_status=on_status,
        waited_s=waited_before(job),
    )
    placed.outcome.status_history = history
    return status
