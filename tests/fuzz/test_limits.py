"""Fuzzing the limits on a table file's shape: text tables, result files and worksheets of every shape, read
under small limits drawn around their own shape. A file over a limit ends in the typed refusal naming a
limit it is over (never another, never a crash), a file within them is never refused for a limit, and the
refusals of files far over the default limits take little memory.
"""

from __future__ import annotations

import io
import random
import re
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import openpyxl
import pytest
from hypothesis import given

from fileio.address_service.result_file import read_result_file
from fileio.errors import InputError, ResultUnreadable
from fileio.limits import (
    TABLE_MAX_CELLS_SETTING,
    TABLE_MAX_COLUMNS_SETTING,
    TABLE_MAX_LINE_BYTES_SETTING,
    TABLE_MAX_ROWS_SETTING,
    TableLimits,
)
from fileio.tables import read_head, read_table
from tests.fuzz.conftest import CaseCount, fuzz_settings
from tests.fuzz.generators import (
    ADDRESS_HEADERS,
    DELIMITERS,
    ENCODINGS,
    NEWLINES,
    TextTable,
    cell,
    header_row,
    randoms,
    row_count,
    text_table,
)
from tests.fuzz.oracles import check_refusal, may_refuse
from tests.peak_memory import run_measured

SETTINGS = (
    TABLE_MAX_COLUMNS_SETTING,
    TABLE_MAX_LINE_BYTES_SETTING,
    TABLE_MAX_CELLS_SETTING,
    TABLE_MAX_ROWS_SETTING,
)
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def _named(problem: str) -> set[str]:
    return {setting for setting in SETTINGS if setting in problem}


def _near(rnd: random.Random, value: int) -> int:
    """A limit around ``value``: below, at or above it (never below 1)."""
    return max(1, value + rnd.choice((-3, -1, -1, 0, 0, 1, 2, 10)))


def _measured_lines(data: bytes, encoding: str) -> list[bytes]:
    """The lines as the limits measure them: a file's own bytes, UTF-16 as its text in UTF-8."""
    if encoding == "utf-16":
        data = data.decode("utf-16").encode("utf-8")
    lines = _LINE_BREAK.split(data)
    return lines[:-1] if lines and not lines[-1] else lines


def _check(crossed: set[str], problem: str | None) -> None:
    """Over a limit: refused, naming one of the limits crossed and no other. Within them: no refusal
    names a limit."""
    named = _named(problem or "")
    if crossed:
        assert problem is not None, f"over {crossed} but read"
        assert named and named <= crossed, f"named {named}, crossed {crossed}: {problem}"
    else:
        assert not named, f"within the limits, refused for one: {problem}"


def _table_limits(rnd: random.Random, table: TextTable, lines: list[bytes]) -> TableLimits:
    widths = [len(table.header), *(len(record) for record in table.records)]
    return TableLimits(
        max_columns=_near(rnd, max(widths)),
        max_line_bytes=_near(rnd, max(len(line) for line in lines)),
        max_rows=max(0, _near(rnd, len(table.records)) - 1),
    )


def test_text_tables_over_a_limit_are_refused_naming_it(scratch: Path) -> None:
    cases = CaseCount("limits: delimited text under small limits")
    refused = CaseCount("  of them tables refused for a limit")

    @fuzz_settings(3_000)
    @given(rnd=randoms)
    def check(rnd: random.Random) -> None:
        headers = header_row(rnd, ADDRESS_HEADERS, required=ADDRESS_HEADERS[:6])
        headers += [f"x{number}" for number in range(rnd.choice((0, 0, 3, 12)))]
        table = text_table(
            rnd,
            headers,
            row_count(rnd),
            delimiter=rnd.choice(DELIMITERS),
            encoding=rnd.choice(ENCODINGS),
            newline=rnd.choice(NEWLINES),
            ragged=rnd.random() < 0.5,
        )
        lines = _measured_lines(table.data, table.encoding)
        limits = _table_limits(rnd, table, lines)
        crossed = set()
        if max(len(line) for line in lines) > limits.max_line_bytes:
            crossed.add(TABLE_MAX_LINE_BYTES_SETTING)
        if max([len(table.header), *(len(record) for record in table.records)]) > limits.max_columns:
            crossed.add(TABLE_MAX_COLUMNS_SETTING)
        if len(table.records) > limits.max_rows:
            crossed.add(TABLE_MAX_ROWS_SETTING)
        path = scratch / "limits.csv"
        path.write_bytes(table.data)
        cases.add()
        # Read as written: a delimiter sniffed otherwise would count other fields (other fuzz tests read so).
        try:
            read_table(path, delimiter=table.delimiter, encoding=table.encoding, limits=limits)
        except InputError as error:
            check_refusal(error, path)
            named = _named(error.problem)
            if named:
                refused.add()
                assert named <= crossed, f"named {named}, crossed {crossed}: {error}"
            else:  # only a refusal the table may get anyway can come before the limits
                assert may_refuse(table, error, detected=False), f"well-formed table refused: {error}"
        else:
            assert not crossed, f"over {crossed} but read"
        try:
            read_head(path, delimiter=table.delimiter, encoding=table.encoding, limits=limits)
        except InputError as error:
            assert _named(error.problem) <= crossed, f"read_head named a limit not crossed: {error}"

    check()
    cases.require(3_000)
    refused.require(500)


def test_result_files_over_a_limit_are_unreadable_naming_it(scratch: Path) -> None:
    cases = CaseCount("limits: result files under small limits")
    refused = CaseCount("  of them unreadable")

    @fuzz_settings(3_000)
    @given(rnd=randoms)
    def check(rnd: random.Random) -> None:
        encoding = rnd.choice(("cp1252", "utf-8", "utf-8-sig"))
        width = rnd.choice((1, 2, 4, 9))
        lines = ["\t".join(["RecordId", *(f"F{number}" for number in range(width - 1))])]
        for number in range(1, rnd.choice((0, 1, 3, 8, 20)) + 1):
            fields = [str(number), *(_one_line(cell(rnd)) for _ in range(width - 1))]
            if rnd.random() < 0.2:  # ragged: shorter, or wider than the header
                fields = fields[: rnd.randrange(1, width + 1)] + [""] * rnd.choice((0, 0, 1, 5, 40))
            lines.append("\t".join(fields))
        data = (rnd.choice(("\r\n", "\n")).join(lines) + "\r\n").encode(encoding, errors="replace")
        if encoding == "utf-8-sig":
            data = b"\xef\xbb\xbf" + data
        written = _measured_lines(data, encoding)
        widest = max(line.count(b"\t") + 1 for line in written)
        longest = max(len(line) for line in written)
        limits = TableLimits(
            max_columns=_near(rnd, widest),
            max_line_bytes=_near(rnd, longest),
            max_rows=max(0, _near(rnd, len(written) - 1) - 1),
        )
        crossed = {
            setting
            for setting, over in (
                (TABLE_MAX_COLUMNS_SETTING, widest > limits.max_columns),
                (TABLE_MAX_LINE_BYTES_SETTING, longest > limits.max_line_bytes),
                (TABLE_MAX_ROWS_SETTING, len(written) - 1 > limits.max_rows),
            )
            if over
        }
        path = scratch / "result.txt"
        path.write_bytes(data)
        cases.add()
        try:
            frame = read_result_file(path, limits=limits)
        except ResultUnreadable as error:
            refused.add()
            assert (
                error.path == path
                and error.setting in crossed
                and error.limit == limits.value_of(error.setting)
            )
            _check(crossed, error.problem)
        else:
            _check(crossed, None)
            assert len(frame) == len(written) - 1

    check()
    cases.require(3_000)
    refused.require(500)


def _one_line(value: str) -> str:
    return "".join(" " if char in "\t\r\n" else char for char in value)


@cache
def _workbook_members() -> dict[str, bytes]:
    book = openpyxl.Workbook()
    buffer = io.BytesIO()
    book.save(buffer)
    with zipfile.ZipFile(buffer) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _column_letters(number: int) -> str:
    letters = ""
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


@dataclass(frozen=True)
class SheetCase:
    """A worksheet's XML and where its cells are, placed as the reader places them."""

    xml: bytes
    rows: int
    columns: int
    declared: tuple[int, int] | None

    def __repr__(self) -> str:
        shape = f"{self.rows} rows, {self.columns} columns, declared={self.declared}"
        return f"SheetCase({shape}, {self.xml[:300]!r})"


def _sheet(rnd: random.Random) -> SheetCase:
    """Rows and cells written as writers write them (a reference or none, other attributes first, single
    quotes, a namespace prefix, lower case, empty cells), and now and then a far one."""
    parts: list[str] = []
    row_index = 0  # the reader's position for what has no reference (0-based)
    rows = columns = 0
    for number in range(rnd.choice((1, 1, 2, 3, 6))):
        if number == 0 or rnd.random() < 0.7:
            row_index += rnd.choice((0, 0, 0, 1, 5))
            if rnd.random() < 0.05:
                row_index = rnd.randrange(0, 1_048_576)
            row_open = f'<row r="{row_index + 1}">'
        else:
            row_open = "<row>"
        parts.append(row_open)
        column_index = 0
        for _ in range(rnd.choice((1, 2, 3, 5, 8))):
            if rnd.random() < 0.75:
                column_index += rnd.choice((0, 0, 0, 1, 3))
                if rnd.random() < 0.05:
                    column_index = rnd.randrange(0, 16_384)
                reference = f"{_column_letters(column_index + 1)}{row_index + 1}"
                if rnd.random() < 0.1:
                    reference = reference.lower()
                attributes = rnd.choice(
                    (
                        f'r="{reference}"',
                        f'r="{reference}" t="n"',
                        f's="0" r="{reference}"',
                        f"r='{reference}'",
                    )
                )
            else:
                attributes = 't="n"'
            name = "x:c" if rnd.random() < 0.05 else "c"
            parts.append(rnd.choice((f"<{name} {attributes}><v>1</v></{name}>", f"<{name} {attributes}/>")))
            rows, columns = max(rows, row_index + 1), max(columns, column_index + 1)
            column_index += 1
        parts.append("</row>")
        row_index += 1
    declared = None
    dimension = ""
    if rnd.random() < 0.6:
        declared = rnd.choice(
            ((rows, columns), (rows, columns), (1, 1), (rnd.randrange(1, 10**6), rnd.randrange(1, 16385)))
        )
        dimension = f'<dimension ref="A1:{_column_letters(declared[1])}{declared[0]}"/>'
    xml = (
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        f"{dimension}<sheetData>{''.join(parts)}</sheetData></worksheet>"
    ).encode()
    return SheetCase(xml, rows, columns, declared)


@pytest.mark.long
def test_worksheets_over_a_limit_are_refused_naming_it(scratch: Path) -> None:
    cases = CaseCount("limits: worksheets under small limits")
    refused = CaseCount("  of them worksheets refused for a limit")

    @fuzz_settings(2_000)
    @given(rnd=randoms)
    def check(rnd: random.Random) -> None:
        sheet = _sheet(rnd)
        limits = TableLimits(
            max_columns=_near(rnd, sheet.columns),
            max_rows=max(0, _near(rnd, sheet.rows) - 1),
            # Never more than a small grid: a far cell within the limits would be built, and a frame of
            # thousands of columns takes a tenth of a second to build (the refusals are what is tested here).
            max_cells=min(_near(rnd, sheet.rows * sheet.columns), 5_000),
        )
        crossed = set()
        if sheet.declared is not None and sheet.declared[0] * sheet.declared[1] > limits.max_cells:
            crossed.add(TABLE_MAX_CELLS_SETTING)
        if sheet.rows * sheet.columns > limits.max_cells:
            crossed.add(TABLE_MAX_CELLS_SETTING)
        if sheet.rows - 1 > limits.max_rows:
            crossed.add(TABLE_MAX_ROWS_SETTING)
        if sheet.columns > limits.max_columns:
            crossed.add(TABLE_MAX_COLUMNS_SETTING)
        path = scratch / "limits.xlsx"
        with zipfile.ZipFile(path, "w") as archive:
            for name, content in _workbook_members().items():
                archive.writestr(name, sheet.xml if name == "xl/worksheets/sheet1.xml" else content)
        cases.add()
        for read in (read_head, read_table):
            try:
                read(path, limits=limits)
            except InputError as error:
                check_refusal(error, path)
                if _named(error.problem) and read is read_table:
                    refused.add()
                _check(crossed, error.problem)
            else:
                _check(crossed, None)

    check()
    cases.require(2_000)
    refused.require(300)


_REFUSE_ALL = """
import sys
from pathlib import Path
from fileio.address_service.result_file import read_result_file
from fileio.errors import InputError
from fileio.tables import read_table
refused = 0
for path in sorted(Path(sys.argv[1]).iterdir()):
    try:
        (read_result_file if path.suffix == ".txt" else read_table)(path)
    except InputError as error:
        refused += any(name in error.problem for name in sys.argv[2:])
print(refused)
"""


def test_files_far_over_the_default_limits_are_refused_with_little_memory(tmp_path: Path) -> None:
    """Far cells, rows of tens of thousands of fields, lines of tens of megabytes: every one refused for a
    limit by one process whose peak memory stays small."""
    rnd = random.Random(20240611)
    folder = tmp_path / "over"
    folder.mkdir()
    members = _workbook_members()
    count = 0
    for number in range(12):
        row, column = rnd.randrange(2_000, 1_048_577), rnd.randrange(1_000, 16_385)
        reference = f"{_column_letters(column)}{row}"
        dimension = f'<dimension ref="A1:{reference}"/>' if number % 2 else ""
        xml = (
            '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            f'{dimension}<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c></row>'
            f'<row r="{row}"><c r="{reference}"><v>1</v></c></row></sheetData></worksheet>'
        ).encode()
        with zipfile.ZipFile(folder / f"far-{number}.xlsx", "w") as archive:
            for name, content in members.items():
                archive.writestr(name, xml if name == "xl/worksheets/sheet1.xml" else content)
        count += 1
    for number in range(6):
        tabs = rnd.choice((5_000, 100_000, 300_000))
        body = "".join(f"{line}\t1\r\n" for line in range(1, rnd.randrange(10, 2000)))
        (folder / f"wide-{number}.txt").write_bytes(f"RecordId\tQSTAT\r\n{body}{chr(9) * tabs}\r\n".encode())
        count += 1
    for number in range(4):
        with (folder / f"long-{number}.csv").open("wb") as handle:
            handle.write(b"Name,Ort\n")
            for _ in range(rnd.choice((5, 30, 60))):
                handle.write(b"x" * (1 << 20))
            handle.write(b"\n")
        count += 1
    measured = run_measured(_REFUSE_ALL, str(folder), *SETTINGS, timeout=300)
    assert measured.code == 0, measured.stderr
    assert int(measured.stdout.strip()) == count
    assert measured.peak_mib < 500, measured
