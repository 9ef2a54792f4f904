"""The column-at-a-time conversion of a worksheet's cells to text against the cell-by-cell reference: every
kind of value calamine gives, alone in a column and mixed."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fileio.cell_text import CellValue, cell_text, column_text, sheet_text

_NUMBERS = st.one_of(
    st.floats(),  # NaN, infinities, -0.0, subnormals, whole numbers beyond 64 bits
    st.integers(-(2**70), 2**70).map(float),
    st.sampled_from([0.0, 3000.0, 8001.0, 2.5, 1e-07, 1e16, 2.0**63, -(2.0**63), 2.0**63 - 1024]),
)
_VALUES: dict[str, st.SearchStrategy[CellValue]] = {
    "text": st.text(max_size=8),
    "number": _NUMBERS,
    "integer": st.integers(-(2**70), 2**70),
    "boolean": st.booleans(),
    "date": st.dates(),
    "datetime": st.datetimes(),
    "time": st.times(),
    "duration": st.timedeltas(),
}


def _column(values: list[CellValue]) -> np.ndarray:
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        *(st.lists(strategy, max_size=30) for strategy in _VALUES.values()),
        st.lists(st.one_of(*_VALUES.values()), max_size=30),
    )
)
def test_a_column_reads_as_its_cells_one_by_one(values: list[CellValue]) -> None:
    texts = column_text(_column(values))
    assert texts.to_pylist() == [cell_text(value) for value in values]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            [8001.0, 2405.67, 1e-07, float("inf"), float("nan"), -0.0, 1e20],
            ["8001", "2405.67", "1e-07", "inf", "nan", "0", "100000000000000000000"],
        ),
        (
            ["12a", 12.0, "", True, 1, dt.date(2030, 1, 31)],
            ["12a", "12", "", "True", "1", "2030-01-31 00:00:00"],
        ),
        ([True, False, True], ["True", "False", "True"]),
        ([dt.time(12, 30), dt.time(12, 30)], ["12:30:00", "12:30:00"]),
        ([dt.timedelta(days=1, hours=2)], ["1 day, 2:00:00"]),
    ],
)  # fmt: skip
def test_cells_read_as_the_reader_has_always_given_them(values: list[CellValue], expected: list[str]) -> None:
    assert column_text(_column(values)).to_pylist() == expected


def test_a_sheet_is_cut_after_its_last_row_and_column_holding_a_value() -> None:
    cells = np.array(
        [["PLZ", 7.0, ""], [3000.0, "", ""], ["", "x", ""], ["", "", ""]],
        dtype=object,
    )
    text = sheet_text(cells)
    assert text is not None
    assert text.header == ["PLZ", "7"]
    assert [column.to_pylist() for column in text.columns] == [["3000", ""], ["", "x"]]
    assert sheet_text(np.full((2, 2), "", dtype=object)) is None
