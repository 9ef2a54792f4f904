"""Statistics records (§2.6) from a .csv or .xlsx file: columns recognised by name, each row converted and
checked; a row that fails goes to the rejected-rows report (:mod:`fileio.rejected_rows`), never lost.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectors.newspaper import StatisticsRecord, StatisticsSubmission, check_statistics
from fileio.errors import InputError
from fileio.headers import header_key, resolve_columns
from fileio.input_rows import RowCells
from fileio.lazy import lazy_module
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.rejected_rows import RejectedRows, id_column
from fileio.tables import read_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported on first use: the CLI checks a header without it

INTEGER_FIELDS = ("newspaperId", "houseKey", "bbz", "aplz", "count")
TEXT_FIELDS = ("split", "product", "city", "bundleType")
DATE_FIELDS = ("deliveryDate",)
REQUIRED_COLUMNS = ("newspaperId", "product", "deliveryDate", "count")
_ALIASES: dict[str, tuple[str, ...]] = {
    "newspaperId": ("newspaperid", "zeitungsid", "idjournal", "idgiornale"),
    "split": ("split", "splitting", "teilausgabe"),
    "product": ("product", "produkt", "produit", "prodotto"),
    "houseKey": ("housekey", "hauskey", "hausschluessel", "gebaeudeschluessel"),
    "bbz": ("bbz", "botenbezirk", "mailcarrierdistrict"),
    "aplz": ("aplz",),
    "city": ("city", "ort", "ortschaft", "localite", "localita"),
    "deliveryDate": ("deliverydate", "zustelldatum", "ausgabedatum", "datedelivraison", "datadiconsegna"),
    "bundleType": ("bundletype", "bundtyp", "bunttyp", "typedepaquet"),
    "count": ("count", "anzahl", "menge", "exemplare", "nombre", "quantita"),
}
_BY_KEY = {alias: name for name, aliases in _ALIASES.items() for alias in aliases}
_SWISS_DATE = re.compile(r"^(\d{1,2})\.(\d{1,2})\.(\d{4})$")
_ISO_PREFIX = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[ T]00:00(?::00)?)?$")
_INTEGER = re.compile(r"^[+-]?\d+(?:\.0+)?$")


@dataclass
class StatisticsInput:
    """A statistics file read and checked: accepted records with their 1-based data row, the rejected rows
    (``rejected``: one line per problem; ``rejected_report``: one line per row, as ``rejected.csv`` holds
    it)."""

    records: list[tuple[int, StatisticsRecord]]
    rejected: pd.DataFrame
    rejected_report: pd.DataFrame
    input_rows: int
    source: Path

    @property
    def rejected_rows(self) -> int:
        return len(self.rejected_report)

    @property
    def submission(self) -> StatisticsSubmission:
        return StatisticsSubmission(statistics=[record for _, record in self.records])


def parse_date(text: str) -> dt.date:
    """A date written ``YYYY-MM-DD`` (also with a zero time, as spreadsheets export it) or ``DD.MM.YYYY``."""
    value = text.strip()
    if match := _ISO_PREFIX.match(value):
        return dt.date.fromisoformat(match.group(1))
    if match := _SWISS_DATE.match(value):
        day, month, year = (int(part) for part in match.groups())
        return dt.date(year, month, day)
    raise ValueError(f"{value!r} is not a date (YYYY-MM-DD or DD.MM.YYYY)")


def statistics_columns(headers: Sequence[str]) -> dict[str, str]:
    """Which header supplies each §2.6 field (field → header); the leftmost of equal candidates wins."""
    return resolve_columns(headers, (_BY_KEY,))


def statistics_header(headers: Sequence[str], *, path: Path) -> dict[str, str]:
    """The §2.6 fields of a file's header (see :func:`statistics_columns`), with the columns every record
    needs.

    Raises:
        InputError: a required column is missing (the message names it and the header).
    """
    columns = statistics_columns(headers)
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if missing:
        raise InputError(
            f"missing statistics columns: {', '.join(missing)} (header is {list(headers)})", path=path
        )
    return columns


def read_statistics_file(path: Path, *, limits: TableLimits = TABLE_LIMITS) -> StatisticsInput:
    """Read and check a statistics file; completely empty rows are skipped. A file over ``limits`` is refused
    before it is read (see :func:`read_table`).

    Raises:
        InputError: the file cannot be read, is over a limit or lacks a column every record needs.
    """
    table = read_table(path, limits=limits)
    headers = [str(header) for header in table.frame.columns]
    columns = statistics_header(headers, path=path)
    rejected = RejectedRows(table)
    records: list[tuple[int, StatisticsRecord]] = []
    input_rows = len(rejected.malformed)
    rows = RowCells(table.frame, columns, skip=rejected.malformed)
    for row, cells in rows:
        input_rows += 1
        record, problems = _record(cells)
        for problem in problems:
            rejected.add_line(row, **problem)
        if record is not None:
            records.append((row, record))
    rejected.check_accounted(path, accepted=len(records), empty=rows.empty)
    report = rejected.report(id_column=id_column(headers))
    return StatisticsInput(records, rejected.lines(), report, input_rows, path)


def _record(cells: dict[str, str]) -> tuple[StatisticsRecord | None, list[dict[str, str]]]:
    problems: list[dict[str, str]] = []
    body: dict[str, Any] = {}
    for name, text in cells.items():
        if not text:
            continue
        if name in INTEGER_FIELDS:
            if _INTEGER.match(text):
                body[name] = int(float(text))
            else:
                problems.append({"field": name, "value": text, "reason": "is not a whole number"})
        elif name in DATE_FIELDS:
            try:
                body[name] = parse_date(text).isoformat()
            except ValueError as exc:
                problems.append({"field": name, "value": text, "reason": str(exc)})
        else:
            body[name] = text
    if problems:
        return None, problems
    record = StatisticsRecord.model_validate(body)
    for problem in check_statistics(StatisticsSubmission(statistics=[record])):
        name = problem.field_path.removeprefix("statistics[0].")
        problems.append({"field": name, "value": cells.get(name, ""), "reason": problem.message})
    return (None, problems) if problems else (record, [])


def read_calendar(path: Path, *, limits: TableLimits = TABLE_LIMITS) -> list[dt.date]:
    """The issue calendar: the dates of a column named deliveryDate/date/Datum, else of the first column (a
    file over ``limits`` is refused before it is read)."""
    table = read_table(path, limits=limits)
    headers = [str(header) for header in table.frame.columns]
    wanted = {"deliverydate", "date", "datum", "zustelldatum", "ausgabedatum", "issuedate"}
    column = next((header for header in headers if header_key(header) in wanted), headers[0])
    dates: list[dt.date] = []
    for row, value in table.frame[column].items():
        text = str(value).strip() if pd.notna(value) else ""
        if not text:
            continue
        try:
            dates.append(parse_date(text))
        except ValueError as exc:
            raise InputError(str(exc), path=path, row=int(str(row)), field=column) from exc
    return sorted(set(dates))
