"""Report files: atomic CSV, styled streaming Excel workbooks, markdown tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, markdown_table, neutralise_formulas, write_csv
from fileio.workbooks import sanitize_sheet_name, write_xlsx
from tests.outputs import EXCEL, RFC4180, read_output_csv

PLAIN = CsvStyle(guard=False, dialect="rfc4180")


def test_write_csv_is_by_default_what_excel_with_a_swiss_locale_opens_right(tmp_path: Path) -> None:
    frame = pd.DataFrame({"Kdnr": ["007"], "Ort": ["Zürich"], "Score": [99.5], "Notiz": ["a;b"]})
    path = write_csv(frame, tmp_path / "sub" / "out.csv", style=DEFAULT_CSV_STYLE)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")  # the byte-order mark: Excel reads UTF-8 as UTF-8
    assert data == '\ufeffKdnr;Ort;Score;Notiz\r\n007;Zürich;99.5;"a;b"\r\n'.encode()
    assert pd.read_csv(path, sep=";", encoding="utf-8-sig", dtype=str).loc[0, "Ort"] == "Zürich"
    assert [p.name for p in path.parent.iterdir()] == ["out.csv"]


def test_write_csv_in_rfc4180_is_utf8_without_bom_and_comma_separated(tmp_path: Path) -> None:
    frame = pd.DataFrame({"Kdnr": ["007"], "Ort": ["Zürich"], "Notiz": ["a,b"]})
    path = write_csv(frame, tmp_path / "out.csv", style=RFC4180)
    assert path.read_bytes() == 'Kdnr,Ort,Notiz\r\n007,Zürich,"a,b"\r\n'.encode()
    assert read_output_csv(path, dtype=str).to_dict("records") == [
        {"Kdnr": "007", "Ort": "Zürich", "Notiz": "a,b"}
    ]


def test_the_default_style_is_the_settings_default() -> None:
    from runtime.settings import Settings

    assert Settings(_env_file=None).csv_style == DEFAULT_CSV_STYLE == EXCEL  # type: ignore[call-arg]


def test_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "out.csv"
    path.write_text("old")

    def explode(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", explode)
    with pytest.raises(OSError, match="disk full"):
        write_csv(pd.DataFrame({"a": [1]}), path, style=EXCEL)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_write_xlsx_styles_and_types(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "PLZ": ["0123", "3000", None],
            "Count": [1, 2, 3],
            "Score": [100.0, np.nan, 94.5],
            "Flag": [True, False, True],
            "Nullable": pd.array([1, None, 3], dtype="Int64"),
            "Formula": ["=1+1", "http://example.org", "x"],
            "Category": pd.Categorical(["a", "b", "a"]),
        }
    )
    path = write_xlsx(tmp_path / "report.xlsx", {"Data": frame})
    workbook = openpyxl.load_workbook(path)
    sheet = workbook["Data"]
    assert [cell.value for cell in sheet[1]] == list(frame.columns)
    header = sheet["A1"]
    assert header.font.b is True
    assert header.fill.fgColor.rgb.endswith("DDEBF7")
    assert sheet.freeze_panes == "A2"
    assert sheet.auto_filter.ref == "A1:G4"
    rows = [[cell.value for cell in row] for row in sheet.iter_rows(min_row=2)]
    assert rows == [
        ["0123", 1, 100, True, 1, "=1+1", "a"],
        ["3000", 2, None, False, None, "http://example.org", "b"],
        [None, 3, 94.5, True, 3, "x", "a"],
    ]
    assert sheet["F2"].data_type == "s"  # text, never a formula
    assert sheet["A2"].data_type == "s"
    assert sheet.column_dimensions["A"].width >= 6
    assert sheet.column_dimensions["F"].width >= len("http://example.org")


def test_write_xlsx_sheet_names_and_empty_frames(tmp_path: Path) -> None:
    sheets = {
        "A very long sheet name that Excel would refuse": pd.DataFrame({"x": [1]}),
        "Bad/name:[1]?": pd.DataFrame({"y": ["z"]}),
        "bad_name__1__": pd.DataFrame(),
        "Empty": pd.DataFrame(columns=["only", "header"]),
    }
    workbook = openpyxl.load_workbook(write_xlsx(tmp_path / "names.xlsx", sheets))
    assert workbook.sheetnames == [
        "A very long sheet name that Exc",
        "Bad_name__1__",
        "bad_name__1__ (2)",
        "Empty",
    ]
    assert [cell.value for cell in workbook["Empty"][1]] == ["only", "header"]
    assert workbook["Empty"].max_row == 1


def test_sanitize_sheet_name() -> None:
    assert sanitize_sheet_name("") == "Sheet"
    assert sanitize_sheet_name("'quoted'") == "quoted"
    assert sanitize_sheet_name("a*b?c") == "a_b_c"
    assert sanitize_sheet_name("Results", {"results"}) == "Results (2)"
    long = "x" * 40
    assert sanitize_sheet_name(long, {"x" * 31}) == "x" * 27 + " (2)"


def test_xlsx_is_atomic(tmp_path: Path) -> None:
    class Broken:
        columns = ["a"]

        def __len__(self) -> int:
            raise RuntimeError("broken frame")

    path = tmp_path / "r.xlsx"
    with pytest.raises(RuntimeError):
        write_xlsx(path, {"S": Broken()})  # type: ignore[dict-item]
    assert list(tmp_path.iterdir()) == []


def test_markdown_table() -> None:
    frame = pd.DataFrame({"QSTAT": ["1", "K|F"], "Count": [3, None], "Share %": [37.5, 0.1 + 0.2]})
    assert markdown_table(frame) == (
        "| QSTAT | Count | Share % |\n| --- | --- | --- |\n| 1 | 3 | 37.5 |\n| K\\|F |  | 0.3 |"
    )
    many = pd.DataFrame({"n": range(60)})
    text = markdown_table(many, max_rows=5)
    assert text.splitlines()[-1] == "_… 55 more rows_"
    assert text.count("\n| ") == 6  # rule + five rows
    assert markdown_table(pd.DataFrame()) == "_(no columns)_"
    assert markdown_table(pd.DataFrame({"a": ["x\ny"]})).endswith("| x y |")


def test_neutralise_formulas_guards_text_that_starts_like_a_formula() -> None:
    frame = pd.DataFrame(
        {
            "text": ["=1+1", "+41 79 000", "-x", "@SUM(A1)", "\tx", "\rx", "a=b", "", None],
            "number": [-5, 1, 2, 3, 4, 5, 6, 7, 8],
            "mixed": pd.Series(["-x", 1, None, -2.5, "=y", "z", True, "@", "ok"], dtype=object),
            "category": pd.Categorical(["=a", "b", "=a", "b", "b", "b", "b", "b", "-"]),
            "code": ["- no statement"] * 9,
        }
    )
    before = frame.copy()
    guarded = neutralise_formulas(frame, ["text", "number", "mixed", "category"])
    assert guarded["text"].tolist()[:8] == [
        "'=1+1",
        "'+41 79 000",
        "'-x",
        "'@SUM(A1)",
        "'\tx",
        "'\rx",
        "a=b",
        "",
    ]
    assert pd.isna(guarded["text"].iloc[8])
    assert guarded["number"].tolist() == frame["number"].tolist()  # a negative number is no formula
    assert guarded["mixed"].tolist() == ["'-x", 1, None, -2.5, "'=y", "z", True, "'@", "ok"]
    assert guarded["category"].tolist()[:2] == ["'=a", "b"] and guarded["category"].iloc[8] == "'-"
    assert isinstance(guarded["category"].dtype, pd.CategoricalDtype)
    assert guarded["code"].tolist() == ["- no statement"] * 9  # not among the columns named
    pd.testing.assert_frame_equal(frame, before)  # the caller's frame is untouched
    clean = pd.DataFrame({"a": ["x", "y"]})
    assert neutralise_formulas(clean) is clean


def test_write_csv_guards_formulas_only_when_asked_and_codes_like_every_other_text(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"Name": ['=HYPERLINK("http://x")', "Muster", "-x"], "ShortReport": ["--11-3", "1---", "-1+1"]}
    )
    plain = write_csv(frame, tmp_path / "plain.csv", style=PLAIN)
    assert plain.read_text(encoding="utf-8").splitlines()[1] == '"=HYPERLINK(""http://x"")",--11-3'
    lines = write_csv(frame, tmp_path / "guarded.csv", style=RFC4180).read_text(encoding="utf-8").splitlines()
    assert lines[1] == '"\'=HYPERLINK(""http://x"")",\'--11-3'  # a spreadsheet computes a code such as -1-1
    assert lines[2] == "Muster,1---"
    assert lines[3] == "'-x,'-1+1"
    named = write_csv(pd.DataFrame({"=cmd()": ["x"], "-": [1]}), tmp_path / "named.csv", style=EXCEL)
    assert (
        named.read_text(encoding="utf-8-sig").splitlines()[0] == "'=cmd();'-"
    )  # a column name is a cell too


def test_write_xlsx_writes_an_infinite_number_as_text_not_a_crash(tmp_path: Path) -> None:
    frame = pd.DataFrame({"score": [1.5, float("inf"), float("-inf"), float("nan")]})
    path = write_xlsx(tmp_path / "scores.xlsx", {"Scores": frame})
    sheet = openpyxl.load_workbook(path).active
    assert [sheet.cell(row, 1).value for row in range(2, 6)] == [1.5, "inf", "-inf", None]
    assert all(sheet.cell(row, 1).data_type != "f" for row in range(2, 6))
