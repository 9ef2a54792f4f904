"""Annotated workbooks: the fast writer (rustpy-xlsxwriter, its package completed) writes the cell fills,
notes and row fills that xlsxwriter writes cell by cell, with the same values, panes, filter and charts;
its notes are numbered and placed as Excel's own (the VML is xlsxwriter's, byte for byte)."""

from __future__ import annotations

import re
import xml.dom.minidom
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

import fileio.xlsx_annotations
from fileio.annotated_workbooks import AnnotatedSheet, write_annotated_xlsx, write_annotated_xlsx_plain
from fileio.workbook_charts import Chart
from fileio.xlsx_annotations import MAX_NOTE, column_letters, column_number

FILLS = {"changed": "#FFEB9C", "human": "#FFC7CE"}


def _review() -> AnnotatedSheet:
    """Every case the rewriting meets: a filled empty cell, a filled cell in a filled row, a filled row
    holding nothing (rust_xlsxwriter leaves such rows out, or writes them empty), the last row filled (after
    which rustpy-xlsxwriter repeats it), dates, notes with markup, control characters and a note too long."""
    frame = pd.DataFrame(
        {
            "RecordId": [1, 2, 3, 4, 5, 6],
            "Street given": ["Lindenstr.", "Bahnhofstr", None, None, "Höhenweg", "x"],
            "Street corrected": ["Lindenstrasse", "Bahnhofstrasse", "Rue du Lac", None, None, "X"],
            "When": pd.to_datetime(
                ["2024-01-02 03:04:05", None, "2024-02-03 00:00:00", None, "2024-03-04 00:00:00", None]
            ),
            "Mixed": pd.Series(["a", 1.5, None, None, "b", "c"], dtype=object),
            "Needs a human": ["", "moved (QSTAT 4)", "", None, "", "address unknown (QSTAT 51)"],
        }
    )
    frame.loc[3, "RecordId"] = None  # a row with nothing in it
    cells = pd.DataFrame(
        [
            (0, "Street corrected", "changed", '3 changed: <official> & "designation"'),
            (1, "Street corrected", "changed", "3 changed"),
            (1, "Needs a human", None, "moved (QSTAT 4)"),
            (1, "When", "changed", None),
            (2, "Street corrected", "changed", "4 supplemented\nsecond line"),
            (2, "When", "changed", "a date noted"),
            (3, "Street corrected", "changed", "nothing in the row \x01 but this"),
            (4, "Street corrected", "human", None),
            (5, "Needs a human", None, "x" * (MAX_NOTE + 10)),
            (5, "Street given", "changed", None),
        ],
        columns=["row", "column", "fill", "note"],
    ).sample(frac=1, random_state=3)  # in no order: the writer sorts them
    rows = pd.DataFrame({"row": [1, 3, 5], "fill": "human"})
    return AnnotatedSheet(
        "Review",
        frame,
        fills=FILLS,
        cells=cells,
        rows=rows,
        header_notes={"Needs a human": "why a person has to look", "RecordId": "the input row"},
        widths={"Needs a human": 30.0},
    )


def _charts() -> tuple[dict[str, pd.DataFrame], dict[str, list[Chart]]]:
    table = pd.DataFrame({"Reason": ["moved", "abroad", "unknown"], "Rows": [1, 0, 1]})
    return {"Needs a human": table}, {"Needs a human": [Chart("Rows that need a human", "Reason", ("Rows",))]}


def _cells(path: Path, title: str) -> list[tuple[object, ...]]:
    """Each cell's coordinate, value, fill colour, number format and note."""
    sheet = openpyxl.load_workbook(path)[title]
    return [
        (
            cell.coordinate,
            cell.value,
            cell.fill.fgColor.rgb if cell.fill.fill_type == "solid" else None,
            cell.number_format,
            cell.comment.text if cell.comment else None,
        )
        for row in sheet.iter_rows()
        for cell in row
    ]


def _layout(path: Path) -> tuple[object, ...]:
    book = openpyxl.load_workbook(path)
    sheet = book["Review"]
    widths = {letter: round(dimension.width, 1) for letter, dimension in sheet.column_dimensions.items()}
    return book.sheetnames, sheet.freeze_panes, sheet.auto_filter.ref, widths


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as package:
        return {name: package.read(name) for name in package.namelist()}


def test_the_fast_writer_writes_what_xlsxwriter_writes_cell_by_cell(tmp_path: Path) -> None:
    sheet = _review()
    sheets, charts = _charts()
    fast = write_annotated_xlsx(tmp_path / "fast.xlsx", sheet, sheets=sheets, charts=charts)
    plain = write_annotated_xlsx_plain(tmp_path / "plain.xlsx", sheet, sheets=sheets, charts=charts)
    assert _cells(fast, "Review") == _cells(plain, "Review")
    assert _cells(fast, "Needs a human") == _cells(plain, "Needs a human")
    assert _layout(fast) == _layout(plain)
    cells = {cell[0]: cell[1:] for cell in _cells(fast, "Review")}
    assert cells["C2"] == ("Lindenstrasse", "FFFFEB9C", "General", '3 changed: <official> & "designation"')
    assert cells["C3"][1] == "FFFFEB9C" and cells["B3"][1] == "FFFFC7CE"  # its own fill in a filled row
    assert cells["D3"] == (None, "FFFFEB9C", "General", None)  # an empty cell made for its fill
    assert cells["D4"][1:3] == ("FFFFEB9C", "yyyy-mm-dd hh:mm:ss")  # a date keeps its format when filled
    assert cells["C5"] == (None, "FFFFEB9C", "General", "nothing in the row  but this")
    assert cells["A5"][1] is None  # a filled row's empty cells are not written (Excel shows the row's fill)
    assert cells["F2"][1:] == (None, "General", None)  # no mark: as written
    assert cells["F7"][3] == "x" * MAX_NOTE
    assert cells["F1"][3] == "postflows:\nwhy a person has to look"
    assert _layout(fast) == (["Review", "Needs a human"], "A2", "A1:F7", _layout(fast)[3])
    assert _layout(fast)[3]["F"] == 30.7  # Excel's width of 30 characters


def test_notes_are_numbered_and_placed_as_xlsxwriter_places_them(tmp_path: Path) -> None:
    """Over 1,024 notes: the VML drawing's shape ids run on in a second block that o:idmap lists; the
    drawing, the comments' cells and the content types are xlsxwriter's."""
    frame = pd.DataFrame({"Id": range(1_500), "Value": [f"v{n}" for n in range(1_500)], "Why": "x"})
    cells = pd.DataFrame({"row": range(1_500), "column": "Why", "fill": None, "note": "look at it"})
    sheet = AnnotatedSheet("Review", frame, cells=cells, header_notes={"Value": "what it is"})
    fast = _parts(write_annotated_xlsx(tmp_path / "fast.xlsx", sheet))
    plain = _parts(write_annotated_xlsx_plain(tmp_path / "plain.xlsx", sheet))
    drawing = fast["xl/drawings/vmlDrawing1.vml"].decode()
    assert drawing == plain["xl/drawings/vmlDrawing1.vml"].decode()
    assert '<o:idmap v:ext="edit" data="1,2"/>' in drawing
    ids = [int(found) for found in re.findall(r'id="_x0000_s(\d+)"', drawing)]
    assert ids == list(range(1025, 1025 + 1_501))
    refs = re.compile(rb'<comment ref="([A-Z]+\d+)"')
    assert refs.findall(fast["xl/comments1.xml"]) == refs.findall(plain["xl/comments1.xml"])
    types = re.compile(rb"<(?:Default|Override)[^>]*>")
    assert set(types.findall(fast["[Content_Types].xml"])) == set(types.findall(plain["[Content_Types].xml"]))


def test_the_package_is_well_formed_with_each_row_once_in_order(tmp_path: Path) -> None:
    fast = _parts(write_annotated_xlsx(tmp_path / "fast.xlsx", _review(), sheets=_charts()[0]))
    for name, data in fast.items():
        if name.endswith((".xml", ".vml", ".rels")):
            xml.dom.minidom.parseString(data)  # raises on a part that is not well-formed
    sheet = fast["xl/worksheets/sheet1.xml"].decode()
    rows = [int(number) for number in re.findall(r'<row r="(\d+)"', sheet)]
    assert rows == sorted(set(rows)) == [1, 2, 3, 4, 5, 6, 7]
    for row in re.findall(r"<row [^>]*>(.*?)</row>", sheet):
        columns = [column_number(letters) for letters in re.findall(r'<c r="([A-Z]+)\d+"', row)]
        assert columns == sorted(set(columns))
    assert "<legacyDrawing" in sheet


def test_small_blocks_rewrite_the_sheet_as_one_block_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sheet is streamed in blocks of whole rows: a block boundary anywhere changes nothing."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"A": rng.integers(0, 9, 400), "B": "text", "C": [None] * 400, "D": "more"})
    frame.loc[rng.choice(400, 40, replace=False), ["A", "B", "D"]] = None  # rows with nothing in them
    marked = np.sort(rng.choice(400, 150, replace=False))
    cells = pd.DataFrame(
        {
            "row": marked,
            "column": rng.choice(["A", "B", "C", "D"], len(marked)),
            "fill": rng.choice(["changed", "human"], len(marked)),
            "note": None,
        }
    )
    rows = pd.DataFrame({"row": np.r_[rng.choice(400, 60, replace=False), 399], "fill": "human"})
    rows = rows.drop_duplicates("row")
    sheet = AnnotatedSheet("Review", frame, fills=FILLS, cells=cells, rows=rows)
    whole = write_annotated_xlsx(tmp_path / "whole.xlsx", sheet)
    monkeypatch.setattr(fileio.xlsx_annotations, "_BLOCK_BYTES", 97)
    blocks = write_annotated_xlsx(tmp_path / "blocks.xlsx", sheet)
    sheet_part = "xl/worksheets/sheet1.xml"
    assert _parts(blocks)[sheet_part] == _parts(whole)[sheet_part]
    assert _cells(whole, "Review") == _cells(
        write_annotated_xlsx_plain(tmp_path / "plain.xlsx", sheet), "Review"
    )


def test_a_sheet_the_fast_writer_cannot_write_is_written_by_xlsxwriter(tmp_path: Path) -> None:
    frame = pd.DataFrame({"Mixed": pd.Series([1.5, True, None], dtype=object), "B": ["x", "y", "z"]})
    cells = pd.DataFrame({"row": [0, 1], "column": ["Mixed", "B"], "fill": "changed", "note": ["n1", None]})
    sheet = AnnotatedSheet("Review", frame, fills=FILLS, cells=cells, header_notes={"B": "b"})
    written = write_annotated_xlsx(tmp_path / "mixed.xlsx", sheet)
    values = {cell[0]: cell[1:] for cell in _cells(written, "Review")}
    assert values["A2"] == (1.5, "FFFFEB9C", "General", "n1")
    assert values["A3"][0] is True and values["B3"][1] == "FFFFEB9C"


def test_a_sheet_without_marks_is_the_fast_writers_sheet(tmp_path: Path) -> None:
    frame = pd.DataFrame({"A": [1, 2], "B": ["x", None]})
    written = write_annotated_xlsx(tmp_path / "plain.xlsx", AnnotatedSheet("Data", frame))
    assert _cells(written, "Data") == _cells(
        write_annotated_xlsx_plain(tmp_path / "reference.xlsx", AnnotatedSheet("Data", frame)), "Data"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cells": pd.DataFrame({"row": [9], "column": ["A"], "fill": [None], "note": ["n"]})}, "outside"),
        ({"cells": pd.DataFrame({"row": [0], "column": ["Z"], "fill": [None], "note": ["n"]})}, "no column"),
        ({"cells": pd.DataFrame({"row": [0], "column": ["A"], "fill": ["red"], "note": [None]})}, "a fill"),
        (
            {"cells": pd.DataFrame({"row": [0, 0], "column": "A", "fill": "changed", "note": None})},
            "marked more than once",
        ),
        ({"cells": pd.DataFrame({"row": [0], "column": ["A"]})}, "no column fill, note"),
        ({"cells": pd.DataFrame({"row": [0], "column": ["A"], "fill": [None], "note": ["n"]})}, "header"),
        ({"rows": pd.DataFrame({"row": [2], "fill": ["human"]})}, "outside"),
        ({"header_notes": {"Z": "z"}}, "header notes for no column"),
        ({"widths": {"Z": 3.0}}, "widths for no column"),
        ({"title": "Re:view"}, "not a valid sheet name"),
        ({"frame": pd.DataFrame([[1, 2]], columns=["A", "A"])}, "column name more than once"),
    ],
)
def test_marks_that_do_not_fit_the_sheet_are_refused(tmp_path: Path, change: dict, message: str) -> None:
    values = {"title": "Review", "frame": pd.DataFrame({"A": [1, 2]}), "fills": FILLS, **change}
    with pytest.raises(ValueError, match=message):
        write_annotated_xlsx(tmp_path / "refused.xlsx", AnnotatedSheet(**values))
    assert not (tmp_path / "refused.xlsx").exists()


def test_column_letters_and_numbers() -> None:
    for number, letters in ((0, "A"), (25, "Z"), (26, "AA"), (701, "ZZ"), (702, "AAA"), (16_383, "XFD")):
        assert column_letters(number) == letters
        assert column_number(letters) == number


def test_chart_sheets_hold_native_charts_of_their_tables(tmp_path: Path) -> None:
    sheets, charts = _charts()
    parts = _parts(write_annotated_xlsx(tmp_path / "charts.xlsx", _review(), sheets=sheets, charts=charts))
    chart = parts["xl/charts/chart1.xml"].decode()
    assert "Rows that need a human" in chart
    assert "<c:f>'Needs a human'!$A$2:$A$4</c:f>" in chart and "<c:f>'Needs a human'!$B$2:$B$4</c:f>" in chart
    assert [name for name in parts if name.startswith("xl/charts/")] == ["xl/charts/chart1.xml"]
