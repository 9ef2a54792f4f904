"""Reading a customer's address file into the records to send and the rows to reject, before anything is sent:
columns recognised by header (§2.3, §2.2 ``_in``, German/French/Italian aliases), minimum input (§2.1) and
field lengths (§2.3) checked, values that the wire encoding cannot carry refused.

Minimum input, per row (``mode``):

* a person (Name and Prename) or a company (Company; then Name/Prename may be empty) in every mode — §1 says
  maintenance checks persons *and* companies, so a company row without a first name is not rejected;
* ``batch`` and ``query``: a street (Streetname with HouseNo) or a P.O. box (PoBoxNo or PoBoxTerm) — the
  §2.1 query rule, applied to batch maintenance as well since batch files carry P.O. box addresses;
* ``verification``: street and house number, as §2.1 demands; the rule of every batch and query sent under
  a verification key (``..._validation_v1``, :func:`minimum_input_mode`);
* a postcode and a town: ZIPCode and TownName, or for a P.O. box row PoBoxZIP and PoBoxTownName instead;
* Swiss postcodes (CountryCode empty, CH or LI) are exactly 4 digits; every value fits its §2.3 length
  (customer fields 450) and the wire encoding, and holds no control character (C0 but tab, line feed and
  carriage return; DEL) — such a cell rejects its row, whatever the column.

Completely empty rows are not records and are skipped; every other row is either accepted or rejected, and
a file whose rows do not add up to accepted + rejected + empty rows is refused before anything is sent.
Rows the file reader could not read (a line in another encoding, a row with too many fields) are rejected
with the reader's reason. How a file is read is one value, :class:`AddressReading`; the row checks live in
:mod:`fileio.address_service.record_checks`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from connectors.address_service.codes import STATUS_FIELD_NAMES
from fileio.address_service.field_values import normalise_fields
from fileio.address_service.record_checks import CheckedRows, check_values, refused_splits, row_problems
from fileio.errors import InputError
from fileio.headers import resolve_address_columns
from fileio.input_format import InputFormat
from fileio.lazy import lazy_module
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.rejected_rows import LINE, ROW, RejectedRows, id_column, row_lines
from fileio.sheet_choice import SheetChoice, choose_sheet
from fileio.source_layout import SourceLayout
from fileio.street_lines import SplitColumn, split_street_column
from fileio.table_frame import Table
from fileio.tables import read_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported on first use: checking a header (address_header) needs none

Mode = Literal["batch", "query", "verification"]
VERIFICATION_KEY_SUFFIX = "_validation_v1"
"""How a verification key ends (§1: ``<service>_validation_v1``; maintenance keys end ``_maintenance_v1``)."""


def minimum_input_mode(kind: Literal["batch", "query"], key: str | None) -> Mode:
    """The §2.1 minimum input of a ``kind`` of request sent under ``key``: the verification rule (name, first
    name, street and house number) for a verification key, the maintenance rule of ``kind`` otherwise."""
    if key is not None and key.strip().casefold().endswith(VERIFICATION_KEY_SUFFIX):
        return "verification"
    return kind


RECORD_ID = "RecordId"
RETURNED_COLUMN = "ReturnedByService"
INPUT_SUFFIX = "_in"  # the §2.2 convention for input values, used for the address as sent beside the result
# The results' column naming the service's fields that break their §2.3 length (tasks.address_service.
# field_lengths).
PROBLEMS_COLUMN = "ResultProblems"
# Names the pipeline adds to the customer's columns; a customer column of that name would be overwritten.
RESERVED_COLUMNS = frozenset(
    name.casefold() for name in (RECORD_ID, RETURNED_COLUMN, PROBLEMS_COLUMN, *STATUS_FIELD_NAMES)
)
MINIMUM_FIELDS = ("Name", "Prename", "Streetname", "HouseNo", "ZIPCode", "TownName")  # §2.1


@dataclass
class AddressInput:
    """An address file read and checked.

    Attributes:
        records: accepted rows: ``RecordId`` (1-based data row number in the source file), the pass-through
            customer columns with their original names and order, then the canonical §2.3 address columns.
        rejected: one line per problem: row, field (source header), value, reason.
        rejected_report: one line per rejected row, as ``rejected.csv`` holds it
            (:func:`fileio.rejected_rows.rejected_report`).
        address_columns: canonical §2.3 field → source header.
        passthrough_columns: customer columns passed through unchanged, in file order.
        source: the file read.
        mode: the minimum-input rule applied.
        input_rows: data rows in the file that are not completely empty (= accepted + rejected rows).
        house_numbers: the street lines split into street and house number (or recognised as a P.O. box or
            c/o line): RecordId, the line as given, and the fields it filled.
        house_numbers_report: ``house-numbers.csv``: the same rows named as ``rejected.csv`` names its rows
            (the id column, ``line`` = the line of the file, ``row``), then the ``street line`` as given and
            the fields it filled.
        sheet_note: which worksheet was read and why, when the file's first one has no address columns.
        layout: how the file was read (kind, encoding, delimiter, worksheet, widths), to write a copy of it
            back in the same form (:func:`fileio.writeback.write_back`); None when not known.
        headers: the file's columns in its order.
        id_column: the column that names a row in every file a person reads (``rejected.csv``, the
            results), as :func:`~fileio.rejected_rows.id_column` chooses it; None for a file without columns.
        given: the accepted rows' address cells as the file has them (index RecordId, one column per address
            column of the file, under its header): the value beside the service's in the results.
        lines: the line of the file where each accepted row starts (index RecordId; in a workbook, the
            sheet's row).
    """

    records: pd.DataFrame
    rejected: pd.DataFrame
    rejected_report: pd.DataFrame
    address_columns: dict[str, str]
    passthrough_columns: list[str]
    source: Path
    mode: Mode = "batch"
    input_rows: int = 0
    house_numbers: pd.DataFrame = field(default_factory=lambda: pd.DataFrame())
    house_numbers_report: pd.DataFrame = field(default_factory=lambda: pd.DataFrame())
    sheet_note: str | None = None
    layout: SourceLayout | None = None
    headers: list[str] = field(default_factory=list)
    id_column: str | None = None
    given: pd.DataFrame = field(default_factory=lambda: pd.DataFrame())
    lines: pd.Series = field(default_factory=lambda: pd.Series(dtype="int64"))

    @property
    def rejected_rows(self) -> int:
        """How many rows were rejected (a row may have several problems, and has one line in the report)."""
        return len(self.rejected_report)


@dataclass(frozen=True)
class AddressReading:
    """How an address file is read and checked: the one value the flows, the pre-check and the upload step
    hand down to :func:`read_address_file` and :func:`address_header`.

    Attributes:
        input_format: separator, encoding, worksheet and fixed widths (detected where not given).
        mode: which minimum input applies (see the module docstring).
        mapping: source header → address field (§2.3 name, ``_in`` name or alias); ``""`` keeps a column
            that would be recognised as a customer column. Overrides recognition by name.
        split_house_numbers: split a street cell that holds the house number too (``Bahnhofstr. 1a``) where
            the row has none (:mod:`~fileio.street_lines`); an unsure split rejects the row.
        limits: the limits on the file's shape, judged before it is read (see :func:`read_table`).
    """

    input_format: InputFormat = InputFormat()
    mode: Mode = "batch"
    mapping: Mapping[str, str] | None = None
    split_house_numbers: bool = True
    limits: TableLimits = TABLE_LIMITS


def read_address_file(
    path: Path | str,
    reading: AddressReading = AddressReading(),
    *,
    wire_encoding: str = "cp1252",
    id_columns: Sequence[str] = (),
) -> AddressInput:
    """Read an address file (.csv, .xlsx, .txt delimited or fixed width) and check every row: the accepted
    records and the rejected lines (the rejected rows are not in ``records``).

    Args:
        path: the customer's file.
        reading: how to read it, which minimum input applies, and how its columns are taken.
        wire_encoding: the encoding of the upload file; values it cannot carry are rejected.
        id_columns: the columns of the customer's id, if any, naming the rejected rows (``id_column``).

    Raises:
        InputError: the file is unreadable or over a limit, or lacks the address columns every row needs.
    """
    source = Path(path)
    choice, table = _read_sheet(source, reading)
    headers = [str(name) for name in table.frame.columns]
    address_columns = address_header(headers, reading, path=source)
    passthrough = [header for header in headers if header not in address_columns.values()]
    frame, filled = _gathered(table.frame, address_columns, passthrough)
    rejected = RejectedRows(table)
    empty = ~filled & ~frame[RECORD_ID].isin(rejected.malformed)
    frame = frame[~empty].copy()
    split = SplitColumn(split=[], refused={})
    if reading.split_house_numbers:
        split = split_street_column(frame, record_id=RECORD_ID)
    checkable = frame[~frame[RECORD_ID].isin(rejected.malformed)]
    rows = CheckedRows(checkable, checkable[RECORD_ID], address_columns)
    rejected.add(refused_splits(split, rows))
    for lines in row_problems(
        rows, verification=reading.mode == "verification", unsplit=frozenset(split.refused)
    ):
        rejected.add(lines)
    check_values(rejected, rows, passthrough, wire_encoding)
    records = frame[~frame[RECORD_ID].isin(rejected.rows)].reset_index(drop=True)
    rejected.check_accounted(source, accepted=len(records), empty=int(empty.sum()))
    id_of_rows = id_column(headers, known=id_columns)
    house_numbers = pd.DataFrame(split.split)
    return AddressInput(
        records=records,
        rejected=rejected.lines(),
        rejected_report=rejected.report(id_column=id_of_rows),
        address_columns=address_columns,
        passthrough_columns=passthrough,
        source=source,
        mode=reading.mode,
        input_rows=len(frame),
        house_numbers=house_numbers,
        house_numbers_report=_house_numbers_report(house_numbers, table, id_of_rows),
        sheet_note=choice.note,
        layout=table.layout,
        headers=headers,
        id_column=id_of_rows,
        **_as_given(table, records, address_columns),  # type: ignore[arg-type]
    )


def _as_given(
    table: Table, records: pd.DataFrame, address_columns: Mapping[str, str]
) -> dict[str, pd.DataFrame | pd.Series]:
    """The accepted rows' address cells as the file has them (an empty cell as ``""``) and their lines."""
    rows = pd.Index(records[RECORD_ID].astype("int64"), name=RECORD_ID)
    cells = table.frame.loc[rows, list(dict.fromkeys(address_columns.values()))].astype(object)
    given: pd.DataFrame = cells.where(cells.notna(), "")
    given.index = rows
    return {"given": given, "lines": pd.Series(row_lines(table, rows), index=rows, dtype="int64")}


STREET_LINE = "street line"
"""The column of house-numbers.csv that holds a street line as the file gave it."""


def _house_numbers_report(split: pd.DataFrame, table: Table, id_of_rows: str | None) -> pd.DataFrame:
    """The rows whose street line was split, named as rejected.csv names rows: the customer's id column,
    ``line`` (the file's line), ``row`` (the data row), then ``street line`` and the fields it filled."""
    if not len(split):
        return split
    rows = pd.Index(split[RECORD_ID].astype("int64"))
    named: dict[str, object] = {}
    if id_of_rows is not None:
        ids = table.frame[id_of_rows].reindex(rows).astype(object)
        named[id_of_rows] = ids.where(ids.notna(), "").to_numpy(dtype=object)
    ours = {LINE: row_lines(table, rows), ROW: rows.to_numpy(), STREET_LINE: split["line"].to_numpy()}
    named |= {f"{name} (report)" if name == id_of_rows else name: values for name, values in ours.items()}
    fields = split.drop(columns=[RECORD_ID, "line"])
    return pd.concat([pd.DataFrame(named), fields.reset_index(drop=True)], axis=1)


def _read_sheet(source: Path, reading: AddressReading) -> tuple[SheetChoice, Table]:
    """The table of the file: of a workbook, the sheet asked for, else the first whose header has the
    address columns :func:`address_header` asks for."""

    def fits(headers: list[str]) -> bool:
        try:
            address_header(headers, reading, path=source)
        except InputError:
            return False
        return True

    fmt, limits = reading.input_format, reading.limits
    choice = choose_sheet(source, fmt.sheet, fits, what="the address columns", limits=limits)
    table = read_table(
        source,
        delimiter=fmt.delimiter,
        encoding=fmt.encoding,
        fixed_widths=fmt.fixed_widths,
        sheet=choice.sheet if fmt.sheet is None else fmt.sheet,
        limits=limits,
    )
    return choice, table


def _gathered(
    raw: pd.DataFrame, address_columns: Mapping[str, str], passthrough: Sequence[str]
) -> tuple[pd.DataFrame, pd.Series]:
    """The rows by record id with the customer's columns (empty cells None) and the address fields
    (stripped, empty None), P.O. boxes split; and which rows hold any value at all."""
    # The columns are gathered first and framed at once: inserting them one by one copies the frame's
    # column index each time, which takes quadratic time in the number of columns.
    gathered: dict[str, pd.Series] = {RECORD_ID: pd.Series(raw.index.astype("int64"), index=raw.index)}
    filled = pd.Series(False, index=raw.index)
    for header in passthrough:
        present = raw[header].fillna("") != ""
        gathered[header] = raw[header].where(present)
        filled |= present
    for canonical, header in address_columns.items():
        values = raw[header].fillna("").str.strip()
        gathered[canonical] = values.where(values != "")
        filled |= values != ""
    frame = pd.DataFrame(gathered, index=raw.index)
    zip_town = "ZIPCode" in address_columns and address_columns["ZIPCode"] == address_columns.get("TownName")
    normalise_fields(frame, zip_town=zip_town)
    return frame, filled


def address_header(headers: Sequence[str], reading: AddressReading, *, path: Path) -> dict[str, str]:
    """The address columns of a file's header (canonical field → header), checked as a whole: some address
    column is recognised (by ``reading.mapping`` first), every column a row needs for ``reading.mode`` is
    there, no customer column has a name the results use.

    Raises:
        InputError: naming the file, and the missing columns or the column to rename.
    """
    address_columns = resolve_address_columns(headers, reading.mapping, path=path)
    if not address_columns:
        raise InputError(
            f"none of the address columns found (missing {', '.join(MINIMUM_FIELDS)}); "
            f"header is {list(headers)} — is the header row missing?",
            path=path,
        )
    for header in headers:
        if header not in address_columns.values() and header.casefold() in RESERVED_COLUMNS:
            raise InputError(
                "column name is reserved for the service's output; rename it", path=path, field=header
            )
    _check_columns_present(address_columns, reading, path, headers=headers)
    return address_columns


def _check_columns_present(
    columns: Mapping[str, str], reading: AddressReading, path: Path, *, headers: Sequence[str] = ()
) -> None:
    """No row can pass without these columns, so their absence is a file problem, not a row problem. A street
    column without a house number column is enough when its lines are split. The refusal names what is
    missing, what was found for it, the file's header and how to map a column."""
    has = columns.__contains__
    mode, split_house_numbers = reading.mode, reading.split_house_numbers
    missing: list[str] = []
    if not has("Company"):
        if has("Name") and not has("Prename"):
            missing.append(f"Prename (a first-name column; found Name as {columns['Name']!r}) or Company")
        elif has("Prename") and not has("Name"):
            missing.append(f"Name (a last-name column; found Prename as {columns['Prename']!r}) or Company")
        elif not has("Name"):
            missing.append("Name and Prename (or Company)")
    pobox_allowed = mode != "verification" and (has("PoBoxNo") or has("PoBoxTerm"))
    street_ok = has("Streetname") and (has("HouseNo") or split_house_numbers)
    if not street_ok and not pobox_allowed:
        missing.append("Streetname and HouseNo" + ("" if mode == "verification" else " (or a P.O. box)"))
    if not (has("ZIPCode") or (pobox_allowed and has("PoBoxZIP"))):
        missing.append("ZIPCode")
    if not (has("TownName") or (pobox_allowed and has("PoBoxTownName"))):
        missing.append("TownName")
    if missing:
        found = f"; the header is {list(headers)}" if headers else ""
        raise InputError(
            f"missing address columns: {'; '.join(missing)}{found}. Name a column's field with --map "
            "HEADER=FIELD (form: Column mapping), e.g. --map Vorname=Prename",
            path=path,
        )
