"""The frame of the row-by-row commerce flows (address validation, deliverability): the run's identity (the
flow, the service, the file and the options that change the answers), its record in the history, the input
read and checked, the checkpoint of the rows answered, and at the end the files recorded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fileio.checkpoint import RowCheckpoint
from fileio.commerce.address_input import CommerceAddresses, Use
from flows.address_input import prepare_addresses
from flows.runs import RunSummary, recorded_run
from history.identity import derive_key
from history.recorder import RunRecorder
from postflows.settings import Settings
from postflows.wiring import commerce_endpoint


@dataclass(frozen=True)
class CommerceRowsRun:
    """One run of a row-by-row commerce flow, its input read and checked.

    Attributes:
        recorder: the run's record in the history.
        summary: what the flow reports at its end: so far the idempotency key and the row counts.
        key: the run's idempotency key; it names the checkpoint too.
        addresses: the input file's rows, accepted and rejected.
        checkpoint: the answers received so far, by row: a run that resumes an interrupted one asks only for
            the rows not answered yet.
    """

    recorder: RunRecorder
    summary: RunSummary
    key: str
    addresses: CommerceAddresses
    checkpoint: RowCheckpoint

    async def finish(self, files: Sequence[Path], statuses: Mapping[str, int]) -> int:
        """Record the files written and return how many rows failed; when none did, the checkpoint is
        cleared (the work is done: a later run asks afresh)."""
        for path in files:
            await self.recorder.document(path.name, path)
        failed = statuses.get("failed", 0)
        if not failed:
            self.checkpoint.clear()
        return failed


@asynccontextmanager
async def commerce_rows_run(
    settings: Settings,
    flow: str,
    input_path: Path,
    output_dir: Path,
    *,
    use: Use,
    reserved: Sequence[str],
    concurrency: int,
    sheet: str | None,
    delimiter: str | None,
    encoding: str | None,
    identifying: Mapping[str, Any] = MappingProxyType({}),
) -> AsyncIterator[CommerceRowsRun]:
    """Record a run of ``flow`` on ``input_path`` and read its rows for ``use`` ("prepare input":
    ``rejected.csv`` in ``output_dir``); ``reserved`` are the result columns no input column may be named.

    The run's key is derived from the flow, the commerce service, the file's content, the worksheet,
    separator and encoding, and ``identifying`` (the flow's other options that change the answers).
    """
    options = {**identifying, "sheet": sheet, "delimiter": delimiter, "encoding": encoding}
    key = derive_key(flow, endpoint=commerce_endpoint(settings), files=(input_path,), parameters=options)
    parameters = {"input_path": input_path, "output_dir": output_dir, "concurrency": concurrency, **options}
    async with recorded_run(settings, flow=flow, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        addresses, _ = await prepare_addresses(
            recorder,
            input_path,
            output_dir,
            use=use,
            sheet=sheet,
            delimiter=delimiter,
            encoding=encoding,
            reserved=reserved,
            csv_style=settings.csv_style,
            limits=settings.table_limits,
        )
        summary.update(idempotency_key=key, **addresses.counts())
        checkpoint = RowCheckpoint.for_key(settings.data_dir / "resume", key)
        yield CommerceRowsRun(recorder, summary, key, addresses, checkpoint)
