"""Reading a customer's .xlsx workbook: every cell as the text the reader has always given, as Excel shows
the file; sheets by name or position; damaged workbooks refused by name."""

from __future__ import annotations

import datetime as dt
import gc
import io
import zipfile
from pathlib import Path

import openpyxl
import pytest
import xlsxwriter

from fileio import worksheets
from fileio.errors import InputError
from fileio.tables import read_head, read_table


def _rows(path: Path, **options: object) -> list[list[str]]:
    frame = read_table(path, **options).frame  # type: ignore[arg-type]
    return frame.fillna("<NA>").astype(str).to_numpy().tolist()


def test_every_cell_is_read_as_the_text_of_its_value(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Kdnr", "PLZ", "Nr", "Betrag", "Datum", "Zeit", "Dauer", "Ja", "Notiz", "Gross"])
    sheet.append(
        ["00017", 3000, 12, 2.5, dt.datetime(2030, 1, 31), dt.time(12, 30), dt.timedelta(days=1, hours=2),
         True, "=1+1", 10**15]
    )  # fmt: skip
    sheet.append(
        ["0999", 8001.0, -5, 1e-07, dt.datetime(2024, 2, 29, 13, 45, 7), None, None, False, "@x", 1e16]
    )
    sheet["A3"].data_type = sheet["I2"].data_type = "s"  # text that looks like a number or a formula
    sheet["G2"].number_format = "[h]:mm:ss"
    sheet["F2"].number_format = "hh:mm"
    path = tmp_path / "kunden.xlsx"
    workbook.save(path)
    assert _rows(path) == [
        ["00017", "3000", "12", "2.5", "2030-01-31 00:00:00", "12:30:00", "1 day, 2:00:00", "True", "=1+1",
         "1000000000000000"],
        ["0999", "8001", "-5", "1e-07", "2024-02-29 13:45:07", "", "", "False", "@x", "10000000000000000"],
    ]  # fmt: skip
    assert str(read_table(path).frame.dtypes.iloc[0]) == "str"


def test_blank_rows_count_and_blank_ends_are_no_part_of_the_sheet(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Name", "Ort", None, None])
    sheet.append(["Muster", "Bern"])
    sheet.append([None, None, None])
    sheet.append(["Meier", None])
    sheet.cell(9, 6).number_format = "0.00"  # a formatted cell without a value, further out
    path = tmp_path / "luecken.xlsx"
    workbook.save(path)
    table = read_table(path)
    assert list(table.frame.columns) == ["Name", "Ort"]
    assert list(table.frame.index) == [1, 2, 3]
    assert _rows(path) == [["Muster", "Bern"], ["", ""], ["Meier", ""]]


def test_text_is_read_as_excel_shows_it(tmp_path: Path) -> None:
    """Excel's escapes are decoded: the old reader gave ``_x005F_x0041_`` and ``x_x000D_\\ny`` for the text
    ``_x0041_`` and a cell with a Windows line break that Excel (here xlsxwriter) wrote."""
    path = tmp_path / "escaped.xlsx"
    workbook = xlsxwriter.Workbook(str(path))
    sheet = workbook.add_worksheet()
    sheet.write_row(0, 0, ["Notiz", "Zeilen", "Rand"])
    sheet.write_row(1, 0, ["_x0041_", "x\r\ny", " Bern "])
    workbook.close()
    assert _rows(path) == [["_x0041_", "x\r\ny", " Bern "]]


def test_an_error_cell_reads_as_empty(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Name", "Summe"])
    sheet.append(["Muster", "#DIV/0!"])
    sheet["B2"].data_type = "e"
    path = tmp_path / "fehler.xlsx"
    workbook.save(path)
    assert _rows(path) == [["Muster", ""]]


def test_sheets_by_name_and_position(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    workbook.active.title = "Erste"
    workbook.active.append(["a"])
    workbook.active.append(["1"])
    second = workbook.create_sheet("Zweite")
    second.append(["b"])
    second.append(["2"])
    path = tmp_path / "zwei.xlsx"
    workbook.save(path)
    assert _rows(path) == [["1"]]
    assert _rows(path, sheet="Zweite") == _rows(path, sheet=1) == [["2"]]
    assert read_head(path, sheet="Zweite").headers == ["b"]
    with pytest.raises(
        InputError,
        match=r"zwei\.xlsx: .*\(sheet 'Dritte'\): no worksheet 'Dritte'; the workbook's worksheets are "
        r"'Erste', 'Zweite'",
    ):
        read_table(path, sheet="Dritte")
    with pytest.raises(
        InputError, match=r"\(sheet 2\): no worksheet at position 3; the workbook's worksheets"
    ):
        read_head(path, sheet=2)


def test_an_empty_sheet_has_no_header(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    workbook.active.cell(3, 3).number_format = "0.00"
    path = tmp_path / "leer.xlsx"
    workbook.save(path)
    for read in (read_table, read_head):
        with pytest.raises(InputError, match=r"leer\.xlsx: sheet 0 is empty: no header row"):
            read(path)


def test_a_damaged_workbook_is_refused_by_name(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    workbook = openpyxl.Workbook()
    workbook.active.append(["Name"])
    workbook.save(buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["xl/worksheets/sheet1.xml"] = members["xl/worksheets/sheet1.xml"][:-40]  # cut short
    path = tmp_path / "kaputt.xlsx"
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(InputError, match=r"kaputt\.xlsx: cannot be read as an Excel workbook \(sheet None\)"):
        read_table(path)


def test_a_workbook_with_a_member_marked_encrypted_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "locked.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active.append(["Name"])
    workbook.save(path)
    data = bytearray(path.read_bytes())
    central = data.index(b"PK\x01\x02")  # the first member's entry in the ZIP directory
    data[central + 8] |= 0x40  # its general purpose flags: strongly encrypted
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"locked\.xlsx: cannot be read .*: the member .* is encrypted"):
        read_table(path)


def test_the_garbage_collector_rests_only_while_the_reader_builds_the_cells_and_works_again_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workbook = openpyxl.Workbook()
    workbook.active.append(["Kdnr", "Name"])
    workbook.active.append(["1", "Muster"])
    path = tmp_path / "kunden.xlsx"
    workbook.save(path)
    empty = tmp_path / "leer.xlsx"
    openpyxl.Workbook().save(empty)
    building: list[bool] = []
    converting: list[bool] = []
    worksheet_cells, sheet_text = worksheets._worksheet_cells, worksheets.sheet_text
    monkeypatch.setattr(
        worksheets,
        "_worksheet_cells",
        lambda worksheet, nrows: building.append(gc.isenabled()) or worksheet_cells(worksheet, nrows),
    )
    monkeypatch.setattr(
        worksheets, "sheet_text", lambda cells: converting.append(gc.isenabled()) or sheet_text(cells)
    )
    assert gc.isenabled()
    assert _rows(path) == [["1", "Muster"]]
    assert gc.isenabled()
    with pytest.raises(InputError, match="is empty"):
        read_table(empty)
    assert gc.isenabled()
    gc.disable()  # a caller that paused it keeps it paused
    try:
        read_table(path)
        assert not gc.isenabled()
    finally:
        gc.enable()
    # Paused while the compiled reader builds the cells (no other thread runs then), not for the Python
    # code after it, which threads reading other files share the process with.
    assert building == [False, False, False]
    assert converting == [True, True, False]
