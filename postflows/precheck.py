"""What a flow command checks before Prefect or any flow module is imported: its input files, by the readers
the flows use (a table's header and first rows only, whatever its size; a worksheet measured whole, within
the limits the settings give), and its output directory.

A file refused here is refused in about the time of ``postflows --help``, with nothing recorded and no
Prefect server started. Nothing here imports Prefect (a test checks it), so each reader is imported where
it is used.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from fileio.errors import InputError
from fileio.files import OWN_FOLDERS, make_dirs
from fileio.input_format import DETECTED, InputFormat
from fileio.limits import TableLimits

if TYPE_CHECKING:
    from flows.requests import AddressPurchaseRequest, AddressTable, NewspaperOrderRequest, StatisticsRequest
    from flows.requests.commerce import CommerceAddressRequest, DeliverabilityRequest
    from flows.requests.common import TableReading


def output_dir(path: Path | None) -> None:
    """Create the output directory; refuse a path that is a file or a directory that cannot be written.

    Raises:
        InputError: naming the path and the problem.
    """
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise InputError("--out is a file, not a directory", path=path)
    try:
        make_dirs(path)
    except OSError as exc:
        raise InputError(f"--out cannot be created: {exc.strerror or exc}", path=path) from exc
    if not os.access(path, os.W_OK | os.X_OK):
        raise InputError("--out is not writable", path=path)
    for name in OWN_FOLDERS:
        if (path / name).is_symlink():
            raise InputError(
                f"{name}/ in --out is a symbolic link; the run writes a folder of its own there: remove the "
                "link or choose another --out",
                path=path / name,
            )


def _table(
    path: Path,
    columns: Callable[[list[str]], object],
    *,
    limits: TableLimits,
    input_format: InputFormat = DETECTED,
    what: str = "the columns the flow reads",
) -> str | None:
    """A table file within ``limits`` (as far as its head shows), read as ``input_format`` says, whose
    header ``columns`` accepts and that has a row after the header; of a workbook, the worksheet
    :func:`fileio.sheet_choice.choose_sheet` picks (the line saying which is returned)."""
    from fileio.sheet_choice import choose_sheet
    from fileio.tables import read_head

    choice = choose_sheet(path, input_format.sheet, _accepted_by(columns), what=what, limits=limits)
    head = read_head(
        path,
        delimiter=input_format.delimiter,
        encoding=input_format.encoding,
        sheet=choice.sheet,
        fixed_widths=input_format.fixed_widths,
        limits=limits,
    )
    columns(head.headers)
    if not head.has_rows:
        raise InputError("no data rows after the header", path=path)
    return choice.note


def _format_of(table: TableReading, fixed_widths: Mapping[str, int] | None = None) -> InputFormat:
    """How a request's table file is read, as its flow reads it (``flows.address_input.input_format``,
    which imports Prefect)."""
    return InputFormat.of(
        delimiter=table.input_delimiter,
        encoding=table.input_encoding,
        sheet=table.input_sheet,
        fixed_widths=fixed_widths,
    )


def _accepted_by(columns: Callable[[list[str]], object]) -> Callable[[list[str]], bool]:
    def accepted(headers: list[str]) -> bool:
        try:
            columns(headers)
        except InputError:
            return False
        return True

    return accepted


def address_table(
    table: AddressTable,
    *,
    limits: TableLimits,
    mode: Literal["batch", "query"],
    profile: str | None = None,
    key: str | None = None,
) -> str | None:
    """The address file of a request, read as its flow will read it (with the profile's mapping split off
    as the batch flow does, under the minimum input of the profile's key, else ``key``); with a profile, a
    line saying which column carries the record id out and back (results are merged by it).

    Raises:
        InputError: the file cannot be used; ProfileError: the profile cannot be.
    """
    from fileio.address_service.profiles import load_profile, split_mapping
    from fileio.address_service.records import AddressReading, address_header, minimum_input_mode

    path = table.input_path
    alignment = load_profile(profile) if profile else None
    columns_mapping, _ = split_mapping(
        dict(table.column_mapping) if table.column_mapping else None, alignment
    )
    reading = AddressReading(
        _format_of(table, table.fixed_widths),
        mode=minimum_input_mode(mode, (alignment.key if alignment is not None else None) or key),
        mapping=columns_mapping,
        split_house_numbers=table.split_house_numbers,
        limits=limits,
    )
    sheet_note = _table(
        path,
        lambda headers: address_header(headers, reading, path=path),
        limits=limits,
        input_format=reading.input_format,
        what="the address columns",
    )
    notes = [sheet_note] if sheet_note else []
    if alignment is not None:
        notes.append(
            f"profile {alignment.name}: the record id goes out in column {alignment.upload.record_id!r} and "
            f"comes back in {alignment.result_record_id!r}"
        )
    return "; ".join(notes) or None


def commerce_request(
    request: CommerceAddressRequest, *, limits: TableLimits, use: Literal["validation", "delivery"]
) -> None:
    """The address file of a commerce request (validation or deliverability), read as its flow will read
    it."""
    from fileio.commerce.address_input import address_header

    path = request.input_path
    _table(
        path,
        lambda headers: address_header(headers, use=use, path=path),
        limits=limits,
        input_format=_format_of(request),
    )


def deliverability_request(request: DeliverabilityRequest, *, limits: TableLimits) -> None:
    """The address file of a deliverability check and its file of delivery dates, if it names one."""
    from fileio.commerce.days import delivery_dates

    commerce_request(request, limits=limits, use="delivery")
    if request.dates:
        delivery_dates(request.dates)


def pickup_users(path: Path, *, limits: TableLimits) -> None:
    """A file of pickup users to register."""
    from fileio.commerce.pickup_input import pickup_header

    _table(path, lambda headers: pickup_header(headers, path=path), limits=limits)


def pickup_locations(path: Path, *, limits: TableLimits) -> None:
    """A file of locations to find pickup points near."""
    from fileio.commerce.pickup_input import LOCATION_REQUIRED_COLUMNS, pickup_header

    _table(
        path,
        lambda headers: pickup_header(headers, path=path, required=LOCATION_REQUIRED_COLUMNS),
        limits=limits,
    )


def json_bodies(path: Path, *, what: str) -> None:
    """A file of request bodies (JSON), read whole as the flow reads it: bounded in size, depth and count."""
    from fileio.commerce.json_bodies import read_json_bodies

    read_json_bodies(path, what=what)


def statistics_files(request: StatisticsRequest, *, limits: TableLimits) -> None:
    """The statistics file and the issue calendar of a request (the calendar read whole: a year of dates at
    most)."""
    from fileio.newspaper.statistics_input import read_calendar, statistics_header

    path = request.input_path
    if path is not None:
        _table(path, lambda headers: statistics_header(headers, path=path), limits=limits)
    if request.calendar_path is not None:
        read_calendar(request.calendar_path, limits=limits)


def purchase_files(request: AddressPurchaseRequest, *, limits: TableLimits) -> None:
    """The addresses and the parameters file of an address purchase."""
    from fileio.newspaper.purchase_input import load_purchase_parameters, purchase_header

    addresses = request.addresses_path
    _table(addresses, lambda headers: purchase_header(headers, path=addresses), limits=limits)
    if request.parameters_path is not None:
        load_purchase_parameters(request.parameters_path)


def order_file(request: NewspaperOrderRequest) -> None:
    """The order file of a request: read, and checked as the flow checks it before sending.

    Raises:
        InputError: the file is not an order; OrderInvalid: a field breaks a rule of §2.1.
    """

    from core.swiss_time import swiss_today
    from fileio.newspaper.order_input import check_order, load_order

    if request.order_path is None:
        return
    order = load_order(request.order_path, "gratis" if request.gratis else "standard")
    check_order(order, today=swiss_today())
