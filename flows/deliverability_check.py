"""Deliverability of a file's addresses over a range of days (commerce API): an address × date workbook with
the product codes of each deliverable day."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

from fileio.checkpoint import RowCheckpoint
from fileio.commerce.days import MAX_DAYS
from fileio.errors import InputError
from flows.address_input import prepare_addresses
from flows.forms import INPUT_ENCODING, INPUT_SEPARATOR, INPUT_SHEET, Blank, BlankDate, Separator, form
from flows.naming import run_name
from flows.runs import recorded_run
from history.identity import derive_key
from postflows.settings import get_settings
from postflows.wiring import commerce_client, commerce_endpoint
from tasks.address_service.query import SendCounter
from tasks.commerce.deliverability import (
    RESULT_COLUMNS,
    check_deliverabilities,
    deliverability_markdown,
    deliverability_table,
    requested_days,
    write_deliverability,
)
from tasks.commerce.per_row import record_outcomes

FLOW_NAME = "deliverability-check"


@flow(name=FLOW_NAME, flow_run_name=run_name(FLOW_NAME, "input_path"))
async def deliverability_check(
    input_path: Annotated[
        Path,
        form(
            "Address file",
            "The address file on the worker (.csv, .xlsx): zip and city required, street and house number "
            "optional.",
        ),
    ],
    output_dir: Annotated[
        Path,
        form(
            "Output folder",
            "Folder on the worker for deliverability.xlsx, deliverability.csv, rejected.csv and summary.md.",
        ),
    ],
    start: Annotated[
        BlankDate, form("First day", "The first day, YYYY-MM-DD. Empty: today.", blank="")
    ] = None,
    days: Annotated[
        int, form("Days", f"How many days from the first (1 to {MAX_DAYS}).", minimum=1, maximum=MAX_DAYS)
    ] = 14,
    concurrency: Annotated[
        int, form("Queries at once", "Queries in flight at the same time.", minimum=1, maximum=64)
    ] = 8,
    input_sheet: Annotated[Blank[str], form("Worksheet", INPUT_SHEET, blank="")] = None,
    input_delimiter: Annotated[Separator, form("Input separator", INPUT_SEPARATOR, blank="")] = None,
    input_encoding: Annotated[Blank[str], form("Input encoding", INPUT_ENCODING, blank="")] = None,
) -> dict[str, Any]:
    """Find out on which days, and with which products, every address of a file can be delivered.

    Rows without zip or city, or with a zip that is not 4 digits, go to rejected.csv; every other address is
    asked about with bounded concurrency. An address the service refuses or does not know (404) keeps its
    row with the reason (grey in the workbook), and the rest goes on. A re-run of an interrupted run (same
    file, days and service) asks only for the addresses not answered yet.

    Args:
        input_path: the address file (.csv, .xlsx); zip and city required, street and house number optional.
        output_dir: where deliverability.xlsx, deliverability.csv, rejected.csv and summary.md go.
        start: the first day (today when empty).
        days: how many days from ``start`` (1 to 60).
        concurrency: queries in flight at once.
        input_sheet: worksheet of an .xlsx input (the first when empty).
        input_delimiter: field separator of a text input (detected when empty).
        input_encoding: encoding of a text input (detected when empty).

    Returns:
        The run summary: run id, row counts, outcome counts, deliverable address-days and the files.
    """
    settings = get_settings()
    input_path, output_dir = Path(input_path), Path(output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    first = start or dt.date.today()
    dates = requested_days(first, days)
    options = {
        "start": first.isoformat(),
        "days": days,
        "sheet": input_sheet,
        "delimiter": input_delimiter,
        "encoding": input_encoding,
    }
    key = derive_key(FLOW_NAME, endpoint=commerce_endpoint(settings), files=(input_path,), parameters=options)
    parameters = {"input_path": input_path, "output_dir": output_dir, "concurrency": concurrency, **options}
    async with recorded_run(settings, flow=FLOW_NAME, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        addresses, rejected_path = await prepare_addresses(
            recorder,
            input_path,
            output_dir,
            use="delivery",
            sheet=input_sheet,
            delimiter=input_delimiter,
            encoding=input_encoding,
            reserved=RESULT_COLUMNS,
            csv_style=settings.csv_style,
            limits=settings.table_limits,
        )
        summary.update(
            idempotency_key=key,
            first_day=first.isoformat(),
            days=days,
            **addresses.counts(),
        )

        checkpoint = RowCheckpoint.for_key(settings.data_dir / "resume", key)
        sends = SendCounter()
        async with commerce_client(settings, request_log=sends) as client:
            outcomes = await check_deliverabilities(
                client,
                addresses.records,
                start=first,
                days=days,
                concurrency=concurrency,
                checkpoint=checkpoint,
            )
        await record_outcomes(recorder, "deliverabilities", sends, outcomes)

        table = deliverability_table(addresses.records, outcomes, addresses.passthrough, dates)
        files = write_deliverability(table, output_dir, csv_style=settings.csv_style)
        for path in files:
            await recorder.document(path.name, path)
        statuses = table.status_counts()
        failed = statuses.get("failed", 0)
        if not failed:
            checkpoint.clear()
        summary.update(
            answered=statuses.get("ok", 0),
            refused=statuses.get("refused", 0),
            not_found=statuses.get("not found", 0),
            failed=failed,
            deliverable_days=table.deliverable_days(),
            resumed_rows=sum(1 for outcome in outcomes if outcome.resumed),
            requests_sent=sends.total,
        )
        report = deliverability_markdown(
            f"Deliverability {input_path.name}", table, dates=dates, rejected_rows=addresses.rejected_rows
        )
        await summary.publish(report, output_dir, description="Deliverability summary")
        get_run_logger().info(
            "deliverability done: %d answered, %d not answered, %d rejected",
            summary["answered"],
            len(outcomes) - summary["answered"],
            addresses.rejected_rows,
        )
        return dict(summary)
