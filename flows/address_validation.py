from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from fileio.commerce.address_input import CommerceAddresses
from fileio.errors import InputError
from fileio.lazy import lazy_module
from fileio.writeback.options import WriteBackOptions
from fileio.writeback_policy import CERTIFIED
from flows.commerce_results import AddressQueries
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import AddressValidationRequest, OutputOptions
from flows.row_queries import RowRun, RowWork, read_addresses, row_run
from flows.runs import RunSummary, begin_run
from flows.write_backs import not_written, recorded
from history.recorder import RunRecorder
from runtime.run import Run
from runtime.task_runners import fan_out_task_runner
from tasks.commerce.validation import RESULT_COLUMNS, ValidationTable, validate_addresses, validation_table

# The results' and the write-back's writers load when a run comes to those steps.
if TYPE_CHECKING:
    from tasks.commerce import validation_results, validation_writeback
else:
    validation_results = lazy_module("tasks.commerce.validation_results")
    validation_writeback = lazy_module("tasks.commerce.validation_writeback")

FLOW_NAME = "address-validation"


class AddressValidationResult(AddressQueries):
    """What an address validation found: the rows validated (``quality``: the validated rows per quality;
    ``rows_changed``: those whose certified address differs from the input) beside the rows refused, not
    found and failed, and the write-back (its policy with its file and counts, or why it was not written)."""

    validated: int
    quality: dict[str, int]
    rows_changed: int
    writeback: dict[str, Any]


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
) -> AddressValidationResult:
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
        The run's result: row counts, outcome and quality counts, the write-back and the files written.
    """
    run = begin_run(FLOW_NAME)
    work = RowWork.of(request, output, request.identity())
    async with row_run(run, work) as rows:
        addresses = await read_addresses(rows, request, use="validation", reserved=RESULT_COLUMNS)
        outcomes = await validate_addresses(
            run.commerce,
            addresses.records,
            concurrency=work.concurrency,
            checkpoint=rows.checkpoint,
            sends=rows.sends,
        )
        await rows.record("validation", outcomes)
        table = validation_table(addresses.records, outcomes, addresses.passthrough)
        failed = await _report(rows, table, addresses, tuple(request.apply or ()))
        rows.end(outcomes, failed=failed)
        return rows.summary.result(AddressValidationResult)


async def _report(
    rows: RowRun, table: ValidationTable, addresses: CommerceAddresses, further: tuple[str, ...]
) -> int:
    """Write the results and summary.md, and count the outcomes into the summary; the rows that failed."""
    run, recorder, summary, output_dir = rows.run, rows.recorder, rows.summary, rows.work.output_dir
    files = validation_results.write_validation_results(
        table,
        output_dir,
        addresses=addresses,
        rejected_rows=addresses.rejected_rows,
        empty_rows=addresses.empty_rows,
        csv_style=run.settings.csv_style,
        sandbox=recorder.outputs.sandbox,
    )
    await recorder.documents((path.name, path) for path in files)
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
    report = validation_results.validation_markdown(
        f"Address validation {addresses.source.name}",
        table,
        rejected_rows=addresses.rejected_rows,
        empty_rows=addresses.empty_rows,
    )
    if failed:
        report += f"\n{failed} rows failed; running the same command again asks only for those.\n"
    report += await validation_write_back(run, recorder, summary, addresses, table, output_dir, further)
    await summary.publish(report, output_dir, description="Address validation summary")
    get_run_logger().info(
        "address validation done: %d validated, %d refused, %d failed, %d rejected",
        summary["validated"],
        summary["refused"],
        failed,
        addresses.rejected_rows,
    )
    return int(failed)


async def validation_write_back(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    addresses: CommerceAddresses,
    table: ValidationTable,
    output_dir: Path,
    further: tuple[str, ...],
) -> str:
    """Write the copy of the validation's input with the values of the certified answers and of those of
    the ``further`` qualities; the lines summary.md gets."""
    settings = run.settings
    applied = ", ".join((CERTIFIED, *further))
    try:
        written = await validation_writeback.write_back_validation(
            addresses,
            table,
            output_dir,
            further=further,
            options=WriteBackOptions(settings.table_limits, settings.csv_style, recorder.outputs.sandbox),
        )
    except InputError as error:
        return not_written(summary, applied, error)
    return await recorded(recorder, summary, applied, written)
