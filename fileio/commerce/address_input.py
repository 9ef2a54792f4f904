"""Reading an address file for the commerce API: columns named as the request's leaf fields (``firstName``,
``lastName``, ``street``, ``houseNumber``, ``additionalAddress``, ``zip``, ``city``, ``postBoxNumber``) or
as the address-service batch input names them, and every row checked before anything is sent.

Headers are matched case- and punctuation-insensitively: a leaf field's own name first (``First Name``,
``house_number``), then the headers the batch input accepts (:mod:`fileio.headers`:
``Prename``, ``Vorname`` → firstName, ``Name``, ``Nachname`` → lastName, ``Streetname``, ``Strasse`` →
street, ``HouseNo`` → houseNumber, ``AddressAddition`` → additionalAddress, ``ZIPCode``, ``PLZ`` → zip,
``TownName``, ``Ort`` → city, ``PoBoxNo``, ``Postfach``, ``PostBox`` → postBoxNumber). A ``HouseNoAddition``
column is joined to the house number with a space, and a box number written with its term (``Postfach
12``) keeps the number. Among columns naming the same field the leftmost wins; the others pass through.

Rows: a row with no value at all is skipped (counted as empty); every other row is accepted or rejected
(``rejected.csv``, one line per row with all its problems: :mod:`fileio.rejected_rows`), and the counts must
add up. A row is rejected when it misses
what its use needs (validation: a zip or a city; delivery: zip and city), has a zip that is not 4 digits,
a value longer than its field, or a control character in a value that would be sent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fileio.errors import InputError
from fileio.headers import field_for_header, header_key
from fileio.lazy import lazy_module
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.rejected_rows import (
    PROBLEM_COLUMNS,
    id_column,
    malformed_problems,
    no_problems,
    problem_lines,
    rejected_report,
    write_rejected,
)
from fileio.reports import CsvStyle
from fileio.tables import read_table
from fileio.textfiles import control_characters, visible_controls

if TYPE_CHECKING:
    import pandas as pd

    from tasks.run_history import RunRecorder
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
    """

    records: pd.DataFrame
    rejected: pd.DataFrame
    rejected_report: pd.DataFrame
    columns: dict[str, tuple[str, ...]]
    passthrough: list[str]
    source: Path
    input_rows: int
    empty_rows: int

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


def resolve_columns(headers: Sequence[str]) -> dict[str, str]:
    """Which source header supplies each field (field → header); the house-number addition is the
    internal field ``houseNumberAddition``.

    A leaf field's own name beats a batch name or alias; among equals the leftmost column wins.
    """
    chosen: dict[str, tuple[int, int, str]] = {}
    for position, header in enumerate(headers):
        key = header_key(header)
        if key in _LEAF_BY_KEY:
            claim = (_LEAF_BY_KEY[key], 0)
        elif (batch_field := field_for_header(header)) in FROM_BATCH_FIELD:
            claim = (FROM_BATCH_FIELD[str(batch_field)], 1)
        elif key in _EXTRA_ALIASES:
            claim = (_EXTRA_ALIASES[key], 1)
        else:
            continue
        field, precedence = claim
        current = chosen.get(field)
        if current is None or (precedence, position) < current[:2]:
            chosen[field] = (precedence, position, header)
    return {field: header for field, (_, _, header) in chosen.items()}


def address_header(headers: Sequence[str], *, use: Use, path: Path) -> dict[str, str]:
    """The columns of a file's header that supply each field (see :func:`resolve_columns`), with the
    columns every row needs for ``use``.

    Raises:
        InputError: a column every row needs is missing (the message names it and the header).
    """
    resolved = resolve_columns(headers)
    _check_columns_present(resolved, use, headers, path)
    return resolved


def read_commerce_addresses(
    path: Path | str,
    *,
    use: Use,
    delimiter: str | None = None,
    encoding: str | None = None,
    sheet: str | int | None = None,
    reserved: Collection[str] = (),
    limits: TableLimits = TABLE_LIMITS,
) -> CommerceAddresses:
    """Read an address file (.csv/.xlsx/.txt) and check every row for ``use``.

    Args:
        path: the customer's file.
        use: ``validation`` (a zip or a city needed) or ``delivery`` (zip and city needed).
        delimiter: the field separator; sniffed when None.
        encoding: the file's encoding; detected when None.
        sheet: the worksheet of an .xlsx file (the first when None).
        reserved: output column names a pass-through column must not have (case-insensitive).
        limits: the limits on the file's shape, judged before it is read (see :func:`read_table`).

    Raises:
        InputError: the file cannot be read, lacks the columns every row needs, or a pass-through column
            has a reserved name.
    """
    source = Path(path)
    table = read_table(source, delimiter=delimiter, encoding=encoding, sheet=sheet, limits=limits)
    headers = [str(name) for name in table.frame.columns]
    resolved = address_header(headers, use=use, path=source)
    passthrough = [header for header in headers if header not in resolved.values()]
    taken = {name.casefold() for name in (ROW, *reserved)}
    for header in passthrough:
        if header.casefold() in taken:
            raise InputError("column name is reserved for the results; rename it", path=source, field=header)

    raw = table.frame
    frame, filled = _gathered(raw, resolved, passthrough)
    malformed_rows = {row for row, _ in table.malformed}
    empty = ~filled & ~frame[ROW].isin(malformed_rows)
    frame = frame[~empty]
    headers_of = _source_headers(resolved)
    problems = [malformed_problems(table.malformed)]
    checkable = frame[~frame[ROW].isin(malformed_rows)]
    problems += _row_problems(checkable, use, headers_of, controls=table.control_characters)
    rejected = pd.concat([p for p in problems if len(p)] or [no_problems()], ignore_index=True)
    rejected = rejected.sort_values(ROW, kind="stable", ignore_index=True)
    if table.control_characters and len(rejected):
        rejected["value"] = visible_controls(rejected["value"].astype(object))
    records = frame[~frame[ROW].isin(rejected[ROW])].reset_index(drop=True)
    for column in records.columns.drop(ROW):  # None, never NaN, for an empty cell: callers send these
        records[column] = records[column].astype(object).where(records[column].notna(), None)
    rejected_rows = int(rejected[ROW].nunique())
    if len(records) + rejected_rows + int(empty.sum()) != len(raw):
        raise InputError(
            f"{len(raw)} data rows were read, but {len(records)} accepted + {rejected_rows} rejected + "
            f"{int(empty.sum())} empty do not add up; rows would be lost, so nothing is sent",
            path=source,
        )
    report = rejected_report(rejected, table, id_column=id_column(headers))
    columns = {field: headers_of[field] for field in LEAF_FIELDS if field in headers_of}
    return CommerceAddresses(
        records=records,
        rejected=rejected,
        rejected_report=report,
        columns=columns,
        passthrough=passthrough,
        source=source,
        input_rows=len(frame),
        empty_rows=int(empty.sum()),
    )


def _gathered(
    raw: pd.DataFrame, resolved: Mapping[str, str], passthrough: Sequence[str]
) -> tuple[pd.DataFrame, pd.Series]:
    """The rows as records: the row number, the pass-through columns (empty cells missing), every leaf
    field (stripped; empty or absent ones missing, a house number addition joined to the number, a P.O. box
    number made a number); and whether each row holds any value."""
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
    frame["postBoxNumber"] = _box_number(frame["postBoxNumber"])
    return frame, filled


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


# "Postfach 123", "Case postale 45", "Casella postale 7", "P.O. Box 9": a term and a number in one cell.
_PO_BOX = re.compile(
    r"^(?:postfach|pf|case postale|cp|casella postale|p\.?\s?o\.?\s?box|box)\s*(\d{1,10})$", re.IGNORECASE
)


def _box_number(values: pd.Series) -> pd.Series:
    """The number of a box written with its term, as CRM exports often do; other values as they are."""
    numbers = values.astype("string").str.extract(_PO_BOX)[0]
    return numbers.where(numbers.notna(), values).astype(object).where(values.notna(), None)


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


def _row_problems(
    frame: pd.DataFrame, use: Use, headers_of: Mapping[str, tuple[str, ...]], *, controls: bool
) -> list[pd.DataFrame]:
    """One frame of rejected lines per check that found something."""

    def header(field: str) -> str:
        return " + ".join(headers_of.get(field, (field,)))

    lines: list[pd.DataFrame] = []
    zip_code, city = frame["zip"], frame["city"]
    if use == "validation":
        neither = zip_code.isna() & city.isna()
        if neither.any():
            reason = "zip and city both missing: the service needs at least one of them"
            lines.append(problem_lines(frame.loc[neither, ROW], header("zip"), "", reason))
    else:
        for field, values in (("zip", zip_code), ("city", city)):
            absent = values.isna()
            if absent.any():
                reason = f"{field} missing: a delivery query needs zip and city"
                lines.append(problem_lines(frame.loc[absent, ROW], header(field), "", reason))
    bad_zip = zip_code.notna() & ~zip_code.fillna("").str.fullmatch(r"\d{4}")
    if bad_zip.any():
        lines.append(
            problem_lines(
                frame.loc[bad_zip, ROW], header("zip"), zip_code[bad_zip], "zip must be exactly 4 digits"
            )
        )
    for field, limit in MAX_LENGTH.items():
        if field == "zip":
            continue  # its own check says more
        lengths = frame[field].str.len()
        long = lengths > limit
        if long.any():
            length = lengths[long].astype("int64").astype(str)
            lines.append(
                problem_lines(
                    frame.loc[long, ROW],
                    header(field),
                    frame.loc[long, field],
                    f"longer than {limit} characters (" + length + ")",
                )
            )
    for field in LEAF_FIELDS if controls else ():
        found = control_characters(frame[field])
        if len(found):
            index = found.index
            described = "control character " + found.astype(str) + " in the value"
            lines.append(
                problem_lines(frame.loc[index, ROW], header(field), frame.loc[index, field], described)
            )
    return lines


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
