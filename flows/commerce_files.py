"""The commerce flows' file steps: the "prepare input" step that reads the request's addresses, and the
address validation's write-back into a copy of its input."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fileio.commerce.address_input import CommerceAddresses, Use, read_commerce_addresses
from fileio.errors import InputError
from fileio.input_format import InputFormat
from fileio.limits import TableLimits
from fileio.rejected_rows import write_rejected
from fileio.reports import CsvStyle
from fileio.writeback.options import WriteBackOptions
from fileio.writeback_policy import CERTIFIED
from flows.requests.commerce import CommerceAddressRequest
from flows.runs import RunSummary
from flows.write_backs import not_written, recorded
from history.recorder import RunRecorder
from runtime.run import Run
from tasks.commerce.validation import ValidationTable
from tasks.commerce.validation_writeback import write_back_validation


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
            options=WriteBackOptions(settings.table_limits, settings.csv_style, recorder.outputs.sandbox),
        )
    except InputError as error:
        return not_written(summary, applied, error)
    return await recorded(recorder, summary, applied, written)
