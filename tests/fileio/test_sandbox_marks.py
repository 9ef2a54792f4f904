"""The marks of a sandbox run's files: the write-back's name, the banner sheet that opens its workbooks
(results.xlsx by the plain writer and the fast one, review.xlsx's annotated sheet after it)."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from fileio.annotated_workbooks import AnnotatedSheet, write_annotated_xlsx, write_annotated_xlsx_plain
from fileio.sandbox_marks import BANNER_SHEET, SANDBOX_NOTICE, with_banner, writeback_name
from fileio.workbooks import write_xlsx, write_xlsx_plain


def test_the_writeback_of_a_sandbox_run_has_a_name_of_its_own() -> None:
    assert writeback_name(".CSV", sandbox=False) == "writeback.csv"
    assert writeback_name(".xlsx", sandbox=True) == "writeback-sandbox.xlsx"


def test_only_a_sandbox_run_gets_the_banner_sheet() -> None:
    sheets = {"Results": pd.DataFrame({"a": [1]})}
    assert with_banner(sheets, sandbox=False) is sheets
    assert list(with_banner(sheets, sandbox=True)) == [BANNER_SHEET, "Results"]


@pytest.mark.parametrize("writer", [write_xlsx, write_xlsx_plain])
def test_a_workbook_opens_on_the_banner_and_its_tables_keep_their_header_row(writer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    frame = pd.DataFrame({"KundenNr": ["1001", "1002"], "QSTAT": [1, 2]})
    path = writer(tmp_path / "results.xlsx", with_banner({"Results": frame}, sandbox=True))

    book = openpyxl.load_workbook(path)
    assert book.sheetnames == [BANNER_SHEET, "Results"]
    assert [[cell.value for cell in row] for row in book[BANNER_SHEET].iter_rows()] == [[SANDBOX_NOTICE]]
    assert [[cell.value for cell in row] for row in book["Results"].iter_rows()] == [
        ["KundenNr", "QSTAT"],
        ["1001", 1],
        ["1002", 2],
    ]
    assert pd.read_excel(path, sheet_name="Results", dtype=str, engine="calamine").equals(frame.astype(str))


@pytest.mark.parametrize("writer", [write_annotated_xlsx, write_annotated_xlsx_plain])
def test_an_annotated_sheet_after_the_banner_keeps_its_marks(writer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sheet = AnnotatedSheet(
        title="Review",
        frame=pd.DataFrame({"Ort": ["Kriens", "Bern"]}),
        fills={"changed": "#FFEB9C"},
        cells=pd.DataFrame({"row": [1], "column": ["Ort"], "fill": ["changed"], "note": ["town changed"]}),
        header_notes={"Ort": "the town"},
    )
    path = tmp_path / "review.xlsx"
    writer(path, sheet, sheets={"Counts": pd.DataFrame({"n": [2]})}, lead=with_banner({}, sandbox=True))

    book = openpyxl.load_workbook(path)
    assert book.sheetnames == [BANNER_SHEET, "Review", "Counts"]
    review = book["Review"]
    assert [cell.value for cell in review["A"]] == ["Ort", "Kriens", "Bern"]
    assert review["A3"].fill.fgColor.rgb.endswith("FFEB9C")
    assert review["A3"].comment is not None and "town changed" in review["A3"].comment.text
    assert review["A2"].comment is None
