"""A worksheet's cells as text, as the table reader has always given them: whole numbers without decimals,
other numbers as Python writes them, dates, times, durations and booleans spelled out; converted a column at
a time into Arrow text columns, not cell by cell (:func:`cell_text` is the cell-by-cell reference).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, NamedTuple

from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")

# What the workbook reader gives for a cell (an empty cell is "").
CellValue = str | int | float | bool | dt.date | dt.datetime | dt.time | dt.timedelta
_WHOLE_LIMIT = 2.0**63  # whole numbers below this fit a 64-bit integer
# infer_dtype kinds of columns of neither text nor numbers (calamine's dates, times, durations, booleans).
_NO_NUMBER_KINDS = frozenset({"date", "datetime", "time", "timedelta", "boolean"})


class SheetText(NamedTuple):
    """A worksheet's header and its data columns as text."""

    header: list[str]
    columns: list[pa.LargeStringArray]


def sheet_text(cells: np.ndarray) -> SheetText | None:
    """The cells (a 2-D array of objects, see :func:`fileio.worksheets.read_worksheet`) as text: the first
    row as the header, each column of the rows below as an Arrow ``large_string`` array (see
    :func:`column_text`); cut after the last row and column holding a value. None when no cell holds one."""
    end = len(cells)
    while end and all(value == "" for value in cells[end - 1]):
        end -= 1
    if not end:
        return None
    width = cells.shape[1]
    while width and all(value == "" for value in cells[:end, width - 1]):
        width -= 1
    header = [value if isinstance(value, str) else cell_text(value) for value in cells[0, :width]]
    return SheetText(header, [column_text(cells[1:end, position]) for position in range(width)])


def column_text(column: np.ndarray) -> pa.LargeStringArray:
    """A column's cells (objects, see :data:`CellValue`) as Arrow text, each cell as :func:`cell_text` gives
    it. Numbers, the usual cells that are no text (postcodes, house numbers), are converted all at once;
    dates, times and booleans once per distinct value."""
    kind = pd.api.types.infer_dtype(column, skipna=False)
    if kind == "floating":
        return _number_text(column.astype(np.float64))
    if kind in _NO_NUMBER_KINDS:  # one type throughout, so equal values are equal cells
        codes, distinct = pd.factorize(column, use_na_sentinel=False)
        return _large_text([cell_text(value) for value in distinct]).take(codes)
    texts = column
    numbers = None
    if kind != "string":
        numbers = np.fromiter((type(value) is float for value in column), dtype=bool, count=len(column))
        texts = column.copy()
        texts[numbers] = ""
        others = np.fromiter((type(value) is not str for value in texts), dtype=bool, count=len(texts))
        known: dict[tuple[type, CellValue], str] = {}  # by type too: True == 1, but "True" != "1"
        texts[others] = [
            known.get((type(value), value)) or known.setdefault((type(value), value), cell_text(value))
            for value in texts[others]
        ]
    strings = _large_text(texts.tolist())
    if numbers is None or not numbers.any():
        return strings
    values = np.zeros(len(column))
    values[numbers] = column[numbers].astype(np.float64)
    return pc.if_else(numbers, _number_text(values), strings)


def _number_text(values: np.ndarray) -> pa.LargeStringArray:
    """Numbers as :func:`cell_text` writes them: whole numbers of 64 bits by Arrow's integer cast, the
    others (``2.5``, ``1e-07``, ``inf``, whole numbers beyond 64 bits) by Python."""
    whole = np.isfinite(values) & (np.floor(values) == values)
    small = whole & (np.abs(values) < _WHOLE_LIMIT)
    texts = pa.array(np.where(small, values, 0).astype(np.int64)).cast(pa.large_string())
    if small.all():
        return texts
    rest = values[~small]
    rest_texts = np.empty(len(rest), dtype=object)
    rest_whole = whole[~small]
    rest_texts[~rest_whole] = list(map(repr, rest[~rest_whole].tolist()))
    rest_texts[rest_whole] = [cell_text(value) for value in rest[rest_whole].tolist()]
    return pc.replace_with_mask(texts, ~small, _large_text(rest_texts.tolist()))


def _large_text(texts: list[str]) -> pa.LargeStringArray:
    return pa.array(texts, type=pa.large_string())


def cell_text(value: CellValue) -> str:
    """A cell's value as text, as the reader has always given it: a whole number without decimals
    (``3000``, not ``3000.0``), other numbers as Python writes them (``2.5``, ``1e-07``), a date as
    ``2030-01-31 00:00:00``, a time as ``12:30:00``, a duration as ``1 day, 2:00:00``, booleans as
    ``True``/``False``."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return f"{value.isoformat()} 00:00:00"
    return str(value)
