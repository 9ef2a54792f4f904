"""Address validation (commerce API) of every row of a file: certified address, quality, house key and expiry
beside the input address, the changed fields highlighted."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

from fileio.checkpoint import RowCheckpoint
from fileio.errors import InputError
from flows.address_input import prepare_addresses
from flows.forms import INPUT_ENCODING, INPUT_SEPARATOR, INPUT_SHEET, OUTPUT_FOLDER, Blank, Separator, form
from flows.naming import run_name
from flows.runs import recorded_run
from history.identity import derive_key
from postflows.settings import get_settings
from postflows.task_runners import fan_out_task_runner
from postflows.wiring import commerce_client, commerce_endpoint
from tasks.address_service.query import SendCounter
from tasks.commerce.per_row import record_outcomes
from tasks.commerce.validation import RESULT_COLUMNS, validate_addresses, validation_table
from tasks.commerce.validation_results import validation_markdown, write_validation_results

FLOW_NAME = "address-validation"


@flow(name=FLOW_NAME, flow_run_name=run_name(FLOW_NAME, "input_path"), task_runner=fan_out_task_runner())
async def address_validation(
    input_path: Annotated[Path, form("Address file", "The address file on the worker: .csv or .xlsx.")],
    output_dir: Annotated[Path, form("Output folder", OUTPUT_FOLDER)],
    concurrency: Annotated[
        int, form("Validations at once", "Validations in flight at the same time.", minimum=1, maximum=64)
    ] = 8,
    input_sheet: Annotated[Blank[str], form("Worksheet", INPUT_SHEET, blank="")] = None,
    input_delimiter: Annotated[Separator, form("Input separator", INPUT_SEPARATOR, blank="")] = None,
    input_encoding: Annotated[Blank[str], form("Input encoding", INPUT_ENCODING, blank="")] = None,
) -> dict[str, Any]:
    """Validate every address of a file with the commerce API's address validation.

    Rows failing the input checks (neither zip nor city, a zip that is not 4 digits, a value too long) go to
    rejected.csv; the others are validated with bounded concurrency. A row the service refuses (HTTP 400)
    keeps its place with the status and the service's message; transient failures are retried, and a row
    that still fails keeps its place with the reason. A re-run of an interrupted run (same file, options and
    service) asks only for the rows not answered yet.

    Args:
        input_path: the address file (.csv, .xlsx).
        output_dir: where results.csv, results.xlsx, rejected.csv and summary.md go.
        concurrency: validations in flight at once.
        input_sheet: worksheet of an .xlsx input (the first when empty).
        input_delimiter: field separator of a text input (detected when empty).
        input_encoding: encoding of a text input (detected when empty).

    Returns:
        The run summary: run id, row counts, outcome and quality counts, and the files written.
    """
    settings = get_settings()
    input_path, output_dir = Path(input_path), Path(output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    options = {"sheet": input_sheet, "delimiter": input_delimiter, "encoding": input_encoding}
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
            use="validation",
            sheet=input_sheet,
            delimiter=input_delimiter,
            encoding=input_encoding,
            reserved=RESULT_COLUMNS,
            csv_style=settings.csv_style,
            limits=settings.table_limits,
        )
        summary.update(
            idempotency_key=key,
            **addresses.counts(),
        )

        checkpoint = RowCheckpoint.for_key(settings.data_dir / "resume", key)
        sends = SendCounter()
        outcomes = await validate_addresses(
            partial(commerce_client, settings),
            addresses.records,
            concurrency=concurrency,
            checkpoint=checkpoint,
            sends=sends,
        )
        await record_outcomes(recorder, "validation", sends, outcomes)

        table = validation_table(addresses.records, outcomes, addresses.passthrough)
        files = write_validation_results(
            table,
            output_dir,
            rejected_rows=addresses.rejected_rows,
            empty_rows=addresses.empty_rows,
            csv_style=settings.csv_style,
        )
        for path in files:
            await recorder.document(path.name, path)
        statuses = table.status_counts()
        failed = statuses.get("failed", 0)
        if not failed:
            checkpoint.clear()  # done: a later run validates afresh
        summary.update(
            validated=statuses.get("validated", 0),
            refused=statuses.get("refused", 0),
            not_found=statuses.get("not found", 0),
            failed=failed,
            quality=table.quality_counts(),
            rows_changed=table.rows_changed,
            resumed_rows=sum(1 for outcome in outcomes if outcome.resumed),
            requests_sent=sends.total,
        )
        report = validation_markdown(
            f"Address validation {input_path.name}",
            table,
            rejected_rows=addresses.rejected_rows,
            empty_rows=addresses.empty_rows,
        )
        if failed:
            report += f"\n{failed} rows failed; running the same command again asks only for those.\n"
        await summary.publish(report, output_dir, description="Address validation summary")
        get_run_logger().info(
            "address validation done: %d validated, %d refused, %d failed, %d rejected",
            summary["validated"],
            summary["refused"],
            failed,
            addresses.rejected_rows,
        )
        return dict(summary)
