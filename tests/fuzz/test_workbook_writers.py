"""The fast workbook writer (rustpy-xlsxwriter, :func:`fileio.workbooks.write_xlsx`) against the plain one
(xlsxwriter, :func:`fileio.workbooks.write_xlsx_plain`): frames with columns of every kind the pipelines
write — text of any sort (formulas, control characters, other scripts, missing cells), whole and broken
numbers with NaN and infinities, booleans, nullable integers and booleans, dates with and without a time
zone and NaT, categories, mixed objects — must give the same workbook, cell for cell: value, type, date
format, and the same panes, filter, widths and header.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from fileio.workbooks import write_xlsx, write_xlsx_plain
from tests.fuzz.conftest import CaseCount, fuzz_settings
from tests.fuzz.generators import cell

_NUMBERS = (0.0, -0.0, 1.5, -2.25, 1e-7, 3.0, 1e15, 1e16, 123456789.125, 2.0**53, 1 / 3, -1e300, 5e-324)
_HEADERS = ("Name", "PLZ", "QSTAT", "Notiz", "=A1", "-x", "ä", "Unnamed: 3", "", " ", "x" * 80, "7")


def _texts(rnd: random.Random, rows: int) -> pd.Series:
    values = [None if rnd.random() < 0.15 else cell(rnd) for _ in range(rows)]
    return pd.Series(values, dtype=rnd.choice((object, "str")))


def _floats(rnd: random.Random, rows: int) -> pd.Series:
    pool = (*_NUMBERS, np.nan, np.inf, -np.inf)
    return pd.Series(
        [rnd.choice(pool) if rnd.random() < 0.5 else rnd.uniform(-1e6, 1e6) for _ in range(rows)]
    )


def _whole(rnd: random.Random, rows: int) -> pd.Series:
    return pd.Series([rnd.randrange(-(2**40), 2**40) for _ in range(rows)], dtype="int64")


def _nullable(rnd: random.Random, rows: int) -> pd.Series:
    if rnd.random() < 0.5:
        return pd.Series([None if rnd.random() < 0.3 else rnd.randrange(-999, 999) for _ in range(rows)],
                         dtype="Int64")  # fmt: skip
    return pd.Series([rnd.choice((True, False, None)) for _ in range(rows)], dtype="boolean")


def _booleans(rnd: random.Random, rows: int) -> pd.Series:
    return pd.Series([rnd.random() < 0.5 for _ in range(rows)], dtype=bool)


def _dates(rnd: random.Random, rows: int) -> pd.Series:
    start = dt.datetime(1990, 1, 1)
    values = [
        None if rnd.random() < 0.2 else start + dt.timedelta(seconds=rnd.randrange(0, 60 * 365 * 86400))
        for _ in range(rows)
    ]
    dates = pd.to_datetime(pd.Series(values, dtype=object))
    return (
        dates.dt.tz_localize("Europe/Zurich", ambiguous="NaT", nonexistent="NaT")
        if rnd.random() < 0.3
        else dates
    )


def _categories(rnd: random.Random, rows: int) -> pd.Series:
    return pd.Series(
        pd.Categorical([rnd.choice(("compliance (1)", "no statement (-)", "", None)) for _ in range(rows)])
    )


def _mixed(rnd: random.Random, rows: int) -> pd.Series:
    pool: tuple[object, ...] = (
        "-x",
        1,
        2.5,
        True,
        pd.NA,
        None,
        "0123",
        "=1+1",
        dt.datetime(2020, 1, 2, 3, 4),
    )
    return pd.Series([rnd.choice(pool) for _ in range(rows)], dtype=object)


_COLUMN_KINDS: tuple[Callable[[random.Random, int], pd.Series], ...] = (
    _texts, _texts, _floats, _whole, _nullable, _booleans, _dates, _categories, _mixed,
)  # fmt: skip


def _frame(rnd: random.Random) -> pd.DataFrame:
    rows = rnd.choice((0, 1, 2, 5, 20, 60, 130))
    names = list(dict.fromkeys(rnd.choice(_HEADERS) for _ in range(rnd.randrange(0, 8))))
    columns = {name: rnd.choice(_COLUMN_KINDS)(rnd, rows) for name in names}
    return pd.DataFrame(columns, index=pd.RangeIndex(rows))


def _number(value: object) -> object:
    """A number as xlsxwriter writes it, to 16 significant digits (the fast writer writes the shortest
    text that reads back exactly, up to 17); anything else as it is."""
    return float(f"{value:.16g}") if isinstance(value, float) else value


def _workbook(path: Path) -> list[tuple[str, list[list[tuple[object, str, str]]], tuple[object, ...]]]:
    """Per sheet: its title, each cell's value, type and (for dates) number format, and its panes, filter,
    widths per column and header style."""
    sheets = []
    for sheet in openpyxl.load_workbook(path):
        cells = [
            [(_number(c.value), c.data_type, c.number_format if c.data_type == "d" else "") for c in row]
            for row in sheet.iter_rows()
        ]
        header = sheet["A1"]
        widths = {
            column: round(dimension.width, 1)
            for dimension in sheet.column_dimensions.values()
            for column in range(dimension.min, dimension.max + 1)
        }
        layout = (sheet.freeze_panes, sheet.auto_filter.ref, widths, header.font.b, header.fill.fgColor.rgb)
        sheets.append((sheet.title, cells, layout))
    return sheets


def test_the_fast_workbook_writer_writes_what_the_plain_one_writes(scratch: Path) -> None:
    workbooks = CaseCount("write_xlsx (rustpy-xlsxwriter) against write_xlsx_plain (xlsxwriter): workbooks")

    @fuzz_settings(300)
    @given(seed=st.integers(0, 2**32 - 1))
    def check(seed: int) -> None:
        rnd = random.Random(seed)
        sheets = {rnd.choice(("Results", "QSTAT summary", "Moves", "a/b", "x" * 40)) + str(n): _frame(rnd)
                  for n in range(rnd.choice((1, 1, 2, 3)))}  # fmt: skip
        fast = write_xlsx(scratch / "fast.xlsx", sheets)
        plain = write_xlsx_plain(scratch / "plain.xlsx", sheets)
        assert _workbook(fast) == _workbook(plain), sheets
        workbooks.add()

    check()
    workbooks.require(300)
