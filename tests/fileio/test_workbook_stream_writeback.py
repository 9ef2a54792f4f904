"""The streamed write-back of a workbook (``fileio.writeback.workbook``, ``fileio.writeback.sheet_stream``):
workbooks written by openpyxl, xlsxwriter (shared strings, and inline strings in constant-memory mode) and
rust_xlsxwriter get their edits as inline strings in their cells' styles, every other part of the archive
byte for byte in its place; XML's special characters come back as written; a worksheet whose rows lack their
references is refused; the rewrite is the same however the part is cut into chunks.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
import rustpy_xlsxwriter
import xlsxwriter
from openpyxl.styles import Font, PatternFill

from fileio.errors import InputError
from fileio.sheet_extent import worksheet_parts
from fileio.tables import read_table
from fileio.writeback import SkippedEdit, write_back
from fileio.writeback.sheet_stream import SheetShapeError, rewrite_sheet

_HEADER = ["Name", "PLZ", "Ort", "Betrag", "Summe"]
# Sheet rows 2, 3 and 5 (row 4 is blank: no row element); row 2 has no cell for Ort.
_ROWS: dict[int, list[str | float | None]] = {
    2: ["Müller", "0123", None, 12.5],
    3: ["Favre", 1000, "Lausane", 3],
    5: ["Weber", "3000", "Bern", 4],
}
_SPECIAL = "A & B <C> \"D\" 'E' _x0041_ \t end "


def _openpyxl_book(path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Kunden"
    sheet.append(_HEADER)
    for row, values in _ROWS.items():
        for column, value in enumerate(values, start=1):
            if value is not None:
                sheet.cell(row=row, column=column, value=value)
        sheet.cell(row=row, column=5, value=f"=D{row}*2")
    sheet["A1"].font = Font(bold=True)
    sheet["C3"].fill = PatternFill("solid", start_color="FFFF00")
    sheet.column_dimensions["A"].width = 30
    other = book.create_sheet("Notizen")
    other.append(["Notiz"])
    other.append(["nicht anfassen"])
    book.save(path)


def _xlsxwriter_book(path: Path, *, constant_memory: bool) -> None:
    book = xlsxwriter.Workbook(str(path), {"constant_memory": constant_memory})
    sheet = book.add_worksheet("Kunden")
    bold, yellow = book.add_format({"bold": True}), book.add_format({"bg_color": "#FFFF00"})
    sheet.write_row(0, 0, _HEADER, bold)
    for row, values in _ROWS.items():
        for column, value in enumerate(values):
            if value is not None:
                sheet.write(row - 1, column, value, yellow if (row, column) == (3, 2) else None)
        number = values[3]
        assert isinstance(number, float | int)
        sheet.write_formula(row - 1, 4, f"=D{row}*2", None, number * 2)
    sheet.set_column(0, 0, 30)
    book.add_worksheet("Notizen").write_column(0, 0, ["Notiz", "nicht anfassen"])
    book.close()


def _rust_book(path: Path) -> None:
    frame = pd.DataFrame(
        {
            "Name": ["Müller", "Favre", "Weber"],
            "PLZ": ["0123", "1000", "3000"],
            "Ort": [None, "Lausane", "Bern"],
        }
    )
    notes = pd.DataFrame({"Notiz": ["nicht anfassen"]})
    rustpy_xlsxwriter.write_worksheets([("Kunden", frame), ("Notizen", notes)], str(path))


_BOOKS: dict[str, Callable[[Path], None]] = {
    "openpyxl": _openpyxl_book,
    "xlsxwriter": lambda path: _xlsxwriter_book(path, constant_memory=False),
    "xlsxwriter-inline": lambda path: _xlsxwriter_book(path, constant_memory=True),
}


def _members(path: Path) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(path) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def _sheet_part(path: Path, sheet: str = "Kunden") -> str:
    with zipfile.ZipFile(path) as archive:
        (part,) = worksheet_parts(archive, sheet)
    return part


def _check_other_parts_kept(source: Path, target: Path) -> str:
    """Every member but the worksheet's is the source's, byte for byte, in the source's order; returns the
    worksheet part's new XML."""
    part = _sheet_part(source)
    before, after = _members(source), _members(target)
    assert [name for name, _ in after] == [name for name, _ in before]
    assert [member for member in after if member[0] != part] == [m for m in before if m[0] != part]
    return dict(after)[part].decode()


@pytest.mark.parametrize("writer", sorted(_BOOKS))
def test_edits_land_as_inline_strings_in_their_styles_and_every_other_part_is_kept(
    tmp_path: Path, writer: str
) -> None:
    source, target = tmp_path / "kunden.xlsx", tmp_path / "writeback.xlsx"
    _BOOKS[writer](source)
    table = read_table(source)
    assert list(table.frame.loc[1])[:4] == ["Müller", "0123", "", "12.5"]
    assert list(table.frame.loc[3]) == ["", "", "", "", ""]  # the blank row, no row element
    assert table.layout is not None

    outcome = write_back(
        source,
        target,
        table.layout,
        {
            1: {"Ort": "Zürich", "PLZ": "0124"},  # a missing cell inserted, a shared or inline string
            2: {"Ort": _SPECIAL, "Betrag": "7", "Summe": "9"},  # a styled cell, a number, a formula
            3: {"Name": "Neu", "Ort": "Thun"},  # a row the sheet lacks
            4: {"Betrag": ""},  # a number cleared
        },
    )

    assert outcome.skipped == (SkippedEdit(2, "Summe", "the cell holds a formula"),)
    assert (outcome.rows_changed, outcome.cells_changed) == (4, 7)
    xml = _check_other_parts_kept(source, target)
    after = read_table(target).frame
    assert list(after.loc[1])[:4] == ["Müller", "0124", "Zürich", "12.5"]
    assert list(after.loc[2])[:4] == ["Favre", "1000", _SPECIAL, "7"]
    assert list(after.loc[3])[:3] == ["Neu", "", "Thun"]
    assert list(after.loc[4])[:4] == ["Weber", "3000", "Bern", ""]
    assert re.search(r'<c r="C3" s="\d+" t="inlineStr"><is><t xml:space="preserve">A &amp; B &lt;C&gt;', xml)
    assert '<row r="4"><c r="A4" t="inlineStr">' in xml
    assert [int(number) for number in re.findall(r'<row r="(\d+)"', xml)] == [1, 2, 3, 4, 5]
    book, original = openpyxl.load_workbook(target), openpyxl.load_workbook(source)
    sheet, old = book["Kunden"], original["Kunden"]
    assert sheet["C3"].fill.fgColor.rgb == old["C3"].fill.fgColor.rgb != "00000000"
    assert sheet["A1"].font.b and sheet["E3"].value == "=D3*2" and sheet["D5"].value is None
    assert sheet.column_dimensions["A"].width == old.column_dimensions["A"].width
    assert [[cell.value for cell in row] for row in book["Notizen"].iter_rows()] == [
        ["Notiz"],
        ["nicht anfassen"],
    ]


def test_a_rust_xlsxwriter_workbook_is_written_back(tmp_path: Path) -> None:
    source, target = tmp_path / "kunden.xlsx", tmp_path / "writeback.xlsx"
    _rust_book(source)
    table = read_table(source)
    assert table.layout is not None
    outcome = write_back(source, target, table.layout, {1: {"Ort": "Zürich"}, 3: {"PLZ": "3001 & 2"}})
    assert (outcome.cells_changed, outcome.skipped) == (2, ())
    _check_other_parts_kept(source, target)
    assert read_table(target).frame.to_dict("list") == {
        "Name": ["Müller", "Favre", "Weber"],
        "PLZ": ["0123", "1000", "3001 & 2"],
        "Ort": ["Zürich", "Lausane", "Bern"],
    }


def test_characters_xml_cannot_hold_and_overlong_values_are_skipped(tmp_path: Path) -> None:
    source, target = tmp_path / "kunden.xlsx", tmp_path / "writeback.xlsx"
    _openpyxl_book(source)
    table = read_table(source)
    assert table.layout is not None
    outcome = write_back(
        source, target, table.layout, {1: {"Name": "a\x01b", "Ort": "x" * 32_768, "PLZ": "a\ud800"}}
    )
    assert outcome.skipped == (
        SkippedEdit(1, "Name", "character U+0001 cannot be written in a workbook"),
        SkippedEdit(1, "Ort", "the value has 32,768 characters, more than the 32,767 a cell holds"),
        SkippedEdit(1, "PLZ", "character U+D800 cannot be written in a workbook"),
    )
    assert target.read_bytes() == source.read_bytes()


def _without_row_references(source: Path, path: Path) -> None:
    part = _sheet_part(source)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as copy:
        for name, data in _members(source):
            if name == part:
                data = re.sub(rb'(<row) r="\d+"', rb"\1", data)
            copy.writestr(name, data)


def test_a_worksheet_whose_rows_lack_their_references_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    plain, source, target = tmp_path / "plain.xlsx", tmp_path / "kunden.xlsx", tmp_path / "writeback.xlsx"
    _openpyxl_book(plain)
    _without_row_references(plain, source)
    table = read_table(source)
    assert table.layout is not None
    with pytest.raises(InputError, match="has no row number \\(r\\).*carry their references in order"):
        write_back(source, target, table.layout, {1: {"Ort": "Zürich"}})
    assert not target.exists()


_SHEET = (
    b'<?xml version="1.0"?><x:worksheet xmlns:x="main"><x:dimension ref="A1:C4"/><x:sheetData>'
    b'<x:row r="1"><x:c r="A1" t="s"><x:v>0</x:v></x:c><x:c r="C1" s="2"><x:v>5</x:v></x:c></x:row>'
    b'<x:row r="3" ht="20" customHeight="1"/>'
    b'<x:row r="4"><x:c r="B4" s="1" t="inlineStr"><x:is><x:t>alt</x:t></x:is></x:c></x:row>'
    b"</x:sheetData><x:pageMargins/></x:worksheet>"
)
_CHANGES = {1: {2: "b", 3: "c"}, 2: {1: "neu"}, 3: {2: "&"}, 4: {2: "", 3: "d"}, 6: {1: "e"}}
_EXPECTED = (
    b'<?xml version="1.0"?><x:worksheet xmlns:x="main"><x:dimension ref="A1:C4"/><x:sheetData>'
    b'<x:row r="1"><x:c r="A1" t="s"><x:v>0</x:v></x:c>'
    b'<x:c r="B1" t="inlineStr"><x:is><x:t xml:space="preserve">b</x:t></x:is></x:c>'
    b'<x:c r="C1" s="2" t="inlineStr"><x:is><x:t xml:space="preserve">c</x:t></x:is></x:c></x:row>'
    b'<x:row r="2"><x:c r="A2" t="inlineStr"><x:is><x:t xml:space="preserve">neu</x:t></x:is></x:c></x:row>'
    b'<x:row r="3" ht="20" customHeight="1">'
    b'<x:c r="B3" t="inlineStr"><x:is><x:t xml:space="preserve">&amp;</x:t></x:is></x:c></x:row>'
    b'<x:row r="4"><x:c r="B4" s="1"/>'
    b'<x:c r="C4" t="inlineStr"><x:is><x:t xml:space="preserve">d</x:t></x:is></x:c></x:row>'
    b'<x:row r="6"><x:c r="A6" t="inlineStr"><x:is><x:t xml:space="preserve">e</x:t></x:is></x:c></x:row>'
    b"</x:sheetData><x:pageMargins/></x:worksheet>"
)


@pytest.mark.parametrize("cut", ["whole", "before every tag"])
def test_the_rewrite_inserts_replaces_and_keeps_prefixes_however_the_part_is_cut(cut: str) -> None:
    chunks = [_SHEET]
    if cut == "before every tag":  # as tag_chunks may cut: a replaced cell's tags in chunks of their own
        starts = [match.start() for match in re.finditer(rb"<", _SHEET)] + [len(_SHEET)]
        chunks = [_SHEET[start:end] for start, end in zip(starts, starts[1:], strict=False)]
    assert b"".join(rewrite_sheet(chunks, _CHANGES)) == _EXPECTED


def test_a_sheet_without_rows_gets_its_rows_in_an_opened_sheet_data() -> None:
    sheet = b'<worksheet xmlns="main"><sheetData/></worksheet>'
    assert b"".join(rewrite_sheet([sheet], {2: {1: "a"}})) == (
        b'<worksheet xmlns="main"><sheetData><row r="2">'
        b'<c r="A2" t="inlineStr"><is><t xml:space="preserve">a</t></is></c></row></sheetData></worksheet>'
    )


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        (b'<row r="2"/><row r="2"/>', "row 2 comes after row 2"),
        (b'<row r="1"><c t="s"><v>0</v></c></row>', "a cell of row 1 has no reference"),
        (b'<row r="1"><c r="B1"/><c r="A1"/></row>', "cell A1 comes after a cell right of it"),
        (b'<row r="1"><c r="A2"/></row>', "cell A2 stands in row 1"),
    ],
)
def test_rows_or_cells_of_a_changed_row_that_cannot_be_placed_are_refused(rows: bytes, problem: str) -> None:
    sheet = b"<worksheet><sheetData>" + rows + b"</sheetData></worksheet>"
    with pytest.raises(SheetShapeError, match=problem):
        b"".join(rewrite_sheet([sheet], {1: {3: "x"}}))
