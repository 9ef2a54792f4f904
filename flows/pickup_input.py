"""What the pickup flows do with their file before anything is sent: read and check its rows, write
``rejected.csv`` (never leaving a stale one beside new results), count the rows into the run summary, and stop
when no row can be sent."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

from fileio.commerce.pickup_input import PickupInput
from fileio.errors import InputError
from fileio.rejected_rows import write_rejected
from fileio.reports import CsvStyle
from history.recorder import RunRecorder


async def read_pickup_file(
    recorder: RunRecorder,
    summary: MutableMapping[str, Any],
    read: Callable[[Path], PickupInput],
    input_path: Path,
    output_dir: Path,
    *,
    csv_style: CsvStyle,
) -> PickupInput:
    """The "read input" step: ``read(input_path)``, ``rejected.csv`` in ``output_dir``, the row counts.

    Raises:
        InputError: the file cannot be used, or no row passed the checks (nothing is sent).
    """
    async with recorder.step("read input"):
        pickup_input = read(input_path)
    rejected_path = write_rejected(pickup_input.rejected_report, output_dir / "rejected.csv", style=csv_style)
    if rejected_path is not None:
        await recorder.document("rejected-rows", rejected_path)
    summary.update(
        accepted_rows=len(pickup_input.rows),
        rejected_rows=pickup_input.rejected_rows,
        empty_rows=pickup_input.empty_rows,
    )
    if not pickup_input.rows:
        where = f"see {rejected_path}" if rejected_path is not None else "every row is empty"
        raise InputError(f"no row passed the checks; {where}", path=input_path)
    return pickup_input
