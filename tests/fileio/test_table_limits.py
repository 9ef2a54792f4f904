"""Limits on a table file's shape, decided before the reader allocates: the files that once took minutes,
gigabytes or the whole process are refused at once, naming the setting that would allow them, in the CLI's
pre-check (``read_head``) and in every flow's reader (``read_table``) alike."""

from __future__ import annotations

import time
from pathlib import Path

import openpyxl
import pytest

from fileio.address_service.records import read_address_file
from fileio.errors import InputError
from fileio.limits import (
    TABLE_LIMITS,
    TABLE_MAX_CELLS,
    TABLE_MAX_COLUMNS,
    TABLE_MAX_LINE_BYTES,
    TABLE_MAX_ROWS,
    TableLimits,
)
from fileio.tables import read_head, read_table
from runtime.settings import Settings
from tests.peak_memory import run_measured

ADDRESS_HEADER = ["Name", "Prename", "Streetname", "HouseNo", "ZIPCode", "TownName"]
ADDRESS_ROW = ["Muster", "Hans", "Weg", "1", "3000", "Bern"]


def wide_csv(path: Path, columns: int, rows: int = 3) -> Path:
    header = ADDRESS_HEADER + [f"c{number}" for number in range(columns - len(ADDRESS_HEADER))]
    row = ADDRESS_ROW + [""] * (columns - len(ADDRESS_ROW))
    path.write_text("\n".join([",".join(header), *[",".join(row)] * rows]) + "\n", encoding="utf-8")
    return path


def far_cell_workbook(path: Path, row: int) -> Path:
    """A workbook of a few kilobytes: an address header, one row, and one cell in the last column."""
    book = openpyxl.Workbook()
    book.active.append(ADDRESS_HEADER)
    book.active.append(ADDRESS_ROW)
    book.active.cell(row=row, column=16384, value="x")
    book.save(path)
    return path


def test_the_settings_carry_the_limits_with_their_defaults_and_what_a_refusal_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = Settings()
    assert settings.table_limits == TABLE_LIMITS
    assert (TABLE_MAX_COLUMNS, TABLE_MAX_LINE_BYTES, TABLE_MAX_CELLS, TABLE_MAX_ROWS) == (
        1000,
        1 << 20,
        10_000_000,
        5_000_000,
    )
    fields = Settings.model_json_schema()["properties"]
    for name in ("table_max_columns", "table_max_line_bytes", "table_max_cells", "table_max_rows"):
        assert fields[name]["description"] and fields[name]["limit"], name
    monkeypatch.setenv("POSTFLOWS_TABLE_MAX_COLUMNS", "7")
    monkeypatch.setenv("POSTFLOWS_TABLE_MAX_ROWS", "9")
    assert Settings().table_limits == TableLimits(max_columns=7, max_rows=9)


def test_5000_columns_are_refused_at_once_by_the_columns_limit(tmp_path: Path) -> None:
    path = wide_csv(tmp_path / "wide.csv", 5000)
    started = time.perf_counter()
    for read in (read_head, read_table, read_address_file):
        with pytest.raises(InputError, match=r"5,000 columns, more than the limit of 1,000 columns per row "
                           r"\(POSTFLOWS_TABLE_MAX_COLUMNS\)"):  # fmt: skip
            read(path)
    assert time.perf_counter() - started < 30  # a guard only: it took minutes before (the benchmark times it)


def test_columns_up_to_the_limit_are_read(tmp_path: Path) -> None:
    path = wide_csv(tmp_path / "wide.csv", 1000)
    assert read_table(path).frame.shape == (3, 1000)
    assert len(read_address_file(path).records) == 3


def test_a_data_row_with_too_many_fields_refuses_the_file_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    path.write_text("Name;Ort\nMuster;Bern\n" + ";" * 20 + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3 has 21 columns, more than the limit of 10 columns"):
        read_table(path, limits=TableLimits(max_columns=10))


def test_a_record_over_several_lines_is_counted_as_one(tmp_path: Path) -> None:
    path = tmp_path / "multiline.csv"
    path.write_text('Name;Ort;PLZ\nMuster;"zwei\nZeilen";3000;x;y\nKeller;Bern;8000\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2 has 5 columns, more than the limit of 4 columns per row"):
        read_table(path, limits=TableLimits(max_columns=4))
    assert read_table(path, limits=TableLimits(max_columns=5)).malformed == [
        (1, "row has 5 fields, the header has 3")
    ]
    wide_header = tmp_path / "header.csv"
    wide_header.write_text('Name;"zwei\nZeilen";PLZ;Ort\nMuster;x;3000;Bern\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"the header has 4 columns, more than the limit of 3 columns"):
        read_table(wide_header, limits=TableLimits(max_columns=3))


def test_delimiters_inside_quotes_are_no_columns(tmp_path: Path) -> None:
    path = tmp_path / "quoted.csv"
    path.write_text('Name,Notiz\nMuster,"' + "a," * 40 + '"\n', encoding="utf-8")
    table = read_table(path, limits=TableLimits(max_columns=2))
    assert table.frame["Notiz"].iloc[0] == "a," * 40


def test_rows_are_limited_by_lines_or_by_records_where_quotes_hold_line_breaks(tmp_path: Path) -> None:
    plain = tmp_path / "plain.csv"
    plain.write_text("Name,Ort\n" + "Muster,Bern\n" * 5, encoding="utf-8")
    with pytest.raises(InputError, match=r"5 lines after the header, more than the limit of 4 rows "
                       r"\(POSTFLOWS_TABLE_MAX_ROWS\)"):  # fmt: skip
        read_table(plain, limits=TableLimits(max_rows=4))
    assert len(read_table(plain, limits=TableLimits(max_rows=5)).frame) == 5
    quoted = tmp_path / "quoted.csv"
    quoted.write_text("Name,Notiz\n" + 'Muster,"zwei\nZeilen"\n' * 3, encoding="utf-8")
    assert len(read_table(quoted, limits=TableLimits(max_rows=3)).frame) == 3  # 6 lines, 3 rows
    with pytest.raises(InputError, match=r"has 3 rows after the header, more than the limit of 2 rows"):
        read_table(quoted, limits=TableLimits(max_rows=2))


def test_a_long_line_is_refused_by_its_number_in_the_precheck_and_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_bytes(b"Name,Ort\nMuster,Bern\n" + b"x" * 5000 + b"\nMuster,Bern\n")
    for read in (read_head, read_table):
        with pytest.raises(InputError, match=r"line 3 is longer than the limit of 4,000 bytes per line "
                           r"\(POSTFLOWS_TABLE_MAX_LINE_BYTES\)"):  # fmt: skip
            read(path, limits=TableLimits(max_line_bytes=4000))


def test_fixed_width_layouts_have_the_same_limits(tmp_path: Path) -> None:
    path = tmp_path / "fixed.txt"
    path.write_text("Muster    Bern      \n" * 4, encoding="utf-8")
    widths = (("Name", 10), ("Ort", 10))
    with pytest.raises(InputError, match=r"the fixed-width layout has 2 columns, more than the limit of 1"):
        read_table(path, fixed_widths=widths, limits=TableLimits(max_columns=1))
    with pytest.raises(InputError, match=r"the file has 4 rows, more than the limit of 3 rows"):
        read_table(path, fixed_widths=widths, limits=TableLimits(max_rows=3))
    assert len(read_table(path, fixed_widths=widths, limits=TableLimits(max_rows=4)).frame) == 4


_READ = """
import sys, time
from pathlib import Path
from fileio.errors import InputError
from fileio.tables import read_head, read_table
read = read_head if sys.argv[2] == "head" else read_table
started = time.perf_counter()
try:
    read(Path(sys.argv[1]))
except InputError as error:
    print(f"{time.perf_counter() - started:.3f} {error.problem}")
else:
    print("read")
"""


@pytest.mark.parametrize("row", [1048576, 2000])
@pytest.mark.parametrize("reader", ["head", "table"])
def test_a_far_cell_is_refused_fast_without_allocating_its_grid(
    tmp_path: Path, row: int, reader: str
) -> None:
    path = far_cell_workbook(tmp_path / "far.xlsx", row)
    assert path.stat().st_size < 10_000
    measured = run_measured(_READ, str(path), reader)
    assert measured.code == 0, measured.stderr  # no abort of the compiled reader
    seconds, problem = measured.stdout.strip().split(" ", 1)
    assert f"16,384 columns × {row:,} rows" in problem and "(POSTFLOWS_TABLE_MAX_CELLS)" in problem
    assert measured.peak_mib < 500, measured
    assert float(seconds) < 10  # a guard only: 18 s and 1.5 GB at row 2000 before


def test_a_200_mb_line_is_refused_with_little_memory(tmp_path: Path) -> None:
    path = tmp_path / "one-line.csv"
    with path.open("wb") as handle:
        handle.write(b"Name,Prename,Streetname,HouseNo,ZIPCode,TownName\n")
        block = b"x" * (1 << 20)
        for _ in range(200):
            handle.write(block)
        handle.write(b"\n")
    for reader in ("head", "table"):
        measured = run_measured(_READ, str(path), reader)
        assert measured.code == 0, measured.stderr
        assert "line 2 is longer than the limit of 1,048,576 bytes per line" in measured.stdout
        assert measured.peak_mib < 300, measured
