"""The rejected-rows report: one line per rejected row, named by the input's id column and the line of the
file where the row starts, with all its problems; the input's text guarded, our reasons never."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pandas as pd

from fileio.rejected_rows import (
    id_column,
    problem_lines,
    problems_frame,
    rejected_report,
    write_rejected,
)
from fileio.tables import read_table
from tests.outputs import EXCEL, RFC4180, UNGUARDED, read_output_csv

BOM = b"\xef\xbb\xbf"


def _problems(*lines: tuple[int, str, str, str]) -> pd.DataFrame:
    return problems_frame(
        {"row": row, "field": field, "value": value, "reason": reason} for row, field, value, reason in lines
    )


def test_the_id_column_is_the_mapped_one_else_a_customer_number_else_the_first() -> None:
    headers = ["Name", "Ort", "Kunden-Nr.", "KDNR (QSTAT)"]
    assert id_column(headers, known=["kdnr (qstat)"]) == "KDNR (QSTAT)"
    assert id_column(headers, known=[None, "Nummer"]) == "Kunden-Nr."
    assert id_column(["Name", "customerNo"]) == "customerNo"
    assert id_column(["Name", "Ort"]) == "Name"
    assert id_column([]) is None


def test_one_line_per_row_at_its_physical_line_with_all_its_problems(tmp_path: Path) -> None:
    path = tmp_path / "kunden.csv"
    path.write_text(
        "Name;Notiz;PLZ;KdNr\n"
        'Muster;"eine\nzweite\ndritte Zeile";80O1;K-1\n'  # lines 2-4: one row
        "\n"  # line 5: an empty row
        "Meier;kurz;8001;K-2\n"  # line 6
        "Keller;;;K-3\n",  # line 7
        encoding="utf-8",
    )
    table = read_table(path)
    problems = _problems(
        (1, "PLZ", "80O1", "Swiss postcode must be exactly 4 digits"),
        (4, "PLZ", "", "missing"),
        (1, "Notiz", "eine\nzweite\ndritte Zeile", "longer than 10 characters (24)"),
        (4, "Notiz", "", "missing"),
        (1, "PLZ", "80O1", "Swiss postcode must be exactly 4 digits"),  # found twice, listed once
    )
    report = rejected_report(problems, table, id_column=id_column(list(table.frame.columns)))
    assert report.columns.tolist() == ["KdNr", "line", "row", "problems", "values"]
    assert report.values.tolist() == [
        [
            "K-1",
            2,
            1,
            "PLZ: Swiss postcode must be exactly 4 digits; Notiz: longer than 10 characters (24)",
            "PLZ: 80O1; Notiz: eine\nzweite\ndritte Zeile",
        ],
        ["K-3", 7, 4, "PLZ: missing; Notiz: missing", ""],
    ]
    written = write_rejected(report, tmp_path / "rejected.csv", style=EXCEL)
    assert written is not None
    assert read_output_csv(written, dtype=str)[["KdNr", "line"]].values.tolist() == [
        ["K-1", "2"],
        ["K-3", "7"],
    ]


def test_a_workbook_row_is_at_its_sheet_row(tmp_path: Path) -> None:
    path = tmp_path / "kunden.xlsx"
    workbook = openpyxl.Workbook()
    for row in (["Kundennummer", "Name"], ["A-1", "Muster"], ["A-2", ""]):
        workbook.active.append(row)
    workbook.save(path)
    table = read_table(path)
    report = rejected_report(
        problem_lines(pd.Series([2]), "Name", "", "missing"),
        table,
        id_column=id_column(["Kundennummer", "Name"]),
    )
    assert report[["Kundennummer", "line", "row", "problems"]].values.tolist() == [
        ["A-2", 3, 2, "Name: missing"]
    ]


def test_the_inputs_text_is_guarded_and_our_reasons_never(tmp_path: Path) -> None:
    path = tmp_path / "stats.csv"
    path.write_text("=id,count,@Notiz\n=1+1,-3,x\n", encoding="utf-8")
    table = read_table(path)
    problems = _problems((1, "count", "-3", "-3 is not a positive integer"), (1, "@Notiz", "x", "is odd"))
    report = rejected_report(problems, table, id_column="=id")
    guarded = write_rejected(report, tmp_path / "guarded.csv", style=EXCEL)
    assert guarded is not None
    assert read_output_csv(guarded, dtype=str).to_dict("records") == [
        {
            "'=id": "'=1+1",
            "line": "2",
            "row": "1",
            "problems": "count: -3 is not a positive integer; @Notiz: is odd",
            "values": "count: -3; @Notiz: x",
        }
    ]
    plain = write_rejected(report, tmp_path / "plain.csv", style=UNGUARDED)
    assert plain is not None
    assert read_output_csv(plain, dtype=str).loc[0, "=id"] == "=1+1"


def test_the_report_opens_in_excel_or_is_rfc4180(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("Ort,PLZ\nZürich,80\n", encoding="utf-8")
    report = rejected_report(_problems((1, "PLZ", "80", "4 digits")), read_table(path), id_column="Ort")
    excel = write_rejected(report, tmp_path / "excel.csv", style=EXCEL)
    rfc = write_rejected(report, tmp_path / "rfc.csv", style=RFC4180)
    assert excel is not None and rfc is not None
    assert (
        excel.read_bytes()
        == BOM + "Ort;line;row;problems;values\r\nZürich;2;1;PLZ: 4 digits;PLZ: 80\r\n".encode()
    )
    assert rfc.read_bytes() == "Ort,line,row,problems,values\r\nZürich,2,1,PLZ: 4 digits,PLZ: 80\r\n".encode()
    assert pd.read_csv(excel, sep=";", encoding="utf-8-sig").loc[0, "Ort"] == "Zürich"


def test_no_rejected_row_writes_nothing_and_removes_an_earlier_report(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("line,row\n1,2\n", encoding="utf-8")
    report = rejected_report(_problems(), read_table(path), id_column="line")
    assert report.empty and report.columns.tolist() == ["line", "line (report)", "row", "problems", "values"]
    stale = tmp_path / "rejected.csv"
    stale.write_text("from an earlier run", encoding="utf-8")
    assert write_rejected(report, stale, style=EXCEL) is None
    assert not stale.exists()


def test_a_file_column_named_like_ours_keeps_its_name(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("row,Name\nR-7,\n", encoding="utf-8")
    report = rejected_report(_problems((1, "Name", "", "missing")), read_table(path), id_column="row")
    assert report.columns.tolist() == ["row", "line", "row (report)", "problems", "values"]
    assert report.values.tolist() == [["R-7", 2, 1, "Name: missing", ""]]
