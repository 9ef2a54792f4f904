"""Fuzzing the text table readers (``read_table`` and ``read_head``): delimited .csv/.tsv/.txt/.dat files in
every encoding the project reads, fixed-width files; well-formed tables must read back record for record,
and damaged or random bytes must end in a refusal that names the file (and the line, where there is one).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fileio.errors import InputError
from fileio.tables import Table, read_head, read_table
from tests.fuzz.conftest import CaseCount, fuzz_settings
from tests.fuzz.generators import (
    ADDRESS_HEADERS,
    COMMERCE_HEADERS,
    DELIMITERS,
    ENCODINGS,
    NEWLINES,
    TextTable,
    cell,
    damage,
    header_row,
    randoms,
    row_count,
    text_table,
)
from tests.fuzz.oracles import (
    check_refusal,
    check_table_invariants,
    expected_rows,
    frame_values,
    kept_columns,
    may_refuse,
    physical_lines,
)

# Encodings a user may name with --encoding besides those detected, and names that are no text encoding.
GIVEN_ENCODINGS = (*ENCODINGS, "utf-16-le", "ascii", "utf-7", "punycode", "rot13", "no-such-codec", "")
TEXT_SUFFIXES = (".csv", ".tsv", ".txt", ".dat", ".CSV")


@dataclass(frozen=True)
class TextCase:
    """One file for the text readers: its bytes, how it is read, and the table it holds when well-formed
    (``exact``: read with the delimiter and encoding it was written with)."""

    name: str
    data: bytes
    delimiter: str | None = None
    encoding: str | None = None
    table: TextTable | None = None
    exact: bool = False


@st.composite
def text_cases(draw: st.DrawFn) -> TextCase:
    rnd: random.Random = draw(randoms)
    name = "input" + rnd.choice(TEXT_SUFFIXES)
    kind = rnd.randrange(10)  # the seeded generator spreads the kinds evenly; hypothesis favours 0
    if kind == 0:
        return TextCase(name, draw(st.binary(max_size=300)))
    if kind == 1:
        text = draw(st.text(max_size=120))
        return TextCase(name, text.encode(rnd.choice(ENCODINGS), errors="replace"))
    table = text_table(
        rnd,
        header_row(rnd, (*ADDRESS_HEADERS, *COMMERCE_HEADERS), required=ADDRESS_HEADERS[:6]),
        row_count(rnd),
        delimiter=rnd.choice(DELIMITERS),
        encoding=rnd.choice(ENCODINGS),
        newline=rnd.choice(NEWLINES),
        ragged=rnd.random() < 0.3,
    )
    if kind <= 4:
        data = damage(rnd, table.data, rnd.randrange(1, 5))
        encoding = rnd.choice((None, None, None, *GIVEN_ENCODINGS))
        return TextCase(name, data, rnd.choice((None, *DELIMITERS)), encoding)
    if kind <= 6:
        return TextCase(name, table.data, table=table)
    return TextCase(name, table.data, table.delimiter, table.encoding, table, exact=True)


def test_delimited_text_reads_back_or_is_refused_by_name(scratch: Path) -> None:
    cases = CaseCount("read_table: delimited text (.csv .tsv .txt .dat)")
    heads = CaseCount("read_head: delimited text (.csv .tsv .txt .dat)")

    @fuzz_settings(10_000)
    @given(case=text_cases())
    def check(case: TextCase) -> None:
        path = scratch / case.name
        path.write_bytes(case.data)
        head, head_error = _read(lambda: read_head(path, delimiter=case.delimiter, encoding=case.encoding))
        heads.add()
        table, error = _read(lambda: read_table(path, delimiter=case.delimiter, encoding=case.encoding))
        cases.add()
        if error is not None:
            check_refusal(error, path)
            if case.table is not None:
                detected = not case.exact
                assert may_refuse(case.table, error, detected=detected), f"well-formed table refused: {error}"
            return
        assert isinstance(table, Table)
        assert head_error is None, f"read_head refused what read_table reads: {head_error}"
        assert head is not None
        columns = list(table.frame.columns)
        assert [name for name in head.headers if name in set(columns)] == columns
        if any(isinstance(value, str) and value.strip() for value in table.frame.to_numpy().ravel()):
            assert head.has_rows
        text = case.data.decode(table.encoding or "utf-8", errors="replace")
        check_table_invariants(table, physical_lines(text))
        if case.table is not None:
            _check_records(table, case.table, exact=case.exact)

    check()
    cases.require(10_000)
    heads.require(10_000)


def _check_records(table: Table, written: TextTable, *, exact: bool) -> None:
    """Every record written is a row, none more, when the reader splits at the delimiter written (a header
    of one column shows none); read as written, the values and rejections are exact."""
    if table.delimiter != written.delimiter:
        return
    assert len(table.frame) == len(written.records), "rows lost or made up"
    if not exact:
        return
    rows, malformed = expected_rows(written)
    kept = kept_columns(written, rows)
    assert frame_values(table.frame) == [[row[position] for position in kept] for row in rows]
    assert {row for row, _ in table.malformed} == malformed


def _read(call):  # type: ignore[no-untyped-def]
    """The reader's result, or the typed refusal; any other exception fails the case."""
    try:
        return call(), None
    except InputError as error:
        return None, error


@dataclass(frozen=True)
class FixedWidthCase:
    """A fixed-width file: its widths, bytes and encoding, and the records when its lines were written to
    the widths (``header``: a first line repeating the names)."""

    widths: list[tuple[str, int]]
    data: bytes
    encoding: str
    records: list[list[str]] | None = None
    header: bool = False
    given: bool = False


@st.composite
def fixed_width_cases(draw: st.DrawFn) -> FixedWidthCase:
    rnd: random.Random = draw(randoms)
    names = rnd.sample(ADDRESS_HEADERS[:12], rnd.randrange(1, 7))
    widths = [(name, rnd.randrange(1, 13)) for name in names]
    encoding = rnd.choice(ENCODINGS)
    kind = rnd.randrange(5)  # the seeded generator spreads the kinds evenly; hypothesis favours 0
    if kind == 0:
        return FixedWidthCase(widths, draw(st.binary(max_size=200)), encoding)
    records = [[_fit(cell(rnd), width) for _, width in widths] for _ in range(row_count(rnd))]
    records = [
        [value.encode(encoding, errors="replace").decode(encoding) for value in record] for record in records
    ]
    if records and records[0][0].startswith("\ufeff"):  # at the start of a file, that is a byte-order mark
        records[0][0] = " " + records[0][0][1:]
    header = rnd.random() < 0.5
    if header and any(len(name) > width for name, width in widths):
        header = False  # names cut to their widths are no header the reader can know: a data row
        records.insert(0, [_fit(name, width) for name, width in widths])
    lines = [_fixed_line(record, widths) for record in records]
    if header:
        lines.insert(0, _fixed_line(names, widths))
    newline = rnd.choice(NEWLINES)
    data = (newline.join(lines) + rnd.choice(("", newline))).encode(encoding, errors="replace")
    if kind == 1:
        return FixedWidthCase(widths, damage(rnd, data, rnd.randrange(1, 4)), encoding)
    return FixedWidthCase(widths, data, encoding, records, header, given=kind >= 3)


def _fit(value: str, width: int) -> str:
    """A value as a fixed-width export writes it: on one line, cut to ``width`` characters."""
    return "".join(" " if char in _LINE_ENDS else char for char in value)[:width]


def _fixed_line(values: list[str], widths: list[tuple[str, int]]) -> str:
    return "".join(value[:width].ljust(width) for value, (_, width) in zip(values, widths, strict=True))


_LINE_ENDS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def test_fixed_width_text_reads_back_or_is_refused_by_name(scratch: Path) -> None:
    cases = CaseCount("read_table: fixed width (.txt)")

    @fuzz_settings(10_000)
    @given(case=fixed_width_cases())
    def check(case: FixedWidthCase) -> None:
        path = scratch / "input.txt"
        path.write_bytes(case.data)
        encoding = case.encoding if case.given else None
        table, error = _read(lambda: read_table(path, fixed_widths=case.widths, encoding=encoding))
        cases.add()
        if error is not None:
            check_refusal(error, path)
            if case.records is not None:
                assert _may_refuse_fixed(case, error), f"well-formed file refused: {error}"
            return
        assert isinstance(table, Table)
        assert list(table.frame.columns) == [name for name, _ in case.widths]
        check_table_invariants(table, None)
        if case.records is not None:
            assert len(table.frame) == len(case.records), "rows lost or made up"
        if case.records is not None and case.given:  # detected, "ß\xa0" is UTF-8 for U+07E0: one character
            assert frame_values(table.frame) == [
                [value.strip(" \t") for value in record] for record in case.records
            ]

    check()
    cases.require(10_000)


def _may_refuse_fixed(case: FixedWidthCase, error: InputError) -> bool:
    """A well-formed fixed-width file is refused only for NUL bytes or for holding nothing but blanks."""
    values = "".join(sum(case.records or [], []))
    if ("NUL bytes" in error.problem or "UTF-32" in error.problem) and "\x00" in values:
        return True  # a UTF-16 file starting with NUL starts like UTF-32
    if not case.given and "cannot be decoded" in error.problem:
        return True  # a Windows-1252 byte the encoding leaves undefined
    return "file is empty" in error.problem and not (values.strip() or case.header)
