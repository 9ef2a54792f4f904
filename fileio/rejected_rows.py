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

from fileio.headers import header_key
from fileio.lazy import lazy_module
from fileio.reports import CsvStyle, write_csv
from fileio.textfiles import visible_controls

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
        _lines(table, rows),
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


def _lines(table: Table, rows: pd.Index) -> np.ndarray:
    """The physical line where each row starts; in a workbook, the sheet's row (the header is row 1)."""
    if table.lines is None:
        return rows.to_numpy() + 1
    lines: np.ndarray = np.asarray(table.lines)[rows.to_numpy() - 1]
    return lines
