"""What the address flows (batch and query) do with their prepared input before anything is sent: the
counts in the run summary, the files in the history, a line for each thing the reader decided."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from prefect import get_run_logger

from tasks.address_service.steps import PreparedInput
from tasks.run_history import RunRecorder


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
    if prepared.house_numbers_path is not None:
        await recorder.document("house-numbers", prepared.house_numbers_path)
        logger.info(
            "%d street lines split into street and house number, see %s",
            prepared.house_numbers_split,
            prepared.house_numbers_path,
        )
    if prepared.rejected_path is not None:
        await recorder.document("rejected-rows", prepared.rejected_path)
        logger.warning("%d input rows rejected, see %s", prepared.rejected_rows, prepared.rejected_path)
    if prepared.upload_path is not None:
        await recorder.document("upload", prepared.upload_path)
