"""The commerce flows' "prepare input" step, which reads the request's addresses (the address validation's
write-back into a copy of its input is the validation's own: :mod:`flows.address_validation`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fileio.commerce.address_input import CommerceAddresses, Use, read_commerce_addresses
from fileio.input_format import InputFormat
from fileio.limits import TableLimits
from fileio.rejected_rows import write_rejected
from fileio.reports import CsvStyle
from flows.requests.commerce import CommerceAddressRequest
from history.recorder import RunRecorder


async def prepare_commerce_addresses(
    recorder: RunRecorder,
    request: CommerceAddressRequest,
    output_dir: Path,
    *,
    use: Use,
    reserved: Sequence[str],
    csv_style: CsvStyle,
    limits: TableLimits,
) -> tuple[CommerceAddresses, Path | None]:
    """The "prepare input" step of a row-by-row commerce flow: read and check the rows of the request's
    file as it says, write ``rejected.csv`` in ``csv_style`` (never leaving a stale one beside new results)
    and record it as a document."""
    async with recorder.step("prepare input"):
        addresses = read_commerce_addresses(
            Path(request.input_path),
            use=use,
            input_format=InputFormat.of(
                delimiter=request.input_delimiter, encoding=request.input_encoding, sheet=request.input_sheet
            ),
            reserved=reserved,
            limits=limits,
            split_house_numbers=request.split_house_numbers,
        )
        rejected_path = write_rejected(
            addresses.rejected_report, output_dir / "rejected.csv", style=csv_style
        )
    if rejected_path is not None:
        await recorder.document("rejected-rows", rejected_path)
    return addresses, rejected_path
