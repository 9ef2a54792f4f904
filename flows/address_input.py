"""What the address flows do with their request's file before anything is sent: how it is read (from the
request's reading options), and for batch and query the counts in the run summary, the files in the history,
a line for each thing the reader decided. The commerce flows' "prepare input": :mod:`flows.commerce_files`."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from prefect import get_run_logger

from fileio.input_format import InputFormat
from flows.requests import AddressTable
from history.recorder import RunRecorder
from tasks.address_service.steps import PreparedInput


def input_format(request: AddressTable) -> InputFormat:
    """How the request's address file is read: separator, encoding, worksheet, fixed widths."""
    return InputFormat.of(
        delimiter=request.input_delimiter,
        encoding=request.input_encoding,
        sheet=request.input_sheet,
        fixed_widths=request.fixed_widths,
    )


async def note_prepared_input(
    recorder: RunRecorder, summary: MutableMapping[str, Any], prepared: PreparedInput
) -> None:
    """Record the rejected rows, the split street lines and the upload file, and say what the reader
    decided: which worksheet it read, how many lines it split, how many rows it rejected."""
    logger = get_run_logger()
    summary.update(
        accepted_rows=prepared.accepted,
        rejected_rows=prepared.rejected_rows,
        house_numbers_split=prepared.house_numbers_split,
    )
    if prepared.records.sheet_note is not None:
        summary.update(sheet=prepared.records.sheet_note)
        logger.info("%s", prepared.records.sheet_note)
    written = {
        "house-numbers": prepared.house_numbers_path,
        "rejected-rows": prepared.rejected_path,
        "upload": prepared.upload_path,
    }
    await recorder.documents((kind, path) for kind, path in written.items() if path is not None)
    if prepared.house_numbers_path is not None:
        logger.info(
            "%d street lines split into street and house number, see %s",
            prepared.house_numbers_split,
            prepared.house_numbers_path,
        )
    if prepared.rejected_path is not None:
        logger.warning("%d input rows rejected, see %s", prepared.rejected_rows, prepared.rejected_path)
