"""The "prepare input" step of the row-by-row commerce flows (address validation, deliverability): the
address file read and checked (:mod:`fileio.commerce.address_input`), its rejected rows written, recorded."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fileio.commerce.address_input import CommerceAddresses, Use, read_commerce_addresses
from fileio.limits import TableLimits
from fileio.rejected_rows import write_rejected
from fileio.reports import CsvStyle
from tasks.run_history import RunRecorder


async def prepare_addresses(
    recorder: RunRecorder,
    input_path: Path,
    output_dir: Path,
    *,
    use: Use,
    sheet: str | None,
    delimiter: str | None,
    encoding: str | None,
    reserved: Sequence[str],
    csv_style: CsvStyle,
    limits: TableLimits,
) -> tuple[CommerceAddresses, Path | None]:
    """The "prepare input" step of a row-by-row commerce flow: read and check the rows, write
    ``rejected.csv`` in ``csv_style`` (never leaving a stale one beside new results) and record it as a
    document."""
    async with recorder.step("prepare input"):
        addresses = read_commerce_addresses(
            input_path,
            use=use,
            sheet=sheet,
            delimiter=delimiter,
            encoding=encoding,
            reserved=reserved,
            limits=limits,
        )
        rejected_path = write_rejected(
            addresses.rejected_report, output_dir / "rejected.csv", style=csv_style
        )
    if rejected_path is not None:
        await recorder.document("rejected-rows", rejected_path)
    return addresses, rejected_path
