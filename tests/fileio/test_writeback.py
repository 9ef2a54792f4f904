"""Writing a user's table file back (``fileio.writeback.write_back``): generated delimited files in several
dialects and encodings come back byte for byte without edits and read back as the input with exactly the
edited cells changed; the named round trips (a quoted ``;`` Windows-1252 CSV, a fixed-width file, a two-sheet
workbook with formats and formulas); and every edit that cannot be made skipped with its reason.
"""

from __future__ import annotations

import codecs
import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont
from openpyxl.styles import Font, PatternFill

from fileio.address_service.records import read_address_file
from fileio.commerce.address_input import read_commerce_addresses
from fileio.errors import InputError
from fileio.formulas import FORMULA_STARTS
from fileio.limits import TableLimits
from fileio.source_layout import SourceLayout
from fileio.tables import Table, read_table
from fileio.writeback import ROW_NOT_MATCHED, SkippedEdit, WriteBackOutcome, write_back
from fileio.writeback_policy import FORMULA_REFUSED

_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_HEADERS = ("Name", "Vorname", "Strasse", "PLZ", "Ort", "Notiz", "Kundennummer", "Prénom")
_DELIMITERS = (",", ";", "\t", "|")
_ENCODINGS = ("utf-8", "utf-8-sig", "cp1252", "utf-16")
_NEWLINES = ("\n", "\r\n", "\r")
# Values people's files hold: letters, digits, spaces, every delimiter, quotes, line breaks, accents, €;
# Ł and 😀 have no Windows-1252 form.
_CHARACTERS = st.sampled_from(
    ("a", "Z", "0", "7", " ", ",", ";", "\t", "|", '"', "\n", "é", "ü", "€", "Ł", "😀")
)
_VALUES = st.text(_CHARACTERS, max_size=6)
_ENDING = re.compile(r"(?:\r\n|\r|\n)\Z")


@dataclass(frozen=True)
class CsvCase:
    """A generated delimited file: its bytes and how it was written."""

    data: bytes
    delimiter: str
    encoding: str
    given_encoding: bool
    headers: tuple[str, ...]
    rows: int


def _representable(value: str, encoding: str, delimiter: str) -> str:
    """``value`` as the file can hold it: characters the encoding lacks as ``?``; at most one delimiter and
    one line break (a quoted cell whose lines hold whole records is refused by the reader, rightly)."""
    value = value.encode(encoding, errors="replace").decode(encoding)
    for char in (delimiter, "\n"):
        first = value.find(char)
        if first >= 0:
            value = value[: first + 1] + value[first + 1 :].replace(char, "x")
    return value


def _field(value: str, delimiter: str, quote: bool) -> str:
    if quote or any(char in value for char in (delimiter, '"', "\r", "\n")):
        return '"' + value.replace('"', '""') + '"'
    return value


@st.composite
def csv_cases(draw: st.DrawFn) -> CsvCase:
    delimiter = draw(st.sampled_from(_DELIMITERS))
    encoding = draw(st.sampled_from(_ENCODINGS))
    newline = draw(st.sampled_from(_NEWLINES))
    quoting = draw(st.sampled_from(("minimal", "all", "some")))
    headers = tuple(draw(st.lists(st.sampled_from(_HEADERS), min_size=2, max_size=5, unique=True)))
    rows = draw(st.lists(st.lists(_VALUES, min_size=len(headers), max_size=len(headers)), max_size=8))
    lines = [delimiter.join(headers)]
    for row in rows:
        if draw(st.integers(0, 9)) == 0:
            lines.append("")  # a blank line: a row of the file all the same
            continue
        values = [_representable(value, encoding, delimiter) for value in row]
        quotes = [quoting == "all" or (quoting == "some" and draw(st.booleans())) for _ in values]
        lines.append(delimiter.join(map(_field, values, [delimiter] * len(values), quotes)))
    # A blank last row is a line ending: without one, it would be no line at all.
    text = newline.join(lines) + (newline if draw(st.booleans()) or not lines[-1] else "")
    data = text.encode(encoding)
    return CsvCase(data, delimiter, encoding, draw(st.booleans()), headers, len(lines) - 1)


def _read(path: Path, case: CsvCase) -> Table:
    return read_table(path, encoding=case.encoding if case.given_encoding else None)


def _cells(table: Table) -> pd.DataFrame:
    return table.frame.fillna("").astype(object)


def _layout(table: Table) -> SourceLayout:
    assert table.layout is not None
    return table.layout


def _row_texts(data: bytes, table: Table) -> tuple[str, list[str]]:
    """The header's lines and each row's lines of a text file, as they are written (line endings too)."""
    assert table.lines is not None and table.layout is not None and table.layout.encoding is not None
    text = data.decode(table.layout.encoding)
    lines = [match.group() for match in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)]
    starts = [int(line) - 1 for line in table.lines] + [len(lines)]
    rows = ["".join(lines[start:end]) for start, end in zip(starts, starts[1:], strict=False)]
    return "".join(lines[: starts[0]]), rows


@given(case=csv_cases())
@_SETTINGS
def test_without_edits_or_with_edits_that_change_nothing_the_copy_is_the_file_byte_for_byte(
    tmp_path: Path, case: CsvCase
) -> None:
    source, target = tmp_path / "input.csv", tmp_path / "writeback.csv"
    source.write_bytes(case.data)
    table = _read(source, case)
    assert len(table.frame) == case.rows

    outcome = write_back(source, target, _layout(table), {})
    assert target.read_bytes() == case.data
    assert outcome == WriteBackOutcome(target, case.rows, 0, 0)

    same = {row: dict(values) for row, values in _cells(table).iterrows()}
    outcome = write_back(source, target, _layout(table), same)
    assert target.read_bytes() == case.data
    assert (outcome.rows_changed, outcome.cells_changed, outcome.skipped) == (0, 0, ())


@given(case=csv_cases(), data=st.data())
@_SETTINGS
def test_edits_change_exactly_their_cells_and_every_other_row_keeps_its_bytes(
    tmp_path: Path, case: CsvCase, data: st.DataObject
) -> None:
    source, target = tmp_path / "input.csv", tmp_path / "writeback.csv"
    source.write_bytes(case.data)
    table = _read(source, case)
    columns = st.sampled_from((*case.headers, "NoSuchColumn"))
    edits = data.draw(
        st.dictionaries(
            st.integers(1, case.rows + 2),
            st.dictionaries(columns, _VALUES.map(lambda value: value.replace("\r", ""))),
            max_size=5,
        )
    )

    outcome = write_back(source, target, _layout(table), edits)

    before = _cells(table)
    expected = before.copy()
    skipped = {(skip.row, skip.column): skip.reason for skip in outcome.skipped}
    changed: set[tuple[int, str]] = set()
    for row, cells in edits.items():
        for column, value in cells.items():
            reason = skipped.get((row, column))
            if row > case.rows:
                assert reason == f"row {row} is not in the file (its rows are 1 to {case.rows})"
            elif column not in case.headers:
                assert reason == "the file has no column 'NoSuchColumn'"
            elif (
                reason is not None
            ):  # never "could not be matched": the rows are read as the reader reads them
                if reason == FORMULA_REFUSED:
                    assert value.startswith(FORMULA_STARTS)
                elif reason == "a line of the value holds as many delimiters as a whole record":
                    width = len(case.headers)
                    assert width >= 3 and any(
                        line.count(case.delimiter) >= width - 1 for line in value.split("\n")[1:]
                    )
                else:
                    assert "cannot be written in" in reason, reason
                    assert not _encodable(value, _layout(table).encoding)
            elif value != before.at[row, column]:
                expected.at[row, column] = value
                changed.add((row, column))
    after = read_table(target, delimiter=case.delimiter, encoding=_layout(table).encoding)
    assert len(after.frame) == case.rows
    pd.testing.assert_frame_equal(_cells(after), expected)
    assert outcome.cells_changed == len(changed)
    assert outcome.rows_changed == len({row for row, _ in changed})
    assert outcome.rows == case.rows

    header_before, rows_before = _row_texts(case.data, table)
    header_after, rows_after = _row_texts(target.read_bytes(), after)
    assert header_after == header_before
    for row, (old, new) in enumerate(zip(rows_before, rows_after, strict=True), start=1):
        if not any(edited_row == row for edited_row, _ in changed):
            assert new == old
        else:  # the line ending stays
            assert _ending(new) == _ending(old)


def _ending(text: str) -> str:
    found = _ENDING.search(text)
    return found.group() if found else ""


def _encodable(value: str, encoding: str | None) -> bool:
    assert encoding is not None
    try:
        value.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def _write(path: Path, data: bytes) -> Table:
    path.write_bytes(data)
    return read_table(path)


def test_a_quoted_semicolon_windows_1252_file_keeps_its_quotes_line_endings_and_other_fields(
    tmp_path: Path,
) -> None:
    source, target = tmp_path / "kunden.csv", tmp_path / "writeback.csv"
    data = (
        '"Name";"Vorname";"Strasse";"PLZ";"Ort"\r\n'
        '"Müller";"Hans";"Bahnhofstr. 1";"8001";"Zürich"\r\n'
        '"Favre";"Anne";"Rue du Lac 2";"1000";"Lausane"\r\n'
        'Weber;Eva;Hauptgasse 3;0123;"Bern; Stadt"\r\n'
    ).encode("cp1252")
    table = _write(source, data)
    assert _layout(table) == SourceLayout(
        "delimited",
        ("Name", "Vorname", "Strasse", "PLZ", "Ort"),
        "cp1252",
        encoding_detected=True,
        delimiter=";",
        size=len(data),
        modified_ns=source.stat().st_mtime_ns,
    )

    outcome = write_back(
        source,
        target,
        _layout(table),
        {2: {"Ort": "Lausanne", "Strasse": 'Rue du "Lac" 2'}, 3: {"Ort": "Genève", "PLZ": "0124"}},
    )

    assert target.read_bytes() == (
        '"Name";"Vorname";"Strasse";"PLZ";"Ort"\r\n'
        '"Müller";"Hans";"Bahnhofstr. 1";"8001";"Zürich"\r\n'
        '"Favre";"Anne";"Rue du ""Lac"" 2";"1000";"Lausanne"\r\n'
        'Weber;Eva;Hauptgasse 3;0124;"Genève"\r\n'
    ).encode("cp1252")
    assert outcome == WriteBackOutcome(target, 3, 2, 4)
    assert read_table(target).frame.loc[3, "PLZ"] == "0124"


def test_a_utf8_file_with_a_byte_order_mark_and_no_last_line_ending_keeps_both(tmp_path: Path) -> None:
    source, target = tmp_path / "in.csv", tmp_path / "out.csv"
    table = _write(source, codecs.BOM_UTF8 + b"Name,Ort\nHans,Zurich\nEva,Bern")
    assert _layout(table).encoding == "utf-8-sig"
    write_back(source, target, _layout(table), {1: {"Ort": "Zürich, Kreis 1"}, 2: {"Name": "Éva"}})
    assert target.read_bytes() == codecs.BOM_UTF8 + 'Name,Ort\nHans,"Zürich, Kreis 1"\nÉva,Bern'.encode()


def test_a_utf16_file_is_written_back_in_utf16(tmp_path: Path) -> None:
    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    table = _write(source, "Name\tOrt\r\nHans\tBern\r\n".encode("utf-16"))
    outcome = write_back(source, target, _layout(table), {1: {"Ort": "Bienne Łódź"}})
    assert target.read_bytes() == "Name\tOrt\r\nHans\tBienne Łódź\r\n".encode("utf-16")
    assert outcome.cells_changed == 1


def test_a_field_past_the_end_of_a_short_row_is_added_after_empty_fields(tmp_path: Path) -> None:
    source, target = tmp_path / "in.csv", tmp_path / "out.csv"
    table = _write(source, b"Name,Strasse,Ort\nHans\nEva,Weg 1,Bern\n")
    write_back(source, target, _layout(table), {1: {"Ort": "Thun"}})
    assert target.read_bytes() == b"Name,Strasse,Ort\nHans,,Thun\nEva,Weg 1,Bern\n"


def test_a_fixed_width_file_gets_values_left_aligned_and_padded_to_their_width(tmp_path: Path) -> None:
    source, target = tmp_path / "kunden.txt", tmp_path / "writeback.txt"
    widths = [("Name", 8), ("PLZ", 5), ("Ort", 10)]
    source.write_bytes(
        "Name    PLZ  Ort       \r\n"
        "Müller  8001 Zürich    \r\n"
        "Favre   1000 Lausane\r\n"
        "Weber   0123 Bern      ".encode("cp1252")
    )
    table = read_table(source, fixed_widths=widths, encoding="cp1252")
    assert _layout(table).kind == "fixed_width"
    assert _layout(table).fixed_widths == tuple(widths)

    outcome = write_back(
        source,
        target,
        _layout(table),
        {
            2: {"Ort": "Lausanne", "PLZ": "1003"},
            3: {"Ort": "Bern-Bümpliz"},  # 12 characters: wider than the column
            1: {"Name": "Meier\nZH"},
        },
    )

    assert target.read_bytes() == (
        "Name    PLZ  Ort       \r\n"
        "Müller  8001 Zürich    \r\n"
        "Favre   1003 Lausanne  \r\n"
        "Weber   0123 Bern      "
    ).encode("cp1252")
    assert outcome == WriteBackOutcome(
        target,
        3,
        1,
        2,
        (
            SkippedEdit(1, "Name", "a fixed-width line cannot hold a line break"),
            SkippedEdit(3, "Ort", "the value has 12 characters; the column is 10 wide"),
        ),
    )
    reread = read_table(target, fixed_widths=widths, encoding="cp1252").frame
    assert reread.loc[2].tolist() == ["Favre", "1003", "Lausanne"]
    assert reread.loc[3, "PLZ"] == "0123"


def test_a_fixed_width_value_with_spaces_at_its_ends_or_making_the_first_line_a_header_is_skipped(
    tmp_path: Path,
) -> None:
    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    widths = [("Name", 6), ("Ort", 6)]
    source.write_bytes(b"Hans  Bern  \nEva   Thun  \n")
    table = read_table(source, fixed_widths=widths)
    outcome = write_back(
        source, target, _layout(table), {1: {"Name": "name", "Ort": "ort"}, 2: {"Ort": " Biel"}}
    )
    assert target.read_bytes() == source.read_bytes()
    assert [skip.reason for skip in outcome.skipped] == [
        "the first line would repeat the column names and be read as a header line",
        "the first line would repeat the column names and be read as a header line",
        "spaces or tabs at the ends of a value are not kept in a fixed-width column",
    ]


def _two_sheet_workbook(path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Kunden"
    sheet.append(["Name", "PLZ", "Ort", "Betrag", "Summe"])
    sheet.append(["Müller", "0123", "Zurich", 12.5, "=D2*2"])
    sheet.append(["Favre", 1000, "Lausane", 3, "=D3*2"])
    sheet.append(["Weber", "3000", "Bern", 4, "=D4*2"])
    sheet["A1"].font = Font(bold=True)
    sheet["C2"].fill = PatternFill("solid", start_color="FFFF00")
    sheet["B3"].number_format = "0000"
    sheet["D2"].number_format = "#,##0.00"
    sheet.column_dimensions["A"].width = 30
    sheet.column_dimensions["C"].width = 18
    other = workbook.create_sheet("Notizen")
    other.append(["Notiz", "Datum"])
    other.append(["nicht anfassen", "=TODAY()"])
    other["A2"].fill = PatternFill("solid", start_color="00FF00")
    workbook.save(path)


def _cell_snapshot(sheet: openpyxl.worksheet.worksheet.Worksheet) -> dict[str, tuple[object, ...]]:
    return {
        cell.coordinate: (cell.value, cell.data_type, cell.number_format, cell.fill.fgColor.rgb, cell.font.b)
        for row in sheet.iter_rows()
        for cell in row
    }


def test_a_workbook_keeps_its_other_cells_formats_formulas_widths_and_sheets(tmp_path: Path) -> None:
    source, target = tmp_path / "kunden.xlsx", tmp_path / "writeback.xlsx"
    _two_sheet_workbook(source)
    table = read_table(source)
    assert (_layout(table).kind, _layout(table).sheet) == ("xlsx", "Kunden")
    assert table.frame.loc[1].tolist() == ["Müller", "0123", "Zurich", "12.5", ""]

    outcome = write_back(
        source,
        target,
        _layout(table),
        {
            1: {"Ort": "Zürich", "PLZ": "0124"},
            2: {"Ort": "Lausanne", "PLZ": "1003", "Summe": "7"},
            3: {"Name": "=Weber"},
        },
    )

    assert outcome == WriteBackOutcome(
        target,
        3,
        2,
        4,
        (SkippedEdit(2, "Summe", "the cell holds a formula"), SkippedEdit(3, "Name", FORMULA_REFUSED)),
    )
    before, after = openpyxl.load_workbook(source), openpyxl.load_workbook(target)
    assert after.sheetnames == ["Kunden", "Notizen"]
    assert _cell_snapshot(after["Notizen"]) == _cell_snapshot(before["Notizen"])
    old, new = _cell_snapshot(before["Kunden"]), _cell_snapshot(after["Kunden"])
    edited = {"C2", "B2", "C3", "B3"}
    assert {key: value for key, value in new.items() if key not in edited} == {
        key: value for key, value in old.items() if key not in edited
    }
    for key in edited:  # the new text, as text, in the cell's own format
        assert new[key][1] == "s" and new[key][2:] == old[key][2:]
    assert [new[key][0] for key in ("C2", "B2", "C3", "B3")] == ["Zürich", "0124", "Lausanne", "1003"]
    assert after["Kunden"]["E3"].value == "=D3*2"
    assert after["Kunden"].column_dimensions["A"].width == 30
    assert after["Kunden"].column_dimensions["C"].width == 18
    reread = read_table(target).frame
    assert reread.loc[1, "PLZ"] == "0124" and reread.loc[3, "Name"] == before["Kunden"]["A4"].value


def test_a_workbook_row_of_dates_times_booleans_numbers_rich_text_and_errors_is_matched(
    tmp_path: Path,
) -> None:
    source, target = tmp_path / "typen.xlsx", tmp_path / "writeback.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Name", "Datum", "Zeit", "Flag", "Zahl", "Gross", "Rich", "Leer", "Fehler", "Zeitpunkt"])
    rich = CellRichText("fett", TextBlock(InlineFont(b=True), " und so"))
    sheet.append(
        ["a", dt.date(2030, 1, 31), dt.time(12, 30), True, 2.5, 12345678901234, rich, None, "#DIV/0!",
         dt.datetime(2030, 1, 31, 8, 15)]
    )  # fmt: skip
    sheet["I2"].data_type = "e"
    workbook.save(source)
    table = read_table(source)
    assert table.frame.loc[1].tolist() == [
        "a", "2030-01-31 00:00:00", "12:30:00", "True", "2.5", "12345678901234", "fett und so", "", "",
        "2030-01-31 08:15:00",
    ]  # fmt: skip

    outcome = write_back(source, target, _layout(table), {1: {"Name": "b", "Leer": "jetzt voll"}})

    assert outcome == WriteBackOutcome(target, 1, 1, 2)
    before = openpyxl.load_workbook(source, rich_text=True).active
    after = openpyxl.load_workbook(target, rich_text=True).active
    assert [cell.value for cell in after[2]][:2] == ["b", dt.datetime(2030, 1, 31)]
    assert after["H2"].value == "jetzt voll"
    kept = ("B2", "C2", "D2", "E2", "F2", "I2", "J2")
    assert [(after[key].value, after[key].data_type) for key in kept] == [
        (before[key].value, before[key].data_type) for key in kept
    ]
    assert str(after["G2"].value) == "fett und so" and after["G2"].value[1].font.b


def test_a_workbook_without_changes_is_copied_byte_for_byte(tmp_path: Path) -> None:
    source, target = tmp_path / "kunden.xlsx", tmp_path / "writeback.xlsx"
    _two_sheet_workbook(source)
    table = read_table(source, sheet=0)
    outcome = write_back(source, target, _layout(table), {1: {"Ort": "Zurich"}, 9: {"Ort": "x"}})
    assert target.read_bytes() == source.read_bytes()
    assert outcome.cells_changed == 0
    assert outcome.skipped == (SkippedEdit(9, "Ort", "row 9 is not in the file (its rows are 1 to 3)"),)


def test_the_worksheet_read_is_the_one_written_back(tmp_path: Path) -> None:
    source, target = tmp_path / "kunden.xlsx", tmp_path / "writeback.xlsx"
    _two_sheet_workbook(source)
    table = read_table(source, sheet="notizen")
    assert _layout(table).sheet == "Notizen"
    write_back(source, target, _layout(table), {1: {"Notiz": "angefasst"}})
    after = openpyxl.load_workbook(target)
    assert after["Notizen"]["A2"].value == "angefasst"
    assert after["Notizen"]["A2"].fill.fgColor.rgb == "0000FF00"
    assert after["Kunden"]["C2"].value == "Zurich"


def test_edits_that_cannot_be_made_are_skipped_with_their_reason_and_their_cells_kept(tmp_path: Path) -> None:
    source, target = tmp_path / "kunden.csv", tmp_path / "writeback.csv"
    data = 'Name;Ort\nMüller;Zürich\nx;y;z;w\nOk;1\n"offen;Bern'.encode("cp1252")
    table = _write(source, data)
    assert table.malformed == [(2, "row has 4 fields, the header has 2")]

    outcome = write_back(
        source,
        target,
        _layout(table),
        {
            1: {"Ort": "Łódź", "Land": "PL"},
            2: {"Ort": "Bern"},
            3: {"Ort": "2"},
            4: {"Ort": "Basel"},
            7: {"Name": "Niemand"},
        },
    )

    assert outcome.skipped == (
        SkippedEdit(1, "Ort", "character 'Ł' (U+0141) cannot be written in Windows-1252"),
        SkippedEdit(1, "Land", "the file has no column 'Land'"),
        SkippedEdit(2, "Ort", "the reader could not read this row: row has 4 fields, the header has 2"),
        SkippedEdit(4, "Ort", ROW_NOT_MATCHED),  # a quote opened and never closed: read to the end
        SkippedEdit(7, "Name", "row 7 is not in the file (its rows are 1 to 4)"),
    )
    assert (outcome.rows_changed, outcome.cells_changed) == (1, 1)
    assert target.read_bytes() == 'Name;Ort\nMüller;Zürich\nx;y;z;w\nOk;2\n"offen;Bern'.encode("cp1252")


def test_a_line_over_the_limit_or_a_value_with_too_many_lines_is_skipped(tmp_path: Path) -> None:
    source, target = tmp_path / "in.csv", tmp_path / "out.csv"
    table = _write(source, b"Name,Ort,PLZ\nHans,Bern,3000\n")
    limits = TableLimits(max_line_bytes=40)
    outcome = write_back(
        source,
        target,
        _layout(table),
        {1: {"Ort": "B" * 40, "Name": "\n".join("x" * 11)}},
        limits=limits,
    )
    assert [skip.reason for skip in outcome.skipped] == [
        "the value has 11 lines, more than the 10 a quoted cell may hold",
        "the line would be longer than the limit of 40 bytes per line (POSTFLOWS_TABLE_MAX_LINE_BYTES)",
    ]
    assert target.read_bytes() == source.read_bytes()


def test_a_source_changed_since_it_was_read_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    source, target = tmp_path / "in.csv", tmp_path / "out.csv"
    table = _write(source, b"Name,Ort\nHans,Bern\n")
    source.write_bytes(b"Name,Ort\nEva,Thun,\n")
    with pytest.raises(InputError, match="has changed since it was read"):
        write_back(source, target, _layout(table), {1: {"Ort": "Biel"}})
    assert not target.exists()


def test_a_layout_read_otherwise_than_the_file_reads_now_is_refused(tmp_path: Path) -> None:
    source, target = tmp_path / "in.csv", tmp_path / "out.csv"
    _write(source, b"Name;Ort\nHans;Bern\n")
    layout = SourceLayout("delimited", ("Name", "Ort"), "utf-8", delimiter=",")
    with pytest.raises(InputError, match="reads differently now"):
        write_back(source, target, layout, {1: {"Ort": "Biel"}})
    assert not target.exists()


def test_write_back_checks_the_limits_before_it_reads(tmp_path: Path) -> None:
    source, target = tmp_path / "in.csv", tmp_path / "out.csv"
    table = _write(source, b"Name,Ort\nHans,Bern\nEva,Thun\n")
    with pytest.raises(InputError, match="POSTFLOWS_TABLE_MAX_ROWS"):
        write_back(source, target, _layout(table), {1: {"Ort": "Biel"}}, limits=TableLimits(max_rows=1))
    assert not target.exists()


def test_an_address_file_carries_its_layout_and_is_written_back_by_record_id(tmp_path: Path) -> None:
    source, target = tmp_path / "adressen.csv", tmp_path / "writeback.csv"
    source.write_bytes(
        "Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\r\n"
        "Hans;Müller;Bahnhofstr.;1;8001;Zurich\r\n"
        "\r\n"
        "Eva;Meier;Weg;2;3000;Bern\r\n".encode("cp1252")
    )
    addresses = read_address_file(source)
    assert addresses.layout == read_table(source).layout
    assert addresses.layout is not None and addresses.layout.encoding == "cp1252"
    town, street = addresses.address_columns["TownName"], addresses.address_columns["Streetname"]
    assert addresses.records["RecordId"].tolist() == [1, 3]

    outcome = write_back(
        addresses.source, target, addresses.layout, {1: {town: "Zürich"}, 3: {street: "Weg", town: "Bern"}}
    )

    assert outcome == WriteBackOutcome(target, 3, 1, 1)
    assert target.read_bytes() == source.read_bytes().replace(b"Zurich", "Zürich".encode("cp1252"))


def test_a_commerce_address_file_carries_its_layout(tmp_path: Path) -> None:
    source = tmp_path / "adressen.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active.title = "Liste"
    workbook.active.append(["firstName", "lastName", "zip", "city"])
    workbook.active.append(["Hans", "Muster", "3000", "Bern"])
    workbook.save(source)
    addresses = read_commerce_addresses(source, use="validation")
    assert addresses.layout is not None
    assert (addresses.layout.kind, addresses.layout.sheet, addresses.layout.columns) == (
        "xlsx",
        "Liste",
        ("firstName", "lastName", "zip", "city"),
    )
    assert addresses.layout.size == source.stat().st_size
