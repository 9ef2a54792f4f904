"""Accounting for every line of a delimited text table: where each row starts, the line breaks inside its
quoted cells, and the refusal of a quote that swallows rows or of lines that do not add up to the rows.

A quoted cell may hold line breaks (a note with several lines), but one that runs over more than
:data:`MAX_QUOTED_LINES` lines, or holds a line with as many delimiters as a whole record, is a quote
opened and never closed (or closed by a stray quote rows later).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.errors import InputError
from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

MAX_QUOTED_LINES = 10
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_QUOTE = '"'


def universal_newlines(text: str) -> str:
    """``\\r\\n`` and ``\\r`` as ``\\n``, as Python's text files read them (a line break inside a quoted cell
    included); the lines stay the same lines."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def physical_lines(text: str) -> int:
    """Lines of a text with universal newlines (see :func:`universal_newlines`); a last line without an
    ending counts."""
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def row_start_lines(
    path: Path,
    text: str,
    header: Sequence[str],
    frame: pd.DataFrame,
    delimiter: str,
    *,
    unclosed: bool,
    originals: dict[int, list[str]] | None = None,
) -> np.ndarray:
    """The physical line where each row starts, after checking that quoted cells swallowed no rows and
    that the file's lines add up to its rows. ``originals`` holds, by position, rows as they were read
    before they were cut to the header or emptied: their cells are the ones that count.

    Raises:
        InputError: a quote is never closed, a quoted cell runs over too many lines or holds whole
            records, or the lines do not add up.
    """
    header_lines = 1 + sum(_breaks(cell) for cell in header)
    total_lines = physical_lines(text)
    data_lines = total_lines - header_lines
    # As many rows as lines: no row spans two lines, so no cell holds a line break (the usual case, and
    # the only cheap one: finding line breaks means looking at every cell).
    if data_lines == len(frame) or _QUOTE not in text:
        breaks = np.zeros(len(frame), dtype=np.int64)
    else:
        breaks = _breaks_per_row(frame)
    for position, values in (originals or {}).items():
        breaks[position] = sum(_breaks(value) for value in values)
    starts = header_lines + 1 + np.concatenate(([0], np.cumsum(breaks + 1)[:-1])).astype(np.int64)
    starts = starts[: len(frame)]
    width = len(header)
    quoting = _Quoting(path, width, delimiter, total_lines, unclosed)
    for found in np.flatnonzero(breaks):
        row = int(found)
        _check_quoted_row(quoting, _row_cells(frame, row, (originals or {}).get(row)), row, int(starts[row]))
    if unclosed:
        last = len(frame) - 1
        raise InputError(
            f"line {int(starts[last]) if last >= 0 else 1}: a quote opened in this row is never closed; "
            'write a quote inside a value as two quotes ("")',
            path=path,
            row=last + 1 if last >= 0 else None,
        )
    if data_lines != len(frame) + int(breaks.sum()):
        raise InputError(
            f"the file has {data_lines} lines after the header, but {len(frame)} rows were read with "
            f"{int(breaks.sum())} line breaks inside quoted cells: "
            f"{data_lines - len(frame) - int(breaks.sum())} lines are not accounted for; nothing is used",
            path=path,
        )
    return starts


def _row_cells(frame: pd.DataFrame, position: int, original: list[str] | None) -> list[tuple[str, str]]:
    """(column, value) of a row; of an over-long row as it was read, its extra fields named by position."""
    if original is None:
        return [
            (str(column), value if isinstance(value, str) else "")
            for column, value in frame.iloc[position].items()
        ]
    names = [str(column) for column in frame.columns]
    names += [f"field {number}" for number in range(len(names) + 1, len(original) + 1)]
    return list(zip(names, original, strict=False))


@dataclass(frozen=True)
class _Quoting:
    """What a row's quoted cells are checked against.

    Attributes:
        path: the file, named in errors.
        width: the columns of the header.
        delimiter: the field separator.
        total: the file's physical lines.
        unclosed: the parser met the end of the file inside a quote (its cell then may also hold the
            file's last line ending, running one line past the end).
    """

    path: Path
    width: int
    delimiter: str
    total: int
    unclosed: bool


def _check_quoted_row(quoting: _Quoting, cells: Sequence[tuple[str, str]], position: int, start: int) -> None:
    """Refuse a quoted cell of the row (at ``position``, starting on line ``start``) that runs over too many
    lines or holds lines like whole rows."""
    line = start
    for column, value in cells:
        count = _breaks(value)
        if not count:
            continue
        continuation = _LINE_BREAK.split(value)[1:]
        swallowed = quoting.width >= 3 and any(
            part.count(quoting.delimiter) >= quoting.width - 1 for part in continuation
        )
        if swallowed or count + 1 > MAX_QUOTED_LINES:
            end = line + count
            never = end > quoting.total or (quoting.unclosed and end >= quoting.total)
            closed = "is never closed" if never else f"is closed only on line {end}"
            what = "lines that look like whole rows" if swallowed else f"{count + 1} lines"
            raise InputError(
                f"line {line}: a quote opened here {closed}; the quoted cell holds {what}, which would be "
                "swallowed into one cell. Close the quote, or write a quote inside a value as two quotes "
                '("")',
                path=quoting.path,
                row=position + 1,
                field=str(column),
            )
        line += count


def _breaks(value: object) -> int:
    return len(_LINE_BREAK.findall(value)) if isinstance(value, str) else 0


def _breaks_per_row(frame: pd.DataFrame) -> np.ndarray:
    """Line breaks inside the cells of each row (only quoted cells can hold them)."""
    total = np.zeros(len(frame), dtype=np.int64)
    for _, column in frame.items():
        joined = column.str.cat() if len(column) else ""
        if "\n" not in joined and "\r" not in joined:
            continue
        total += column.str.count(_LINE_BREAK.pattern).fillna(0).to_numpy(dtype=np.int64)
    return total
