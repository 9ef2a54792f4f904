"""The steps of the address flows that write the files made for the customer's own systems: the copy of the
input with the corrections written back, the corrections left out and the review workbook; how a write-back
is said in the summary (:mod:`flows.write_backs`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fileio.lazy import lazy_module
from fileio.writeback.options import WriteBackOptions
from fileio.writeback_policy import Policy
from flows.runs import RunSummary
from flows.write_backs import not_written, recorded
from history.recorder import RunRecorder
from runtime.run import Run
from tasks.address_service.steps import AddressResults, PreparedInput

# The writers of these files (the write-back, the review workbook) load when a run comes to this step.
if TYPE_CHECKING:
    from fileio.address_service import customer_files as files_io
    from tasks.address_service import customer_files as files_task
else:
    files_io = lazy_module("fileio.address_service.customer_files")
    files_task = lazy_module("tasks.address_service.customer_files")


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
    files = await files_task.customer_files(
        prepared,
        results,
        results.corrections,
        output_dir,
        files_io.CustomerFileOptions(
            policy, WriteBackOptions(settings.table_limits, settings.csv_style, recorder.outputs.sandbox)
        ),
    )
    review = [("review", files.review)]
    if files.write_back is None:
        text = not_written(summary, policy, files.not_written)
        await recorder.documents(review)
    else:
        text = await recorded(recorder, summary, policy, files.write_back.written_back, with_files=review)
    return (
        text + f"\nReview: {files.review.name}, every input row with the changes and the rows for a human.\n"
    )
