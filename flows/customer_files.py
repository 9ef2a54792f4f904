"""The steps of the address flows that write the files made for the customer's own systems: the copy of the
input with the corrections written back, the corrections left out and the review workbook."""

from __future__ import annotations

from pathlib import Path

from prefect import get_run_logger

from fileio.commerce.address_input import CommerceAddresses
from fileio.errors import InputError
from fileio.writeback.report import WrittenBack
from fileio.writeback_policy import CERTIFIED, Policy
from flows.runs import RunSummary
from history.recorder import RunRecorder
from runtime.run import Run
from tasks.address_service.customer_files import customer_files as write_customer_files
from tasks.address_service.steps import AddressResults, PreparedInput
from tasks.commerce.validation import ValidationTable
from tasks.commerce.validation_writeback import write_back_validation


async def customer_files(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    prepared: PreparedInput,
    results: AddressResults,
    output_dir: Path,
    policy: Policy,
) -> str:
    """Write the copy of the batch's input with the corrections ``policy`` applies and the review; the lines
    summary.md gets."""
    if results.corrections is None:
        return ""
    settings = run.settings
    files = await write_customer_files(
        prepared,
        results,
        results.corrections,
        output_dir,
        policy=policy,
        limits=settings.table_limits,
        csv_style=settings.csv_style,
        sandbox=recorder.outputs.sandbox,
    )
    if files.write_back is None:
        text = _not_written(summary, policy, files.not_written)
    else:
        text = await _recorded(recorder, summary, policy, files.write_back.written_back)
    await recorder.document("review", files.review)
    return (
        text + f"\nReview: {files.review.name}, every input row with the changes and the rows for a human.\n"
    )


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
        written = await write_back_validation(
            addresses,
            table,
            output_dir,
            further=further,
            limits=settings.table_limits,
            csv_style=settings.csv_style,
            sandbox=recorder.outputs.sandbox,
        )
    except InputError as error:
        return _not_written(summary, applied, error)
    return await _recorded(recorder, summary, applied, written)


def _not_written(summary: RunSummary, policy: str, error: InputError | None) -> str:
    """A write-back that cannot be made (the input changed since it was read) is said, not a failure: the
    results are there."""
    get_run_logger().warning("write-back not written: %s", error)
    summary.update(writeback={"policy": policy, "error": str(error)})
    return f"\n\nWrite-back: not written ({error}).\n"


async def _recorded(recorder: RunRecorder, summary: RunSummary, policy: str, written: WrittenBack) -> str:
    """Record the write-back's files and counts; the lines summary.md gets."""
    await recorder.document("writeback", written.outcome.target)
    if written.skipped_path is not None:
        await recorder.document("writeback-skipped", written.skipped_path)
    summary.update(writeback={"policy": policy, **written.summary()})
    return written.markdown(policy)
