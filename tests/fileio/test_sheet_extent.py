"""Measuring a worksheet before its grid is built: the declared dimension and the farthest cell, wherever
and however a cell is written, found in the part of the archive the reader reads."""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import openpyxl
import pytest

from fileio.errors import InputError
from fileio.limits import TableLimits
from fileio.sheet_extent import Extent, _Measure, _quick_extent, _reference, measure_member
from fileio.tables import read_head, read_table

SHEET = "xl/worksheets/sheet1.xml"


def workbook(path: Path, sheet_data: str, *, dimension: str | None = None, root: str = "") -> Path:
    """A real workbook (one sheet, "Daten") whose sheet XML holds ``sheet_data`` as its cells."""
    book = openpyxl.Workbook()
    book.active.title = "Daten"
    buffer = io.BytesIO()
    book.save(buffer)
    with zipfile.ZipFile(buffer) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    declared = f'<dimension ref="{dimension}"/>' if dimension else ""
    members[SHEET] = (
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
        f"{root}>{declared}<sheetData>{sheet_data}</sheetData></worksheet>"
    ).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def text(reference: str, value: str = "x") -> str:
    return f'<c r="{reference}" t="inlineStr"><is><t>{value}</t></is></c>'


HEADER = (
    '<row r="1">'
    + "".join(text(f"{c}1", name) for c, name in zip("ABC", ("Name", "Ort", "PLZ"), strict=True))
    + "</row>"
)


UNLIMITED = TableLimits(max_cells=10**18, max_columns=10**9, max_rows=10**9)


def extent(path: Path) -> Extent:
    """The extent of the cells of the workbook's one sheet, measured to the end."""
    with zipfile.ZipFile(path) as archive:
        measured = measure_member(archive, SHEET, UNLIMITED)
    assert isinstance(measured, Extent)
    return measured


@pytest.mark.parametrize(
    ("cells", "corner"),
    [
        (HEADER + f'<row r="1048576">{text("XFD1048576")}</row>', "XFD1048576"),
        (HEADER + f'<row r="2000">{text("XFD2000")}</row>', "XFD2000"),
        # the reference decides, not the row the cell is written in
        (HEADER.replace("</row>", text("AB70") + "</row>"), "AB70"),
        # another attribute first, single quotes, a namespace prefix: every cell the reader reads
        (HEADER + '<row r="2"><c s="1" r="Q9"><v>1</v></c></row>', "Q9"),
        (HEADER + "<row r='2'><c r='Q19' t='n'><v>1</v></c></row>", "Q19"),
        (HEADER + '<x:row r="2"><x:c r="ZZ30"><x:v>1</x:v></x:c></x:row>', "ZZ30"),
        # lower case is read as upper case
        (HEADER + f'<row r="2">{text("zz31")}</row>', "ZZ31"),
        # cells without a reference follow the one before; rows without one the row before
        (HEADER + "<row><c/><c/><c/><c/><c/></row><row/><row><c/></row>", "E4"),
        (HEADER + '<row r="7"><c r="C7"/><c/><c/></row>', "E7"),
    ],
)
def test_the_farthest_cell_is_found_however_it_is_written(tmp_path: Path, cells: str, corner: str) -> None:
    root = ' xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    path = workbook(tmp_path / "book.xlsx", cells, root=root)
    assert _reference(extent(path)) == corner


def test_a_far_cell_is_refused_by_the_cells_limit_before_the_grid_is_built(tmp_path: Path) -> None:
    path = workbook(tmp_path / "far.xlsx", HEADER + f'<row r="1048576">{text("XFD1048576")}</row>')
    with pytest.raises(InputError) as refused:
        read_table(path)
    assert refused.value.problem == (
        "worksheet 'Daten' has a cell at XFD1048576: 16,384 columns × 1,048,576 rows = 17,179,869,184 cells "
        "from A1, more than the limit of 10,000,000 cells (POSTFLOWS_TABLE_MAX_CELLS); nothing was read"
    )


def test_a_declared_dimension_over_the_cells_limit_is_refused_unread(tmp_path: Path) -> None:
    path = workbook(tmp_path / "declared.xlsx", HEADER, dimension="A1:XFD1048576")
    with pytest.raises(
        InputError, match=r"declares the dimension A1:XFD1048576: .* \(POSTFLOWS_TABLE_MAX_CELLS\)"
    ):
        read_head(path)


def test_a_small_declared_dimension_does_not_hide_a_far_cell(tmp_path: Path) -> None:
    path = workbook(
        tmp_path / "lying.xlsx", HEADER + f'<row r="50000">{text("KZ50000")}</row>', dimension="A1:C1"
    )
    with pytest.raises(InputError, match=r"has a cell at KZ50000: 312 columns × 50,000 rows"):
        read_table(path)


def test_rows_and_columns_of_a_sheet_have_their_own_limits(tmp_path: Path) -> None:
    path = workbook(tmp_path / "book.xlsx", HEADER + f'<row r="12">{text("A12")}</row>')
    with pytest.raises(
        InputError, match=r"'Daten' has 11 rows after the header, more than the limit of 10 rows"
    ):
        read_table(path, limits=TableLimits(max_rows=10))
    with pytest.raises(InputError, match=r"'Daten' has 3 columns, more than the limit of 2 columns per row"):
        read_table(path, limits=TableLimits(max_columns=2))
    assert len(read_table(path, limits=TableLimits(max_rows=11, max_columns=3, max_cells=36)).frame) == 11


def test_only_the_sheet_read_is_measured(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    book.active.append(["Name", "Ort"])
    book.active.append(["Muster", "Bern"])
    far = book.create_sheet("Weit")
    far["A1"] = "Name"
    far["XFD1048576"] = "x"
    book.save(tmp_path / "two.xlsx")
    assert list(read_table(tmp_path / "two.xlsx").frame.columns) == ["Name", "Ort"]
    with pytest.raises(InputError, match="worksheet 'Weit' declares the dimension A1:XFD1048576"):
        read_table(tmp_path / "two.xlsx", sheet="Weit")


def test_the_quick_reading_agrees_with_reading_every_tag() -> None:
    rnd = random.Random(5)
    for _ in range(300):
        references = []
        for _ in range(rnd.randrange(1, 30)):
            letters = "".join(rnd.choice("ABCXYZ") for _ in range(rnd.randrange(1, 4)))
            references.append(f"{letters}{rnd.randrange(1, 10 ** rnd.randrange(1, 8))}")
        chunk = "".join(f'<row><c r="{ref}"><v>1</v></c><c r="{ref}" s="2"/></row>' for ref in references)
        quick = _quick_extent(chunk.encode())
        measure = _Measure(UNLIMITED)
        assert measure.feed_tags(chunk.encode())
        assert quick == measure.extent, references


@pytest.mark.parametrize(
    "cell",
    [
        '<c s="1" r="A1">',
        "<c r='A1'>",
        '<c r="AAAA1">',
        '<c r="A12345678">',
        '<c r="1">',
        "<c>",
        '<x:c r="A1">',
    ],
)
def test_a_cell_the_quick_reading_cannot_place_is_left_to_the_slow_one(cell: str) -> None:
    assert _quick_extent(f'<row r="1">{cell}<v>1</v></c></row>'.encode()) is None


def test_a_chunk_without_cells_has_no_extent() -> None:
    assert _quick_extent(b'<worksheet><sheetData><row r="3"/>') == Extent()
