"""The rejected-rows report of every input check (``rejected.csv``): one line per rejected row, named by the
input's id column, its line in the file and its data row, with all its problems in one cell.

The checks collect problems one per line (:data:`PROBLEM_COLUMNS`: row, field, value, reason);
:func:`rejected_report` turns them into the report a clerk acts on: the input's id column first, under its own
header (the column the flow maps as its id, else one named as a customer number, else the file's first
column), then ``line`` (the physical line of the file where the row starts; in a workbook the sheet's row),
``row`` (the 1-based data row, as the results number it), ``problems`` (``field: reason; field: reason``) and
``values`` (``field: value; …`` for the problems about a value). A reason follows its field, so it never
starts a cell and the formula guard never changes it; the values, the id and the field names are the
input's and are guarded like any other cell (:func:`fileio.reports.write_csv`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fileio.errors import InputError
from fileio.headers import header_key
from fileio.lazy import lazy_module
from fileio.reports import CsvStyle, write_csv
from fileio.textfiles import control_characters, visible_controls

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from fileio.table_frame import Table
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

ROW, FIELD, VALUE, REASON = "row", "field", "value", "reason"
PROBLEM_COLUMNS = (ROW, FIELD, VALUE, REASON)
"""The checks' problems, one per line: the 1-based data row, the field (a header of the file or a field of
the request), the value and the reason."""
LINE, PROBLEMS, VALUES = "line", "problems", "values"
REPORT_COLUMNS = (LINE, ROW, PROBLEMS, VALUES)
"""The report's own columns, after the input's id column."""
ID_ALIASES = frozenset(
    {
        "id", "recordid", "addressid", "adressid", "customerid", "customerno", "customernr", "customernumber",
        "kundennummer", "kundennr", "kdnr", "kundenid", "clientid", "clientno", "clientnumber",
        "numeroclient", "noclient", "numerocliente", "codicecliente",
    }
)  # fmt: skip
"""Headers (in :func:`~fileio.headers.header_key` form) that name a customer number."""
_SEPARATOR = "; "


def id_column(headers: Sequence[str], *, known: Iterable[str | None] = ()) -> str | None:
    """The column that names a row for the people reading the report: the first of ``known`` (columns the
    flow maps as its id, e.g. an alignment profile's record id) that the file has, else the first column
    named as a customer number (:data:`ID_ALIASES`), else the first column; None for no column. Names are
    matched as :func:`~fileio.headers.header_key` reduces them."""
    by_key: dict[str, str] = {}
    for header in headers:
        by_key.setdefault(header_key(header), header)
    for name in known:
        if name and header_key(name) in by_key:
            return by_key[header_key(name)]
    recognised = next((header for header in headers if header_key(header) in ID_ALIASES), None)
    return recognised or (headers[0] if headers else None)


def problem_lines(
    rows: pd.Series, field: str, value: pd.Series | str, reason: pd.Series | str
) -> pd.DataFrame:
    """The problems of one check: one line per row of ``rows`` (data row numbers), naming ``field``, with
    the value and the reason (one for all, or per row)."""
    lines = pd.DataFrame({ROW: rows.astype("int64").to_numpy()})
    lines[FIELD] = field
    lines[VALUE] = value.to_numpy() if isinstance(value, pd.Series) else value
    lines[REASON] = reason.to_numpy() if isinstance(reason, pd.Series) else reason
    return lines


def malformed_problems(malformed: Sequence[tuple[int, str]]) -> pd.DataFrame:
    """The problems of the rows the file reader could not read
    (:attr:`fileio.table_frame.Table.malformed`)."""
    if not malformed:
        return no_problems()
    return pd.DataFrame(
        {ROW: [row for row, _ in malformed], FIELD: "", VALUE: "", REASON: [p for _, p in malformed]}
    )


def no_problems() -> pd.DataFrame:
    """No problem at all, with the columns and types of :data:`PROBLEM_COLUMNS`."""
    return pd.DataFrame({ROW: pd.Series([], dtype="int64"), FIELD: [], VALUE: [], REASON: []}).astype(
        {FIELD: str, VALUE: str, REASON: str}
    )


def problems_frame(lines: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Problems given one dict per line (row, field, value, reason) as a frame ordered by row (a row's
    problems in the order found)."""
    frame = pd.DataFrame(list(lines), columns=list(PROBLEM_COLUMNS))
    if frame.empty:
        return no_problems()
    return frame.sort_values(ROW, kind="stable", ignore_index=True)


class RejectedRows:
    """The rejected rows of one input file, as every reader collects them: the problems one per line
    (:data:`PROBLEM_COLUMNS`), starting with the rows the file reader could not read, each of them named by
    its data row (the index of :attr:`fileio.tables.Table.frame`).

    What becomes of them is the same for every reader: the lines in row order, a row's problems in the order
    found and control characters written visibly (:meth:`lines`); ``rejected.csv`` (:meth:`report`); and the
    check that every row read is accepted, rejected or empty (:meth:`check_accounted`).
    """

    def __init__(self, table: Table) -> None:
        self.table = table
        self.malformed: frozenset[int] = frozenset(row for row, _ in table.malformed)
        """The rows the file reader could not read: they have that one problem, no other is looked for."""
        self._found: list[pd.DataFrame] = [malformed_problems(table.malformed)]
        self._pending: list[dict[str, Any]] = []
        self._lines: pd.DataFrame | None = None

    def add(self, lines: pd.DataFrame) -> None:
        """The problems of one check (:func:`problem_lines`)."""
        self._flush()
        if len(lines):
            self._found.append(lines)
            self._lines = None

    def add_line(self, row: int, field: str, value: str, reason: str) -> None:
        """One problem of one row."""
        self._pending.append({ROW: row, FIELD: field, VALUE: value, REASON: reason})

    def check_lengths(self, field: str, values: pd.Series, limit: int) -> None:
        """A line for each value (by data row) longer than ``limit`` characters, naming ``field``."""
        lengths = values.str.len()
        long = (lengths > limit) & ~values.index.isin(list(self.malformed))
        if long.any():
            reason = f"longer than {limit} characters (" + lengths[long].astype("int64").astype(str) + ")"
            self.add(problem_lines(values.index[long].to_series(), field, values[long], reason))

    def check_controls(self, field: str, values: pd.Series) -> None:
        """A line for each value (by data row) that holds a control character, naming ``field``."""
        found = control_characters(values)
        found = found[~found.index.isin(list(self.malformed))]
        if len(found):
            reason = "control character " + found.astype(str) + " in the value"
            self.add(problem_lines(found.index.to_series(), field, values[found.index], reason))

    @property
    def rows(self) -> set[int]:
        """The rows rejected so far."""
        return {int(row) for row in self.lines()[ROW]}

    def lines(self) -> pd.DataFrame:
        """Every problem, one per line, in row order (a row's problems in the order found); values with a
        control character show it as ``\\x01`` when the file holds any."""
        self._flush()
        if self._lines is None:
            lines = pd.concat(
                [found for found in self._found if len(found)] or [no_problems()], ignore_index=True
            )
            lines = lines.sort_values(ROW, kind="stable", ignore_index=True)
            if self.table.control_characters and len(lines):
                lines[VALUE] = visible_controls(lines[VALUE].astype(object))
            self._lines = lines
        return self._lines

    def count(self) -> int:
        """How many rows are rejected (a row may have several problems)."""
        return int(self.lines()[ROW].nunique())

    def report(self, *, id_column: str | None) -> pd.DataFrame:
        """``rejected.csv``: a line per rejected row, named by ``id_column`` (see :func:`rejected_report`)."""
        return rejected_report(self.lines(), self.table, id_column=id_column)

    def check_accounted(self, path: Path, *, accepted: int, empty: int) -> None:
        """Every row read is accepted, rejected or empty; anything else would lose rows silently.

        Raises:
            InputError: the counts do not add up (nothing is sent).
        """
        rows, rejected = len(self.table.frame), self.count()
        if accepted + rejected + empty != rows:
            raise InputError(
                f"{rows} data rows were read, but {accepted} accepted + {rejected} rejected + {empty} empty "
                f"= {accepted + rejected + empty}; rows would be lost, so nothing is sent",
                path=path,
            )

    def _flush(self) -> None:
        if self._pending:
            self._found.append(problems_frame(self._pending))
            self._pending = []
            self._lines = None


def rejected_report(problems: pd.DataFrame, table: Table, *, id_column: str | None) -> pd.DataFrame:
    """The report of the rejected rows: one line per row that has a problem, in row order (see the module
    docstring for its columns). ``table`` is the file as read (its rows by data row number, and its lines);
    ``id_column`` the column to name the rows by (:func:`id_column`), None for none. An id column named
    like one of the report's own keeps its name, and the report's column is called ``<name> (report)``."""
    rows = pd.Index(pd.unique(problems[ROW].astype("int64").to_numpy())).sort_values()
    columns: list[str] = [] if id_column is None else [id_column]
    columns += [f"{name} (report)" if name == id_column else name for name in REPORT_COLUMNS]
    if not len(rows):
        return pd.DataFrame({name: pd.Series([], dtype=object) for name in columns})
    by_row = problems.assign(
        **{
            PROBLEMS: _parts(problems[FIELD], problems[REASON]),
            VALUES: _parts(problems[FIELD], problems[VALUE]),
        }
    ).groupby(ROW, sort=True)
    data: list[pd.Series | np.ndarray] = []
    if id_column is not None:
        ids = table.frame[id_column].reindex(rows).astype(object)
        ids = ids.where(ids.notna(), "")
        if table.control_characters:
            ids = visible_controls(ids.astype(str))
        data.append(ids.to_numpy(dtype=object))
    data += [
        row_lines(table, rows),
        rows.to_numpy(),
        by_row[PROBLEMS].agg(_joined).reindex(rows).to_numpy(dtype=object),
        by_row[VALUES].agg(_joined).reindex(rows).to_numpy(dtype=object),
    ]
    report = pd.DataFrame(dict(enumerate(data)))
    report.columns = pd.Index(columns, dtype=object)
    return report


def write_rejected(report: pd.DataFrame, path: Path, *, style: CsvStyle) -> Path | None:
    """Write the report (:func:`rejected_report`) as a CSV file in ``style``; when no row was rejected,
    write nothing, remove a report an earlier run left at ``path`` and return None."""
    if report.empty:
        path.unlink(missing_ok=True)
        return None
    return write_csv(report, path, style=style)


def _parts(fields: pd.Series, texts: pd.Series) -> pd.Series:
    """``field: text`` per problem (the text alone without a field; None without a text)."""
    field = fields.fillna("").astype(str)
    text = texts.fillna("").astype(str)
    parts = (field + ": " + text).where(field != "", text)
    return parts.where(text != "", None)


def _joined(parts: pd.Series) -> str:
    """A row's parts in the order found, each once."""
    return _SEPARATOR.join(dict.fromkeys(part for part in parts if isinstance(part, str)))


def row_lines(table: Table, rows: pd.Index) -> np.ndarray:
    """The physical line where each row starts; in a workbook, the sheet's row (the header is row 1)."""
    if table.lines is None:
        return rows.to_numpy() + 1
    lines: np.ndarray = np.asarray(table.lines)[rows.to_numpy() - 1]
    return lines
