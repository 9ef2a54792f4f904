"""Reading table files (``read_table``): cases the fuzz tests (tests/fuzz) found, kept as plain tests."""

from __future__ import annotations

import io
import zipfile
from dataclasses import replace
from pathlib import Path

import openpyxl
import pytest

from fileio.address_service.records import read_address_file
from fileio.errors import InputError
from fileio.source_layout import SourceLayout
from fileio.tables import read_head, read_table


def _values(path: Path) -> tuple[list[list[str]], list[tuple[int, str]], list[int]]:
    table = read_table(path)
    assert table.lines is not None
    return table.frame.fillna("").to_numpy().tolist(), table.malformed, [int(line) for line in table.lines]


def test_an_over_long_row_with_a_line_break_in_a_quoted_cell_is_rejected_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.csv"
    path.write_bytes(b'Name,Town\nHans,Bern\nEva,Thun,"note\nmore"\nUrs,Biel\n')
    rows, malformed, lines = _values(path)
    assert rows == [["Hans", "Bern"], ["", ""], ["Urs", "Biel"]]
    assert malformed == [(2, "row has 3 fields, the header has 2")]
    assert lines == [2, 3, 5]  # the rejected row's second line is still counted


def test_an_empty_surplus_field_holding_a_line_break_is_cut_and_its_line_counted(tmp_path: Path) -> None:
    path = tmp_path / "surplus.csv"
    path.write_bytes(b'Name,Town\nHans,Bern,"\n"\nUrs,Biel\n')
    rows, malformed, lines = _values(path)
    assert rows == [["Hans", "Bern"], ["Urs", "Biel"]]
    assert malformed == []
    assert lines == [2, 4]


def test_an_over_long_row_whose_quote_swallows_rows_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "swallowed.csv"
    path.write_bytes(b'a,b,c\n1,2,3,"x\n4,5,6\n7,8,9"\n10,11,12\n')
    with pytest.raises(InputError) as refused:
        read_table(path)
    assert "line 2: a quote opened here is closed only on line 4" in str(refused.value)
    assert (refused.value.row, refused.value.field) == (1, "field 4")


@pytest.mark.parametrize("surplus", [b"", b",extra"], ids=["regular", "over-long row"])
def test_a_second_byte_order_mark_is_no_part_of_the_first_header(tmp_path: Path, surplus: bytes) -> None:
    path = tmp_path / "twice.csv"
    path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbfName,Town\nHans,Bern" + surplus + b"\nUrs,Biel\n")
    assert read_head(path).headers == ["Name", "Town"]
    assert list(read_table(path).frame.columns) == ["Name", "Town"]


@pytest.mark.parametrize(
    ("encoding", "data", "problem"),
    [
        (
            None,
            "Name;Ort\nMüller;Zürich\n".encode("cp1252") + b"Urs;\x81\n",
            "line 3: cannot be decoded as Windows-1252",
        ),
        ("utf-16", b"\xff\xfeN\x00\n\x00x\x00\n\x00y", "line 3: cannot be decoded as utf-16"),
        ("punycode", b"Name,Town\nHans,Bern\n", "cannot be decoded as punycode"),
    ],
    ids=["windows-1252", "utf-16", "no text codec"],
)
def test_a_file_that_cannot_be_decoded_is_refused_naming_the_line(
    tmp_path: Path, encoding: str | None, data: bytes, problem: str
) -> None:
    path = tmp_path / "input.csv"
    path.write_bytes(data)
    with pytest.raises(InputError, match=problem):
        read_table(path, encoding=encoding)


def test_a_repeated_header_is_refused_naming_it_and_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "repeats.csv"
    path.write_bytes(b"Name;Ort;PLZ;Ort \nA;Bern;3000;Biel\n")
    for read in (read_table, read_head):
        with pytest.raises(InputError, match=r"header 'Ort' names columns 2 and 4; give each column its own"):
            read(path)
    path.write_bytes(b"x.1;x;x;x\n1;2;3;4\n")
    with pytest.raises(InputError, match="header 'x' names columns 2, 3 and 4"):
        read_table(path)


def test_a_repeated_header_of_a_workbook_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "repeats.xlsx"
    book = openpyxl.Workbook()
    book.active.append(["Name", "Ort", "Ort"])
    book.active.append(["A", "Bern", "Biel"])
    book.save(path)
    for read in (read_table, read_head):
        with pytest.raises(InputError, match="header 'Ort' names columns 2 and 3"):
            read(path)


def test_an_address_file_with_a_repeated_header_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    path = tmp_path / "addresses.csv"
    path.write_bytes(b"Name;Prename;Streetname;HouseNo;ZIPCode;TownName;Ort\nA;B;C;1;3000;Bern;Biel\n")
    read_address_file(path)  # an alias beside the canonical name is two names, not a repeat
    path.write_bytes(b"Name;Prename;Streetname;HouseNo;ZIPCode;Ort;Ort\nA;B;C;1;3000;Bern;Biel\n")
    with pytest.raises(InputError, match="header 'Ort' names columns 6 and 7") as refused:
        read_address_file(path)
    assert refused.value.exit_code == 2


def _workbook_with_sheet(path: Path, sheet_xml: bytes, *, deflated: bool = True) -> Path:
    """A workbook whose first sheet's XML is ``sheet_xml``."""
    buffer = io.BytesIO()
    book = openpyxl.Workbook()
    book.active.append(["Name", "Town"])
    book.save(buffer)
    with zipfile.ZipFile(buffer) as source, zipfile.ZipFile(path, "w") as target:
        for name in source.namelist():
            content = sheet_xml if name == "xl/worksheets/sheet1.xml" else source.read(name)
            target.writestr(name, content, zipfile.ZIP_DEFLATED if deflated else zipfile.ZIP_STORED)
    return path


def test_a_workbook_whose_sheet_is_not_xml_is_refused_by_name(tmp_path: Path) -> None:
    path = _workbook_with_sheet(tmp_path / "broken.xlsx", b"<worksheet><sheetData><row r=")
    with pytest.raises(InputError, match="cannot be read as an Excel workbook"):
        read_table(path)
    with pytest.raises(InputError, match="cannot be read as an Excel workbook"):
        read_head(path)


def test_a_workbook_whose_sheet_does_not_inflate_is_refused_by_name(tmp_path: Path) -> None:
    path = _workbook_with_sheet(tmp_path / "damaged.xlsx", b"<worksheet>" + b"<x/>" * 500 + b"</worksheet>")
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        member = archive.getinfo("xl/worksheets/sheet1.xml")
    start = member.header_offset + 30 + len(member.filename) + len(member.extra)
    data[start + 10 : start + 14] = b"\xff\xff\xff\xff"  # inside the deflated data; the directory is intact
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="cannot be read as an Excel workbook"):
        read_table(path)


@pytest.mark.parametrize("flag", [0x01, 0x40], ids=["encrypted", "strong encryption"])
def test_a_workbook_with_an_encrypted_member_is_refused_by_name(tmp_path: Path, flag: int) -> None:
    path = _workbook_with_sheet(tmp_path / "locked.xlsx", b"<worksheet/>", deflated=False)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        member = archive.getinfo("xl/worksheets/sheet1.xml")
    data[member.header_offset + 6] |= flag  # the general purpose flags of the member's local header
    entry = data.index(b"PK\x01\x02")
    while data[entry + 46 : entry + 46 + len(member.filename)] != member.filename.encode():
        entry = data.index(b"PK\x01\x02", entry + 4)
    data[entry + 8] |= flag  # and of its central directory entry
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="cannot be read as an Excel workbook"):
        read_table(path)


@pytest.mark.parametrize(
    ("offset", "value"),
    [(6, 228), (8, 0x08)],
    ids=["version past any ZIP's", "name flagged UTF-8 that is not"],
)
def test_a_workbook_whose_directory_the_zip_reader_cannot_take_is_refused_by_name(
    tmp_path: Path, offset: int, value: int
) -> None:
    path = _workbook_with_sheet(tmp_path / "directory.xlsx", b"<worksheet/>")
    data = bytearray(path.read_bytes())
    entry = data.index(b"PK\x01\x02")
    if offset == 8:  # the name of the first entry gets a byte that is no UTF-8, then the UTF-8 flag
        data[entry + 46] = 0xFF
        data[entry + 9] |= value
    else:  # the version needed to extract: 22.8
        data[entry + offset] = value
    path.write_bytes(bytes(data))
    for read in (read_head, read_table):
        with pytest.raises(InputError, match="the file is a damaged ZIP archive"):
            read(path)


def test_byte_order_marks_a_given_encoding_keeps_are_no_part_of_the_header(tmp_path: Path) -> None:
    path = tmp_path / "unicode.txt"
    path.write_bytes("\ufeff\ufeffName,Town\nHans,Bern\n".encode("utf-16-le"))
    assert read_head(path, encoding="utf-16-le").headers == ["Name", "Town"]
    assert list(read_table(path, encoding="utf-16-le").frame.columns) == ["Name", "Town"]


def test_the_layout_says_how_each_kind_of_file_was_read(tmp_path: Path) -> None:
    delimited = tmp_path / "kunden.csv"
    delimited.write_bytes("Name;Ort;\nMüller;Bern;\n".encode("cp1252"))
    layout = read_table(delimited).layout
    assert layout == SourceLayout(
        "delimited",
        ("Name", "Ort", "Unnamed: 3"),  # the empty unnamed column the frame drops keeps its place
        "cp1252",
        encoding_detected=True,
        delimiter=";",
        size=delimited.stat().st_size,
        modified_ns=delimited.stat().st_mtime_ns,
    )
    assert read_table(delimited, encoding="cp1252").layout == replace(layout, encoding_detected=False)

    fixed = tmp_path / "kunden.txt"
    fixed.write_bytes(b"Hans  Bern\n")
    layout = read_table(fixed, fixed_widths=[("Name", 6), ("Ort", 4)]).layout
    assert layout is not None
    assert (layout.kind, layout.columns, layout.fixed_widths, layout.encoding) == (
        "fixed_width",
        ("Name", "Ort"),
        (("Name", 6), ("Ort", 4)),
        "utf-8",
    )

    workbook_path = tmp_path / "kunden.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active.title = "Erste"
    workbook.create_sheet("Zweite").append(["Name", "Ort"])
    workbook.save(workbook_path)
    layout = read_table(workbook_path, sheet=1).layout
    assert layout is not None
    assert (layout.kind, layout.sheet, layout.columns, layout.encoding) == (
        "xlsx",
        "Zweite",
        ("Name", "Ort"),
        None,
    )
