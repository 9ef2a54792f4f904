from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Any

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from core.swiss_time import swiss_today
from fileio.commerce.address_input import CommerceAddresses
from fileio.commerce.days import delivery_dates
from flows.commerce_results import AddressQueries
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import DeliverabilityRequest, OutputOptions
from flows.row_queries import RowRun, RowWork, read_addresses, row_run
from flows.runs import begin_run
from runtime.task_runners import fan_out_task_runner
from tasks.commerce.deliverability import (
    RESULT_COLUMNS,
    DaysAsked,
    DeliverabilityTable,
    check_deliverabilities,
    deliverability_markdown,
    deliverability_table,
    requested_days,
    write_deliverability,
)

FLOW_NAME = "deliverability-check"


class DeliverabilityResult(AddressQueries):
    """What a deliverability check found: the days asked about (``first_day`` and ``days``; the explicit
    ``delivery_dates`` when they were given), the addresses answered beside those refused, not found and
    failed, and the deliverable address-days."""

    first_day: str
    days: int
    delivery_dates: list[str] | None = None
    answered: int
    deliverable_days: int


@dataclass(frozen=True)
class DaysRequested:
    """The days asked about (``dates``), what of them the work's identity holds, and whether they are
    explicit delivery dates rather than the days from a first day."""

    dates: list[dt.date]
    identity: dict[str, Any]
    explicit: bool

    @classmethod
    def of(cls, request: DeliverabilityRequest) -> DaysRequested:
        """The days ``request`` asks about, read and checked here, before anything is recorded or sent."""
        if request.dates:
            dates = delivery_dates(request.dates)
            # What is asked, not where it was written: the same dates are the same work, from a file or
            # a list.
            return cls(dates, {"dates": [day.isoformat() for day in dates]}, explicit=True)
        first = request.start or swiss_today()
        identity = {"start": first.isoformat(), "days": request.days}
        return cls(requested_days(first, request.days), identity, explicit=False)

    def for_tasks(self) -> DaysAsked:
        """The days as the deliverability tasks ask them."""
        return DaysAsked(self.dates[0], len(self.dates), tuple(self.dates) if self.explicit else ())

    def summary(self) -> dict[str, Any]:
        """The days as the run summary names them."""
        named = {"first_day": self.dates[0].isoformat(), "days": len(self.dates)}
        return {**named, "delivery_dates": self.identity["dates"]} if self.explicit else named


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
) -> DeliverabilityResult:
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
        The run's result: the days, row counts, outcome counts, deliverable address-days and the files.
    """
    run = begin_run(FLOW_NAME)
    asked = DaysRequested.of(request)
    work = RowWork.of(request, output, {**asked.identity, **request.identity()})
    async with row_run(run, work) as rows:
        addresses = await read_addresses(rows, request, use="delivery", reserved=RESULT_COLUMNS)
        rows.summary.update(asked.summary())
        outcomes = await check_deliverabilities(
            run.commerce,
            addresses.records,
            asked=asked.for_tasks(),
            concurrency=work.concurrency,
            checkpoint=rows.checkpoint,
            sends=rows.sends,
        )
        await rows.record("deliverabilities", outcomes)
        table = deliverability_table(
            addresses.records,
            outcomes,
            addresses.passthrough,
            asked.dates,
            id_column=addresses.id_column,
            lines=addresses.lines,
        )
        failed = await _report(rows, table, addresses, asked)
        rows.end(outcomes, failed=failed)
        answered = rows.summary["answered"]
        get_run_logger().info(
            "deliverability done: %d answered, %d not answered, %d rejected",
            answered,
            len(outcomes) - answered,
            addresses.rejected_rows,
        )
        return rows.summary.result(DeliverabilityResult)


async def _report(
    rows: RowRun, table: DeliverabilityTable, addresses: CommerceAddresses, asked: DaysRequested
) -> int:
    """Write the workbook, the CSV and summary.md, and count the outcomes into the summary; the addresses
    that failed."""
    recorder, output_dir = rows.recorder, rows.work.output_dir
    files = write_deliverability(
        table, output_dir, csv_style=rows.run.settings.csv_style, sandbox=recorder.outputs.sandbox
    )
    await recorder.documents((path.name, path) for path in files)
    statuses = table.status_counts()
    failed = int(statuses.get("failed", 0))
    rows.summary.update(
        answered=statuses.get("ok", 0),
        refused=statuses.get("refused", 0),
        not_found=statuses.get("not found", 0),
        failed=failed,
        deliverable_days=table.deliverable_days(),
    )
    report = deliverability_markdown(
        f"Deliverability {rows.work.input_path.name}",
        table,
        dates=asked.dates,
        rejected_rows=addresses.rejected_rows,
        explicit=asked.explicit,
    )
    await rows.summary.publish(report, output_dir, description="Deliverability summary")
    return failed
