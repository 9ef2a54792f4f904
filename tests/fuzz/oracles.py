"""What a reader must do with a fuzz case, said independently of the reader's code: the rows a well-formed
table reads back as, and what every refusal must look like."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from fileio.errors import InputError
from fileio.line_accounting import MAX_QUOTED_LINES
from fileio.tables import Table
from tests.fuzz.generators import TextTable

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def check_refusal(error: InputError, path: Path) -> None:
    """A refusal names the file, says what is wrong, and names a row or line by a number that exists."""
    assert error.path == path, error
    assert str(error).startswith(str(path)), error
    assert error.problem.strip(), error
    assert error.row is None or error.row >= 1, error
    assert "Traceback" not in str(error)


def may_refuse(table: TextTable, error: InputError, *, detected: bool) -> bool:
    """Whether a well-formed table may be refused all the same: a quoted cell over more than
    :data:`MAX_QUOTED_LINES` lines, or one holding a line as long as a whole record (both read like a quote
    that was never closed); a header that names two columns; NUL bytes read as a binary file; nothing but
    blanks. With the encoding detected, bytes that do not decode in the encoding found (a Windows-1252 file
    with a byte it leaves undefined, a header in another encoding than the rest) are refused too."""
    problem = error.problem
    names = [name.strip() or f"Unnamed: {position}" for position, name in enumerate(table.header, start=1)]
    if "give each column its own name" in problem and len(set(names)) < len(names):
        return True  # a header naming two columns is refused, naming them
    if ("NUL bytes" in problem or "UTF-32" in problem) and "\x00" in "".join(
        sum(table.records, table.header)
    ):
        return True
    if "file is empty" in problem and not "".join(sum(table.records, table.header)).strip():
        return True
    if detected and ("cannot be decoded" in problem or "(the header)" in problem):
        return True
    width = len(table.header)
    for record in table.records:
        for value in record:
            parts = _LINE_BREAK.split(value)
            if len(parts) > MAX_QUOTED_LINES:
                return True
            if width >= 3 and any(part.count(table.delimiter) >= width - 1 for part in parts[1:]):
                return True
    return False


def expected_rows(table: TextTable) -> tuple[list[list[str]], set[int]]:
    """Each record as the reader returns it (line breaks as ``\\n``, padded or cut to the header's width;
    a record with values beyond the header emptied) and the numbers of those malformed records."""
    width = len(table.header)
    rows: list[list[str]] = []
    malformed: set[int] = set()
    for number, record in enumerate(table.records, start=1):
        values = [_LINE_BREAK.sub("\n", value) for value in record]
        if len(values) > width and any(value.strip() for value in values[width:]):
            malformed.add(number)
            values = []
        rows.append((values + [""] * width)[:width])
    return rows, malformed


def kept_columns(table: TextTable, rows: list[list[str]]) -> list[int]:
    """Positions of the header the reader keeps: all but unnamed columns without a value."""
    kept = []
    for position, name in enumerate(table.header):
        unnamed = not name.strip() or name.strip().startswith("Unnamed: ")
        if not unnamed or any(row[position].strip() for row in rows):
            kept.append(position)
    return kept


def check_table_invariants(table: Table, physical_lines: int | None) -> None:
    """Rows numbered from 1, malformed rows among them and emptied, lines rising within the file."""
    frame = table.frame
    assert list(frame.index) == list(range(1, len(frame) + 1))
    assert len(set(frame.columns)) == len(frame.columns), f"repeated column names {list(frame.columns)}"
    for row, problem in table.malformed:
        assert 1 <= row <= len(frame) and problem.strip()
        assert not frame.loc[row].fillna("").astype(str).str.strip().any(), "a malformed row kept values"
    if table.lines is not None and len(table.lines):
        lines = [int(line) for line in table.lines]
        assert lines == sorted(set(lines)) and lines[0] >= 1
        if physical_lines is not None:
            assert lines[-1] <= physical_lines


def physical_lines(text: str) -> int:
    """Lines of a text, ended by ``\\n``, ``\\r\\n`` or ``\\r``; a last line without an ending counts."""
    count = len(_LINE_BREAK.findall(text))
    return count + (0 if text.endswith(("\n", "\r")) else 1)


def frame_values(frame: pd.DataFrame) -> list[list[str]]:
    """A frame's cells as strings, an empty cell as ``""``."""
    return frame.fillna("").astype(str).to_numpy().tolist()
