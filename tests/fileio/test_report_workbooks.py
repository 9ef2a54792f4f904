"""Results workbooks: the fast writer (rustpy-xlsxwriter) writes every kind of column as xlsxwriter does,
with the same header, panes, filter and widths; text stays text, whatever it looks like."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

from fileio.tables import read_table
from fileio.workbooks import EXCEL_MAX_TEXT, write_xlsx, write_xlsx_plain


def _every_kind() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "PLZ": ["0123", "3000", None],
            "Count": [1, 2, 3],
            "Score": [100.0, np.nan, 94.5],
            "Flag": [True, False, True],
            "Nullable": pd.array([1, None, 3], dtype="Int64"),
            "Yes": pd.array([True, None, False], dtype="boolean"),
            "Formula": ["=1+1", "http://example.org", "@SUM(A1)"],
            "Category": pd.Categorical(["a", None, "a"]),
            "When": pd.to_datetime(["2024-01-02 03:04:05", None, "2024-02-03 00:00:00"]),
            "Zoned": pd.to_datetime(["2024-01-02 03:04:05+01:00"] * 3),
            "Mixed": pd.Series(["-x", 1, pd.NA], dtype=object),
            "Text": pd.array(["x", None, "=A1"], dtype="str"),
            "Odd": ["a\x01b", "_x0041_", "x\r\ny"],
            7: ["a number as name", "", " "],
        }
    )


def _sheet(path: Path, title: str) -> tuple[list[list[tuple[object, str, str]]], tuple[object, ...]]:
    """Each cell's value, type and (for dates) number format; the sheet's panes, filter, widths and header
    style."""
    sheet = openpyxl.load_workbook(path)[title]
    cells = [
        [(cell.value, cell.data_type, cell.number_format if cell.data_type == "d" else "") for cell in row]
        for row in sheet.iter_rows()
    ]
    header = sheet["A1"]
    widths = {letter: round(dimension.width, 1) for letter, dimension in sheet.column_dimensions.items()}
    layout = (sheet.freeze_panes, sheet.auto_filter.ref, widths, header.font.b, header.fill.fgColor.rgb)
    return cells, layout


def test_the_fast_writer_writes_what_xlsxwriter_writes(tmp_path: Path) -> None:
    frame = _every_kind()
    fast = write_xlsx(tmp_path / "fast.xlsx", {"Data": frame})
    # Styles, even none at all, take the xlsxwriter path: the reference.
    unstyled = pd.DataFrame(None, index=frame.index, columns=frame.columns)
    reference = write_xlsx(tmp_path / "reference.xlsx", {"Data": frame}, styles={"Data": unstyled})
    assert _sheet(fast, "Data") == _sheet(reference, "Data")
    cells, layout = _sheet(fast, "Data")
    assert layout[:2] == ("A2", "A1:N4")
    assert [value for value, _, _ in cells[0]] == [str(column) for column in frame.columns]
    first = [value for value, _, _ in cells[1]]
    assert first[:4] == ["0123", 1, 100, True]
    assert first[8] == dt.datetime(2024, 1, 2, 3, 4, 5) and cells[1][8][2] == "yyyy-mm-dd hh:mm:ss"
    assert first[9] == dt.datetime(2024, 1, 2, 3, 4, 5)  # the local time, the zone dropped
    assert [value for value, _, _ in cells[2]][:12] == [
        "3000", 2, None, False, None, None, "http://example.org", None, None,
        dt.datetime(2024, 1, 2, 3, 4, 5), 1, None,
    ]  # fmt: skip
    assert all(kind != "f" for row in cells for _, kind, _ in row)  # text is never a formula
    assert cells[3][6] == ("@SUM(A1)", "s", "") and cells[3][11] == ("=A1", "s", "")
    # Control characters and text that looks like an escape are escaped (openpyxl shows the escapes).
    assert read_table(fast).frame["Odd"].tolist() == ["a\x01b", "_x0041_", "x\r\ny"]


@pytest.mark.parametrize("styled", [False, True], ids=["fast writer", "xlsxwriter"])
def test_text_longer_than_a_cell_holds_is_cut_to_its_length(tmp_path: Path, styled: bool) -> None:
    """xlsxwriter skips such a cell with a warning; the fast writer would refuse the whole workbook."""
    frame = pd.DataFrame(
        {
            "Notiz": ["x" * (EXCEL_MAX_TEXT + 10), "kurz"],
            "Code": pd.Categorical(["y" * (EXCEL_MAX_TEXT + 1), "z"]),
            "Text": pd.array(["w" * (EXCEL_MAX_TEXT + 2), None], dtype="str"),
        }
    )
    styles = {"Data": pd.DataFrame(None, index=frame.index, columns=frame.columns)} if styled else None
    sheet = openpyxl.load_workbook(write_xlsx(tmp_path / "lang.xlsx", {"Data": frame}, styles=styles))["Data"]
    assert [len(cell.value) for cell in sheet[2]] == [EXCEL_MAX_TEXT] * 3
    assert [cell.value for cell in sheet[3]] == ["kurz", "z", None]


def test_a_date_of_a_named_time_zone_is_written_in_its_local_time(tmp_path: Path) -> None:
    """A zone such as Europe/Zurich (not only a fixed offset) is dropped, its local time kept."""
    zoned = pd.to_datetime(["2024-07-01 12:00:00", "2024-12-01 08:30:00"]).tz_localize("Europe/Zurich")
    frame = pd.DataFrame({"When": zoned})
    fast = write_xlsx(tmp_path / "fast.xlsx", {"Data": frame})
    plain = write_xlsx_plain(tmp_path / "plain.xlsx", {"Data": frame})
    assert _sheet(fast, "Data") == _sheet(plain, "Data")
    cells, _ = _sheet(fast, "Data")
    assert [row[0][0] for row in cells[1:]] == [
        dt.datetime(2024, 7, 1, 12, 0),
        dt.datetime(2024, 12, 1, 8, 30),
    ]


def test_an_infinite_number_is_the_text_inf(tmp_path: Path) -> None:
    frame = pd.DataFrame({"Score": [np.inf, -np.inf, 1.5]})
    sheet = openpyxl.load_workbook(write_xlsx(tmp_path / "inf.xlsx", {"Data": frame}))["Data"]
    assert [cell.value for cell in sheet["A"]] == ["Score", "inf", "-inf", 1.5]


def test_several_sheets_and_a_sheet_without_rows_or_columns(tmp_path: Path) -> None:
    sheets = {
        "Results": pd.DataFrame({"a": [1, 2]}),
        "Empty": pd.DataFrame(columns=["only", "header"]),
        "Nothing": pd.DataFrame(),
    }
    workbook = openpyxl.load_workbook(write_xlsx(tmp_path / "three.xlsx", sheets))
    assert workbook.sheetnames == ["Results", "Empty", "Nothing"]
    assert [[cell.value for cell in row] for row in workbook["Results"].iter_rows()] == [["a"], [1], [2]]
    assert [cell.value for cell in workbook["Empty"][1]] == ["only", "header"]
    assert workbook["Empty"].max_row == 1
    assert workbook["Empty"].freeze_panes == "A2"
    assert workbook["Nothing"].max_row == 1 and workbook["Nothing"]["A1"].value is None


def test_repeated_column_names_are_written_as_they_are(tmp_path: Path) -> None:
    frame = pd.DataFrame([["1", "2", "3"]], columns=["x", "x", "y"])
    sheet = openpyxl.load_workbook(write_xlsx(tmp_path / "dup.xlsx", {"Data": frame}))["Data"]
    assert [[cell.value for cell in row] for row in sheet.iter_rows()] == [["x", "x", "y"], ["1", "2", "3"]]
