"""Address validation (commerce API) of every row of a file: certified address, quality, house key and expiry
beside the input address, the changed fields highlighted."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

from fileio.checkpoint import RowCheckpoint
from fileio.commerce.address_input import CommerceAddresses
from fileio.errors import InputError
from flows.address_input import prepare_commerce_addresses
from flows.customer_files import validation_write_back
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import AddressValidationRequest, OutputOptions
from flows.runs import RunSummary, begin_run, recorded_run
from history.identity import derive_key
from history.recorder import RunRecorder
from runtime.run import Run
from runtime.task_runners import fan_out_task_runner
from runtime.wiring import commerce_client
from tasks.commerce.per_row import record_outcomes
from tasks.commerce.validation import RESULT_COLUMNS, ValidationTable, validate_addresses, validation_table
from tasks.commerce.validation_results import validation_markdown, write_validation_results
from tasks.sending import SendCounter

FLOW_NAME = "address-validation"


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    flow_run_name=run_name(FLOW_NAME, "request.input_path"),
    task_runner=fan_out_task_runner(),
)
async def address_validation(
    request: Annotated[
        AddressValidationRequest, form("Addresses", "The address file, how to read it and how many at once.")
    ],
    output: Annotated[OutputOptions, form("Output", "Where the results go on the worker.")],
) -> dict[str, Any]:
    """Validate every address of a file with the commerce API's address validation.

    Rows failing the input checks (neither zip nor city, a zip that is not 4 digits, a value too long) go to
    rejected.csv; the others are validated with bounded concurrency. A row the service refuses (HTTP 400)
    keeps its place with the status and the service's message; transient failures are retried, and a row
    that still fails keeps its place with the reason. A re-run of an interrupted run (same file, options and
    service) asks only for the rows not answered yet.

    Args:
        request: the address file (.csv, .xlsx), how to read it, and validations in flight at once.
        output: where results.csv, results.xlsx, rejected.csv, writeback.<ext>, writeback-skipped.csv and
            summary.md go.

    Returns:
        The run summary: run id, row counts, outcome and quality counts, and the files written.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    input_path, output_dir = Path(request.input_path), Path(output.output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    options = request.identity()
    key = derive_key(FLOW_NAME, endpoint=run.endpoint("commerce"), files=(input_path,), parameters=options)
    parameters = {
        "input_path": input_path,
        "output_dir": output_dir,
        "concurrency": request.concurrency,
        **options,
    }
    async with recorded_run(run, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        addresses, _ = await prepare_commerce_addresses(
            recorder,
            request,
            output_dir,
            use="validation",
            reserved=RESULT_COLUMNS,
            csv_style=settings.csv_style,
            limits=settings.table_limits,
        )
        summary.update(idempotency_key=key, **addresses.counts())

        checkpoint = RowCheckpoint.for_key(settings.data_dir / "resume", key)
        sends = SendCounter()
        outcomes = await validate_addresses(
            partial(commerce_client, settings),
            addresses.records,
            concurrency=request.concurrency,
            checkpoint=checkpoint,
            sends=sends,
        )
        await record_outcomes(recorder, "validation", sends, outcomes)
        table = validation_table(addresses.records, outcomes, addresses.passthrough)
        failed = await _report(
            run, recorder, summary, table, addresses, output_dir, tuple(request.apply or ())
        )
        if not failed:
            checkpoint.clear()  # done: a later run validates afresh
        summary.update(
            resumed_rows=sum(1 for outcome in outcomes if outcome.resumed), requests_sent=sends.total
        )
        get_run_logger().info(
            "address validation done: %d validated, %d refused, %d failed, %d rejected",
            summary["validated"],
            summary["refused"],
            failed,
            addresses.rejected_rows,
        )
        return dict(summary)


async def _report(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    table: ValidationTable,
    addresses: CommerceAddresses,
    output_dir: Path,
    further: tuple[str, ...],
) -> int:
    """Write the results and summary.md, and count the outcomes into the summary; the rows that failed."""
    settings = run.settings
    files = write_validation_results(
        table,
        output_dir,
        rejected_rows=addresses.rejected_rows,
        empty_rows=addresses.empty_rows,
        csv_style=settings.csv_style,
        sandbox=recorder.outputs.sandbox,
    )
    for path in files:
        await recorder.document(path.name, path)
    statuses = table.status_counts()
    failed = statuses.get("failed", 0)
    summary.update(
        validated=statuses.get("validated", 0),
        refused=statuses.get("refused", 0),
        not_found=statuses.get("not found", 0),
        failed=failed,
        quality=table.quality_counts(),
        rows_changed=table.rows_changed,
    )
    report = validation_markdown(
        f"Address validation {addresses.source.name}",
        table,
        rejected_rows=addresses.rejected_rows,
        empty_rows=addresses.empty_rows,
    )
    if failed:
        report += f"\n{failed} rows failed; running the same command again asks only for those.\n"
    report += await validation_write_back(run, recorder, summary, addresses, table, output_dir, further)
    await summary.publish(report, output_dir, description="Address validation summary")
    return int(failed)
