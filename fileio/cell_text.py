"""A worksheet's cells as text, as the table reader has always given them: whole numbers without decimals,
other numbers as Python writes them, dates, times, durations and booleans spelled out; converted a column at
a time, not cell by cell.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

# What the workbook reader gives for a cell (an empty cell is "").
CellValue = str | int | float | bool | dt.date | dt.datetime | dt.time | dt.timedelta
_WHOLE_LIMIT = 2.0**63  # whole numbers below this fit a 64-bit integer


def sheet_values(cells: np.ndarray) -> np.ndarray | None:
    """The cells (a 2-D array of objects, see :func:`fileio.worksheets.read_worksheet`) as a 2-D array of
    text, cut after the last row and column holding a value; None when no cell holds one."""
    end = len(cells)
    while end and all(value == "" for value in cells[end - 1]):
        end -= 1
    if not end:
        return None
    grid = cells[:end]
    width = grid.shape[1]
    while width and all(value == "" for value in grid[:, width - 1]):
        width -= 1
    grid = grid[:, :width]
    for position in range(width):
        if not isinstance(grid[0, position], str):
            grid[0, position] = cell_text(grid[0, position])
        column = grid[1:, position]
        kind = pd.api.types.infer_dtype(column, skipna=False)
        if kind != "string" and len(column):
            grid[1:, position] = column_text(column, kind)
    return grid


# infer_dtype kinds of columns of neither text nor numbers (calamine's dates, times, durations, booleans).
_NO_NUMBER_KINDS = frozenset({"date", "datetime", "time", "timedelta", "boolean"})


def column_text(column: np.ndarray, kind: str = "mixed") -> np.ndarray:
    """A column's cells as text (see :func:`cell_text`). Whole numbers, the usual cells that are no text
    (postcodes, house numbers), are converted all at once; other values once per distinct value. ``kind``
    is pandas' ``infer_dtype`` of the column: a column of floats only, or of dates or booleans only, needs
    no look at each cell's type."""
    column = column.copy()
    all_floats = kind == "floating"
    if all_floats or kind in _NO_NUMBER_KINDS:
        numbers = np.full(len(column), all_floats)
    else:
        numbers = np.fromiter((type(value) is float for value in column), dtype=bool, count=len(column))
    if numbers.any():
        values = column[numbers].astype(np.float64)
        whole = np.isfinite(values) & (np.floor(values) == values)
        small = whole & (np.abs(values) < _WHOLE_LIMIT)
        texts = np.empty(len(values), dtype=object)
        texts[small] = values[small].astype(np.int64).astype(str)
        texts[~whole] = list(map(repr, values[~whole].tolist()))  # 2.5, 1e-07, inf
        texts[whole & ~small] = [cell_text(value) for value in values[whole & ~small].tolist()]
        column[numbers] = texts
    if all_floats:
        return column
    if kind in _NO_NUMBER_KINDS:
        others = np.ones(len(column), dtype=bool)
    else:
        others = np.fromiter((type(value) is not str for value in column), dtype=bool, count=len(column))
    if others.any():
        known: dict[tuple[type, CellValue], str] = {}  # by type too: True == 1, but "True" != "1"
        column[others] = [
            known.get((type(value), value)) or known.setdefault((type(value), value), cell_text(value))
            for value in column[others]
        ]
    return column


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
