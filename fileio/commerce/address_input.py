"""Reading an address file for the commerce API: columns named as the request's leaf fields (``firstName``,
``lastName``, ``street``, ``houseNumber``, ``additionalAddress``, ``zip``, ``city``, ``postBoxNumber``) or
as the address-service batch input names them, and every row checked before anything is sent.

Headers are matched case- and punctuation-insensitively: a leaf field's own name first (``First Name``,
``house_number``), then the headers the batch input accepts (:mod:`fileio.headers`:
``Prename``, ``Vorname`` → firstName, ``Name``, ``Nachname`` → lastName, ``Streetname``, ``Strasse`` →
street, ``HouseNo`` → houseNumber, ``AddressAddition`` → additionalAddress, ``ZIPCode``, ``PLZ`` → zip,
``TownName``, ``Ort`` → city, ``PoBoxNo``, ``Postfach``, ``PostBox`` → postBoxNumber). A ``HouseNoAddition``
column is joined to the house number with a space, and a box number written with its term (``Postfach
12``) keeps the number; a c/o line in a name column ("c/o Familie Brunner") is the additional address (the
street column's is split off as the batch does). A column holding postcode and town in one (``PLZ Ort``:
"8001 Zürich") gives both where the file has neither. Among columns naming the same field the leftmost
wins; the others pass through.

Rows: a row with no value at all is skipped (counted as empty); every other row is accepted or rejected
(``rejected.csv``, one line per row with all its problems: :mod:`fileio.rejected_rows`), and the counts must
add up. A row is rejected when it misses
what its use needs (validation: a zip or a city; delivery: zip and city), has a zip that is not 4 digits,
a value longer than its field, or a control character in a value that would be sent.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fileio.address_cells import NO_POSTCODE, box_numbers, move_care_of, split_zip_towns
from fileio.errors import InputError
from fileio.headers import field_for_header, header_key, resolve_columns, with_zip_town
from fileio.input_format import DETECTED, InputFormat
from fileio.lazy import lazy_module
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.rejected_rows import PROBLEM_COLUMNS, RejectedRows, id_column, problem_lines, row_lines
from fileio.source_layout import SourceLayout
from fileio.street_lines import split_street_column
from fileio.tables import read_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported on first use: the CLI checks a header without it

Use = Literal["validation", "delivery"]

LEAF_FIELDS: tuple[str, ...] = (
    "firstName",
    "lastName",
    "street",
    "houseNumber",
    "additionalAddress",
    "zip",
    "city",
    "postBoxNumber",
)
ROW = PROBLEM_COLUMNS[0]
_HOUSE_NUMBER_ADDITION = "houseNumberAddition"

# Address-service input fields (fileio.headers) → the leaf field they fill here.
FROM_BATCH_FIELD: Mapping[str, str] = {
    "Prename": "firstName",
    "Name": "lastName",
    "Streetname": "street",
    "HouseNo": "houseNumber",
    "HouseNoAddition": _HOUSE_NUMBER_ADDITION,
    "AddressAddition": "additionalAddress",
    "ZIPCode": "zip",
    "TownName": "city",
    "PoBoxNo": "postBoxNumber",
}
# Spellings neither the leaf names nor the batch aliases cover (header_key form).
_EXTRA_ALIASES: Mapping[str, str] = {
    "postbox": "postBoxNumber",
    "postboxno": "postBoxNumber",
    "postboxnr": "postBoxNumber",
    "postboxnumber": "postBoxNumber",
    "additionaladdress": "additionalAddress",
}
_LEAF_BY_KEY: Mapping[str, str] = {header_key(name): name for name in (*LEAF_FIELDS, _HOUSE_NUMBER_ADDITION)}

# The commerce spec gives no lengths; these are the address service's for the same postal data (§2.3 of
# the address web service), the house number with its addition (40 + space + 6), the city as long as the
# longest name the zips carry (city39).
MAX_LENGTH: Mapping[str, int] = {
    "firstName": 75,
    "lastName": 75,
    "street": 60,
    "houseNumber": 47,
    "additionalAddress": 65,
    "zip": 4,
    "city": 39,
    "postBoxNumber": 10,
}


@dataclass
class CommerceAddresses:
    """An address file read and checked.

    Attributes:
        records: the accepted rows in input order: ``row`` (1-based data row of the file), the pass-through
            columns with their own names, then every leaf field (None where empty or not in the file).
        rejected: one line per problem: row, field (the source header), value, reason.
        rejected_report: one line per rejected row, as ``rejected.csv`` holds it
            (:func:`fileio.rejected_rows.rejected_report`).
        columns: leaf field → the source header(s) it is read from.
        passthrough: the columns passed through unchanged, in file order.
        source: the file read.
        input_rows: the rows that are not completely empty (= accepted + rejected rows).
        empty_rows: completely empty rows, skipped.
        layout: how the file was read (kind, encoding, delimiter, worksheet), to write a copy of it back in
            the same form (:func:`fileio.writeback.write_back`); None when not known.
        headers: the file's columns in its order.
        id_column: the column that names a row in the files a person reads, as ``rejected.csv`` names it.
        lines: the line of the file where each accepted row starts, by row.
    """

    records: pd.DataFrame
    rejected: pd.DataFrame
    rejected_report: pd.DataFrame
    columns: dict[str, tuple[str, ...]]
    passthrough: list[str]
    source: Path
    input_rows: int
    empty_rows: int
    layout: SourceLayout | None = None
    headers: list[str] = dataclasses.field(default_factory=list)
    id_column: str | None = None
    lines: dict[int, int] = dataclasses.field(default_factory=dict)

    @property
    def accepted(self) -> int:
        return len(self.records)

    @property
    def rejected_rows(self) -> int:
        """How many rows were rejected (a row may have several problems, and has one line in the report)."""
        return len(self.rejected_report)

    def counts(self) -> dict[str, int]:
        """The row counts a run summary reports."""
        return {
            "input_rows": self.input_rows,
            "accepted_rows": self.accepted,
            "rejected_rows": self.rejected_rows,
            "empty_rows": self.empty_rows,
        }


def commerce_columns(headers: Sequence[str]) -> dict[str, str]:
    """Which source header supplies each field (field → header); the house-number addition is the
    internal field ``houseNumberAddition``.

    A leaf field's own name beats a batch name or alias; among equals the leftmost column wins. A column
    holding postcode and town in one ("PLZ Ort": :func:`fileio.headers.zip_town_header`) supplies both zip
    and city where the file has neither.
    """
    return with_zip_town(resolve_columns(headers, (_LEAF_BY_KEY, _batch_alias)), headers, ("zip", "city"))


def _batch_alias(header: str) -> str | None:
    """The leaf field a header names as the batch input does, or as only commerce files do."""
    return FROM_BATCH_FIELD.get(field_for_header(header) or "") or _EXTRA_ALIASES.get(header_key(header))


def address_header(headers: Sequence[str], *, use: Use, path: Path) -> dict[str, str]:
    """The columns of a file's header that supply each field (see :func:`commerce_columns`), with the
    columns every row needs for ``use``.

    Raises:
        InputError: a column every row needs is missing (the message names it and the header).
    """
    resolved = commerce_columns(headers)
    _check_columns_present(resolved, use, headers, path)
    return resolved


def read_commerce_addresses(
    path: Path | str,
    *,
    use: Use,
    input_format: InputFormat = DETECTED,
    reserved: Collection[str] = (),
    limits: TableLimits = TABLE_LIMITS,
    split_house_numbers: bool = True,
) -> CommerceAddresses:
    """Read an address file (.csv/.xlsx/.txt) and check every row for ``use``.

    Args:
        path: the customer's file.
        use: ``validation`` (a zip or a city needed) or ``delivery`` (zip and city needed).
        input_format: a text file's separator and encoding, a workbook's sheet (detected, or the first
            sheet, where None).
        reserved: output column names a pass-through column must not have (case-insensitive).
        limits: the limits on the file's shape, judged before it is read (see :func:`read_table`).
        split_house_numbers: split a street line that holds the house number too ("Bahnhofstrasse 12a")
            where the row has none, as the address batch does; a line that cannot be split with certainty
            rejects its row with the reason.

    Raises:
        InputError: the file cannot be read, lacks the columns every row needs, or a pass-through column
            has a reserved name.
    """
    source, fmt = Path(path), input_format
    table = read_table(source, delimiter=fmt.delimiter, encoding=fmt.encoding, sheet=fmt.sheet, limits=limits)
    headers = [str(name) for name in table.frame.columns]
    resolved = address_header(headers, use=use, path=source)
    passthrough = [header for header in headers if header not in resolved.values()]
    _check_reserved(passthrough, reserved, source)
    frame, filled = _gathered(table.frame, resolved, passthrough)
    rejected = RejectedRows(table)
    empty = ~filled & ~frame[ROW].isin(rejected.malformed)
    frame = frame[~empty]
    headers_of = _source_headers(resolved)
    if split_house_numbers:
        frame = frame.copy()
        _split_streets(frame, rejected, " + ".join(headers_of.get("street", ("street",))))
    _check_rows(rejected, frame[~frame[ROW].isin(rejected.malformed)], use, headers_of)
    records = frame[~frame[ROW].isin(rejected.rows)].reset_index(drop=True)
    for column in records.columns.drop(ROW):  # None, never NaN, for an empty cell: callers send these
        records[column] = records[column].astype(object).where(records[column].notna(), None)
    rejected.check_accounted(source, accepted=len(records), empty=int(empty.sum()))
    accepted = pd.Index(records[ROW].astype("int64"))
    return CommerceAddresses(
        records=records,
        rejected=rejected.lines(),
        rejected_report=rejected.report(id_column=id_column(headers)),
        columns={field: headers_of[field] for field in LEAF_FIELDS if field in headers_of},
        passthrough=passthrough,
        source=source,
        input_rows=len(frame),
        empty_rows=int(empty.sum()),
        layout=table.layout,
        headers=headers,
        id_column=id_column(headers),
        lines=dict(zip(accepted.tolist(), row_lines(table, accepted).tolist(), strict=True)),
    )


def _check_reserved(passthrough: Sequence[str], reserved: Collection[str], source: Path) -> None:
    """Refuse a pass-through column named as a column of the results.

    Raises:
        InputError: a pass-through column has a reserved name (case-insensitive).
    """
    taken = {name.casefold() for name in (ROW, *reserved)}
    for header in passthrough:
        if header.casefold() in taken:
            raise InputError("column name is reserved for the results; rename it", path=source, field=header)


def _gathered(
    raw: pd.DataFrame, resolved: Mapping[str, str], passthrough: Sequence[str]
) -> tuple[pd.DataFrame, pd.Series]:
    """The rows as read: ``row``, the pass-through columns, then every leaf field (the house-number
    addition joined, a box number without its term, a postcode-and-town cell split, a c/o line in a name
    column moved to the additional address); and which rows have a value at all."""
    # The columns are gathered first and framed at once: inserting them one by one copies the frame's
    # column index each time, which takes quadratic time in the number of columns.
    gathered: dict[str, pd.Series] = {ROW: pd.Series(raw.index.astype("int64"), index=raw.index)}
    filled = pd.Series(False, index=raw.index)
    for header in passthrough:
        present = raw[header].fillna("") != ""
        gathered[header] = raw[header].where(present)
        filled |= present
    values = {field: _stripped(raw[header]) for field, header in resolved.items()}
    for value in values.values():
        filled |= value.notna()
    for field in LEAF_FIELDS:
        gathered[field] = values.get(field, pd.Series(None, index=raw.index, dtype=object))
    frame = pd.DataFrame(gathered, index=raw.index)
    if _HOUSE_NUMBER_ADDITION in values:
        frame["houseNumber"] = _joined(frame["houseNumber"], values[_HOUSE_NUMBER_ADDITION])
    frame["postBoxNumber"] = box_numbers(frame["postBoxNumber"])
    move_care_of(frame, ("firstName", "lastName"), "additionalAddress")  # the API's place for a c/o line
    if resolved.get("zip") is not None and resolved.get("zip") == resolved.get("city"):
        frame["zip"], frame["city"] = split_zip_towns(frame["city"])
    return frame, filled


# The batch reader's names of the fields a street line may fill (fileio.street_lines); a c/o
# line goes to the additional address, which is where the commerce API takes one.
_AS_BATCH_FIELDS = {
    "street": "Streetname",
    "houseNumber": "HouseNo",
    "postBoxNumber": "PoBoxNo",
    "additionalAddress": "CoAddress",
}


def _split_streets(frame: pd.DataFrame, rejected: RejectedRows, street: str) -> None:
    """Split, in place, the street line of every row without a house number, as the address batch does;
    a row whose line could not be split with certainty is rejected with the reason, naming the ``street``
    column as the file does."""
    named = frame[[ROW, *_AS_BATCH_FIELDS]].rename(columns=_AS_BATCH_FIELDS)
    refused = split_street_column(named, record_id=ROW).refused
    for field, batch_field in _AS_BATCH_FIELDS.items():
        frame[field] = named[batch_field].astype(object).where(named[batch_field].notna(), None)
    if refused:
        unsplit = frame[frame[ROW].isin(refused)]
        rejected.add(problem_lines(unsplit[ROW], street, unsplit["street"], unsplit[ROW].map(refused)))


def address_records(records: pd.DataFrame) -> list[dict[str, Any]]:
    """The accepted rows as dicts (column name → value; None for an empty cell)."""
    return [{str(column): value for column, value in record.items()} for record in records.to_dict("records")]


def field_text(record: Mapping[str, Any], field: str) -> str | None:
    """A field's value as text to send; None when empty."""
    value = record.get(field)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def _stripped(values: pd.Series) -> pd.Series:
    text = values.fillna("").astype(str).str.strip()
    return text.where(text != "", None).astype(object)


def _joined(first: pd.Series, second: pd.Series) -> pd.Series:
    """``first second`` where both are given, else the one that is; None where neither is."""
    both = first.notna() & second.notna()
    result = first.where(first.notna(), second).astype(object)
    result[both] = first[both] + " " + second[both]
    return result


def _source_headers(resolved: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    headers: dict[str, tuple[str, ...]] = {
        field: (header,) for field, header in resolved.items() if field in LEAF_FIELDS
    }
    if _HOUSE_NUMBER_ADDITION in resolved:
        headers["houseNumber"] = (*headers.get("houseNumber", ()), resolved[_HOUSE_NUMBER_ADDITION])
    return headers


def _check_columns_present(resolved: Mapping[str, str], use: Use, headers: Sequence[str], path: Path) -> None:
    """No row can pass without these columns: their absence is a problem of the file, not of a row."""
    if use == "validation" and not ("zip" in resolved or "city" in resolved):
        missing = "zip or city"
    elif use == "delivery" and not ("zip" in resolved and "city" in resolved):
        missing = " and ".join(field for field in ("zip", "city") if field not in resolved)
    else:
        return
    raise InputError(
        f"missing address columns: {missing} (columns named {', '.join(LEAF_FIELDS)} or as the batch input "
        f"names them, e.g. ZIPCode/PLZ, TownName/Ort); the header is {list(headers)}",
        path=path,
    )


def _check_rows(
    rejected: RejectedRows, frame: pd.DataFrame, use: Use, headers_of: Mapping[str, tuple[str, ...]]
) -> None:
    """The problems of every row: what ``use`` needs, the zip, the lengths, control characters."""

    def header(field: str) -> str:
        return " + ".join(headers_of.get(field, (field,)))

    zip_code, city = frame["zip"], frame["city"]
    if use == "validation":
        neither = zip_code.isna() & city.isna()
        if neither.any():
            reason = "zip and city both missing: the service needs at least one of them"
            rejected.add(problem_lines(frame.loc[neither, ROW], header("zip"), "", reason))
    else:
        combined = headers_of.get("zip") == headers_of.get("city")
        for field, values in (("zip", zip_code), ("city", city)):
            absent = values.isna()
            if absent.any():
                reason = f"{field} missing: a delivery query needs zip and city"
                if combined and field == "zip":
                    reason = f"{NO_POSTCODE}: a delivery query needs zip and city"
                rejected.add(problem_lines(frame.loc[absent, ROW], header(field), "", reason))
    bad_zip = zip_code.notna() & ~zip_code.fillna("").str.fullmatch(r"\d{4}")
    if bad_zip.any():
        reason = "zip must be exactly 4 digits"
        rejected.add(problem_lines(frame.loc[bad_zip, ROW], header("zip"), zip_code[bad_zip], reason))
    for field, limit in MAX_LENGTH.items():
        if field != "zip":  # its own check says more
            rejected.check_lengths(header(field), frame[field], limit)
    for field in LEAF_FIELDS if rejected.table.control_characters else ():
        rejected.check_controls(header(field), frame[field])
