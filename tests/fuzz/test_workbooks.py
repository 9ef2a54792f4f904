"""Fuzzing the workbook reader (``read_table`` and ``read_head`` on .xlsx/.xlsm): real workbooks built once
and varied by editing their XML, archives that are something else, damaged archives and random bytes. A
workbook must read back cell for cell; anything else must be refused naming the file.

Building and reading a real workbook takes milliseconds, so a few hundred of the cases are real
workbooks read in full and the rest are the cheap variations that a reader refuses early.
"""

from __future__ import annotations

import datetime as dt
import io
import random
import re
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import openpyxl
from hypothesis import given
from hypothesis import strategies as st
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

from fileio.errors import InputError
from fileio.tables import Table, read_head, read_table
from tests.fuzz.conftest import CaseCount, fuzz_settings
from tests.fuzz.generators import ADDRESS_HEADERS, cell, damage, header_row, randoms, row_count
from tests.fuzz.oracles import check_refusal, check_table_invariants, frame_values

BASE_WORKBOOKS = 24
# What a reader must refuse early: other ZIP documents, and the member names that make them what they are.
_OTHER_ARCHIVES = (
    {"word/document.xml": b"<w/>"},
    {"xl/workbook.bin": b"\x00"},
    {"ppt/presentation.xml": b"<p/>"},
    {"mimetype": b"application/vnd.oasis.opendocument.spreadsheet", "content.xml": b"<o/>"},
    {"readme.txt": b"hello"},
    {},
)


@dataclass(frozen=True)
class Workbook:
    """A workbook's bytes and, for one whose sheet is intact, the rows it holds as the reader gives them
    (the header first)."""

    data: bytes
    rows: list[list[str]] | None


@cache
def base_workbooks() -> tuple[Workbook, ...]:
    """Real workbooks made once per run from a fixed seed: headers and cells of every kind, text that looks
    like a formula (stored as text), numbers, dates, booleans and empty cells."""
    rnd = random.Random(20240610)
    return tuple(_workbook(rnd) for _ in range(BASE_WORKBOOKS))


def _workbook(rnd: random.Random) -> Workbook:
    book = openpyxl.Workbook()
    sheet = book.active
    header = [_text(name) for name in header_row(rnd, ADDRESS_HEADERS, required=ADDRESS_HEADERS[:6])]
    rows: list[list[str]] = [header]
    sheet.append(header)
    for _ in range(row_count(rnd)):
        values = [_value(rnd) for _ in header]
        sheet.append([value for value, _ in values])
        for position, (value, _) in enumerate(values, start=1):
            if isinstance(value, str):  # text, not a formula ("=1") nor an error ("#REF!")
                sheet.cell(sheet.max_row, position).data_type = "s"
        rows.append([text for _, text in values])
    buffer = io.BytesIO()
    book.save(buffer)
    return Workbook(buffer.getvalue(), rows)


def _text(value: str) -> str:
    """A cell's text as a workbook can hold it: no XML-illegal control characters, at most 32,767 long."""
    return ILLEGAL_CHARACTERS_RE.sub("", value)[:32767]


def _value(rnd: random.Random) -> tuple[object, str]:
    """A cell value and its text as the reader gives it (every cell as text; an empty cell as "")."""
    roll = rnd.random()
    if roll < 0.08:
        number = rnd.choice((0, 7, 3000, -5, 10**15))
        return number, str(number)
    if roll < 0.12:
        return 2.5, "2.5"
    if roll < 0.14:
        return True, "True"
    if roll < 0.16:
        return dt.datetime(2030, 1, 31), "2030-01-31 00:00:00"
    if roll < 0.22:
        return None, ""
    text = _text(cell(rnd))
    return (text, _as_excel_reads(text)) if text else (None, "")


_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")


def _as_excel_reads(text: str) -> str:
    """Text as Excel reads it from openpyxl's XML: openpyxl marks no text that is nothing but white space
    as spaced (xml:space), so its ends are trimmed; ``_xHHHH_`` is an escape."""
    if not text.strip():
        text = text.replace("\r\n", "\n").replace("\r", "\n").strip(" \t\n")
    return _ESCAPE.sub(lambda match: chr(int(match.group(1), 16)), text)


class WorkbookCase:
    """A file named like a workbook (shown by its name, kind and size when a case fails)."""

    def __init__(self, name: str, kind: str, data: bytes, rows: list[list[str]] | None = None) -> None:
        self.name, self.kind, self.data, self.rows = name, kind, data, rows

    def __repr__(self) -> str:
        return f"WorkbookCase({self.name!r}, {self.kind!r}, {len(self.data)} bytes, rows={self.rows!r})"


@st.composite
def workbook_cases(draw: st.DrawFn) -> WorkbookCase:
    """A file named like a workbook: the name, its bytes and, for a real workbook, its rows."""
    rnd: random.Random = draw(randoms)
    name = "input" + rnd.choice((".xlsx", ".xlsx", ".xlsm", ".XLSX"))
    kind = rnd.randrange(100)  # the seeded generator spreads the kinds evenly; hypothesis favours 0
    base = rnd.choice(base_workbooks())
    if kind < 3:
        return WorkbookCase(name, "real", base.data, base.rows)
    if kind < 5:
        return WorkbookCase(name, "edited XML", _edited(rnd, base.data))
    if kind < 8:
        return WorkbookCase(name, "damaged", damage(rnd, base.data, rnd.randrange(1, 4)))
    if kind < 38:
        return WorkbookCase(name, "other archive", _archive(rnd.choice(_OTHER_ARCHIVES)))
    if kind < 53:
        return WorkbookCase(
            rnd.choice(("input.xls", "input.xlsb", "input.ods", "input.json")), "named", base.data
        )
    if kind < 78:
        return WorkbookCase(name, "random bytes", draw(st.binary(max_size=200)))
    start = rnd.choice((b"PK\x03\x04", b"PK\x05\x06", b"Name;Ort\n", b"\xd0\xcf\x11\xe0"))
    return WorkbookCase(name, "magic and bytes", start + draw(st.binary(max_size=100)))


def _archive(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, content in members.items():
            archive.writestr(member, content)
    return buffer.getvalue()


_LINE_BREAK = re.compile(r"\r\n|\r")
_CELL_TEXT = re.compile(rb"<t>[^<]*</t>|<v>[^<]*</v>")


def _edited(rnd: random.Random, data: bytes) -> bytes:
    """A real workbook with its XML edited: a cell's text replaced, a member damaged or left out."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    target = rnd.choice([name for name in members if name.endswith(".xml")])
    action = rnd.randrange(3)
    if action == 0:
        found = list(_CELL_TEXT.finditer(members[target]))
        if found:
            hit = rnd.choice(found)
            replacement = rnd.choice(
                (b"<t>=1+1</t>", b"<v>x</v>", b"<t>", b"<v>1e999</v>", b"<t>&bogus;</t>")
            )
            members[target] = members[target][: hit.start()] + replacement + members[target][hit.end() :]
    elif action == 1:
        members[target] = damage(rnd, members[target], rnd.randrange(1, 4))
    else:
        del members[target]
    return _archive(members)


def test_workbooks_read_back_or_are_refused_by_name(scratch: Path) -> None:
    cases = CaseCount("read_table + read_head: workbooks (.xlsx .xlsm)")
    full_reads = CaseCount("  of them real workbooks read in full")

    @fuzz_settings(10_000)
    @given(case=workbook_cases())
    def check(case: WorkbookCase) -> None:
        path = scratch / case.name
        path.write_bytes(case.data)
        rows = case.rows
        cases.add()
        try:
            head = read_head(path)
        except InputError as error:
            check_refusal(error, path)
            assert rows is None, f"a real workbook refused: {error}"
            return
        try:
            table = read_table(path)
        except InputError as error:
            check_refusal(error, path)
            assert rows is None, f"a real workbook refused: {error}"
            return
        full_reads.add()
        assert isinstance(table, Table)
        check_table_invariants(table, None)
        columns = list(table.frame.columns)
        assert [header for header in head.headers if header in set(columns)] == columns
        if rows is not None:
            _check_rows(table, rows)

    check()
    cases.require(10_000)
    full_reads.require(300)


def _check_rows(table: Table, rows: list[list[str]]) -> None:
    """The data rows of a real workbook, cell for cell (blank trailing rows are no rows of a sheet)."""
    header, data = rows[0], rows[1:]
    while data and not any(data[-1]):
        data.pop()
    kept = [
        position
        for position, name in enumerate(header)
        if name.strip()
        and not name.strip().startswith("Unnamed: ")
        or any(row[position].strip() for row in data)
    ]
    # XML reads every line break as "\n".
    expected = [[_LINE_BREAK.sub("\n", row[position]) for position in kept] for row in data]
    assert frame_values(table.frame) == expected
