"""Deliverability of a file's addresses over a range of days or on explicit delivery dates (commerce API): an
address × date workbook with the product codes of each deliverable day."""

from __future__ import annotations

import datetime as dt
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

from core.swiss_time import swiss_today
from fileio.checkpoint import RowCheckpoint
from fileio.commerce.address_input import CommerceAddresses
from fileio.commerce.days import delivery_dates
from fileio.errors import InputError
from flows.address_input import prepare_commerce_addresses
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import DeliverabilityRequest, OutputOptions
from flows.runs import RunSummary, begin_run, recorded_run
from history.identity import derive_key
from history.recorder import RunRecorder
from runtime.run import Run
from runtime.task_runners import fan_out_task_runner
from runtime.wiring import commerce_client
from tasks.commerce.deliverability import (
    RESULT_COLUMNS,
    DeliverabilityTable,
    check_deliverabilities,
    deliverability_markdown,
    deliverability_table,
    requested_days,
    write_deliverability,
)
from tasks.commerce.per_row import record_outcomes
from tasks.sending import SendCounter

FLOW_NAME = "deliverability-check"


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    flow_run_name=run_name(FLOW_NAME, "request.input_path"),
    task_runner=fan_out_task_runner(),
)
async def deliverability_check(
    request: Annotated[
        DeliverabilityRequest,
        form("Addresses and days", "The address file, how to read it, the days and how many at once."),
    ],
    output: Annotated[OutputOptions, form("Output", "Where the results go on the worker.")],
) -> dict[str, Any]:
    """Find out on which days, and with which products, every address of a file can be delivered.

    Rows without zip or city, or with a zip that is not 4 digits, go to rejected.csv; every other address is
    asked about with bounded concurrency. An address the service refuses or does not know (404) keeps its
    row with the reason (grey in the workbook), and the rest goes on. A re-run of an interrupted run (same
    file, days or dates and service) asks only for the addresses not answered yet.

    Args:
        request: the address file (.csv, .xlsx; zip and city required, street and house number optional),
            how to read it, the first day (today when empty) and how many days (1 to 60), or instead
            explicit delivery dates (a list or a file of dates, at most 60, asked with POST), and the
            queries in flight at once.
        output: where deliverability.xlsx, deliverability.csv, rejected.csv and summary.md go.

    Returns:
        The run summary: run id, row counts, outcome counts, deliverable address-days and the files.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    input_path, output_dir = Path(request.input_path), Path(output.output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    dates, options, explicit = _days_asked(request)
    first, days = dates[0], len(dates)
    options.update(request.identity())
    key = derive_key(FLOW_NAME, endpoint=run.endpoint("commerce"), files=(input_path,), parameters=options)
    parameters = {"input_path": input_path, "output_dir": output_dir, "concurrency": request.concurrency}
    async with recorded_run(
        run,
        idempotency_key=key,
        parameters={**parameters, **options},
    ) as (recorder, summary):
        addresses, _ = await prepare_commerce_addresses(
            recorder,
            request,
            output_dir,
            use="delivery",
            reserved=RESULT_COLUMNS,
            csv_style=settings.csv_style,
            limits=settings.table_limits,
        )
        summary.update(idempotency_key=key, first_day=first.isoformat(), days=days, **addresses.counts())
        if explicit:
            summary.update(delivery_dates=options["dates"])
        checkpoint = RowCheckpoint.for_key(settings.data_dir / "resume", key)
        sends = SendCounter()
        outcomes = await check_deliverabilities(
            partial(commerce_client, settings),
            addresses.records,
            start=first,
            days=days,
            dates=dates if explicit else (),
            concurrency=request.concurrency,
            checkpoint=checkpoint,
            sends=sends,
        )
        await record_outcomes(recorder, "deliverabilities", sends, outcomes)
        table = deliverability_table(addresses.records, outcomes, addresses.passthrough, dates)
        if not await _report(
            run, recorder, summary, table, addresses, dates, input_path, output_dir, explicit=explicit
        ):
            checkpoint.clear()
        summary.update(
            resumed_rows=sum(1 for outcome in outcomes if outcome.resumed), requests_sent=sends.total
        )
        get_run_logger().info(
            "deliverability done: %d answered, %d not answered, %d rejected",
            summary["answered"],
            len(outcomes) - summary["answered"],
            addresses.rejected_rows,
        )
        return dict(summary)


def _days_asked(request: DeliverabilityRequest) -> tuple[list[dt.date], dict[str, Any], bool]:
    """The days asked about, what of them the work's identity holds, and whether they are explicit dates
    (read and checked here, before anything is recorded or sent)."""
    if request.dates:
        dates = delivery_dates(request.dates)
        # What is asked, not where it was written: the same dates are the same work, from a file or a list.
        return dates, {"dates": [day.isoformat() for day in dates]}, True
    first = request.start or swiss_today()
    return requested_days(first, request.days), {"start": first.isoformat(), "days": request.days}, False


async def _report(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    table: DeliverabilityTable,
    addresses: CommerceAddresses,
    dates: list[dt.date],
    input_path: Path,
    output_dir: Path,
    *,
    explicit: bool,
) -> int:
    """Write the workbook, the CSV and summary.md, and count the outcomes into the summary; the addresses
    that failed."""
    settings = run.settings
    files = write_deliverability(
        table, output_dir, csv_style=settings.csv_style, sandbox=recorder.outputs.sandbox
    )
    for path in files:
        await recorder.document(path.name, path)
    statuses = table.status_counts()
    failed = int(statuses.get("failed", 0))
    summary.update(
        answered=statuses.get("ok", 0),
        refused=statuses.get("refused", 0),
        not_found=statuses.get("not found", 0),
        failed=failed,
        deliverable_days=table.deliverable_days(),
    )
    report = deliverability_markdown(
        f"Deliverability {input_path.name}",
        table,
        dates=dates,
        rejected_rows=addresses.rejected_rows,
        explicit=explicit,
    )
    await summary.publish(report, output_dir, description="Deliverability summary")
    return failed
