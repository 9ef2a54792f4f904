"""Reading a customer's table file (.csv, .tsv, .txt or .dat delimited or fixed width, .xlsx) into an
all-string DataFrame that keeps leading zeros, numbers its data rows from 1, and reports rows it cannot read
instead of losing them.

Every line of a text file is accounted for before anything is used: each physical line after the header
(ended by ``\\n``, ``\\r\\n`` or ``\\r``) starts a row or is a line break inside a quoted cell, and a file for
which the lines do not add up is refused. So the raw record count — the physical lines after the header,
less the line breaks inside quoted cells, less the empty rows — is what the callers (the address and
purchase inputs) account for as accepted plus rejected rows before anything is sent. A header that names two
columns (``Ort;Ort``) is refused: which of them a field means would be a guess.

A quoted cell may hold line breaks (a note with several lines), but one that runs over more than
:data:`fileio.line_accounting.MAX_QUOTED_LINES` lines, or holds a line with as many delimiters as a whole
record, is a quote opened and never closed (or closed by a stray quote rows later): it would swallow the
rows after it into one cell, so the file is refused, naming the line where the quote opens.

A file over a limit on its shape (:class:`fileio.limits.TableLimits`: columns per row, bytes per line,
cells of a worksheet, rows) is refused before the reader allocates for it, naming the setting that allows
it.

The parts live beside it: the text parsers in :mod:`fileio.text_tables` (their line accounting in
:mod:`fileio.line_accounting`), the worksheet reader in :mod:`fileio.worksheets` (its cells as text in
:mod:`fileio.cell_text`), the frame and its column names in :mod:`fileio.table_frame`, the choice of a
workbook's sheet in :mod:`fileio.sheet_choice`.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from fileio.errors import InputError
from fileio.files import ReadTooLarge, read_bounded
from fileio.filetypes import check_table_file
from fileio.lazy import lazy_module
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.line_accounting import universal_newlines
from fileio.linescan import line_lengths, measures_bytes, scan_lines
from fileio.source_layout import SourceLayout
from fileio.table_frame import Table, drop_unnamed_empty, unique_headers
from fileio.text_tables import (
    check_records,
    decode_table_text,
    fixed_fields,
    read_delimited,
    read_fixed_width,
    refuse,
    reject_bad_lines,
)
from fileio.textfiles import first_line, has_control_characters, sniff_delimiter

if TYPE_CHECKING:
    import pandas as pd

    from fileio import worksheets
else:
    # Imported on first use: reading a file's header (read_head, the CLI's checks) needs none of them, and
    # a text file's run never reads a workbook (calamine and the checks of a workbook's parts).
    pd = lazy_module("pandas")
    worksheets = lazy_module("fileio.worksheets")

__all__ = ["HEAD_BYTES", "HEAD_ROWS", "Table", "TableHead", "read_head", "read_table"]

# How much of a file :func:`read_head` looks at: the header and the first rows are in it.
HEAD_BYTES = 1 << 20
HEAD_ROWS = 50


def read_table(
    path: Path,
    *,
    delimiter: str | None = None,
    encoding: str | None = None,
    fixed_widths: Sequence[tuple[str, int]] | None = None,
    sheet: str | int | None = None,
    limits: TableLimits = TABLE_LIMITS,
) -> Table:
    """Read a .csv, .tsv, .txt, .dat or .xlsx file with a header row; fixed-width text is named by
    ``fixed_widths``.

    The file type is checked first, by extension and content (:func:`fileio.filetypes.check_table_file`).
    Text files: the encoding is the given one, else detected (BOM, UTF-8, else Windows-1252); in a file
    that mixes UTF-8 and Windows-1252 lines, the lines not in the file's main encoding are malformed rows
    (:func:`fileio.textfiles.decode_text`). The delimiter is the given one, else sniffed from the header line
    among tab ``;`` ``,`` ``|``. A fixed-width file may start with a header line repeating the names; it is
    recognised and skipped.

    ``limits`` are judged before the reader allocates for what they bound: a text file's line lengths and
    lines as it streams by, its fields per line (once the delimiter is known) before it is parsed; a
    worksheet's dimension and cells before its grid is built (:mod:`fileio.sheet_extent`).

    Raises:
        InputError: the file is missing, empty, of an unsupported type, over a limit, cannot be decoded or
            parsed, has a quote that is never closed, or its lines do not add up to its rows; or the sheet
            does not exist.
    """
    if not path.is_file():
        raise InputError("file not found", path=path)
    info = path.stat()
    if info.st_size == 0:
        raise InputError("file is empty: no header row", path=path)
    if check_table_file(path) == "excel":
        return _read_as_of(_read_excel(path, sheet, limits), info, encoding_detected=False)
    scan = scan_lines(path, encoding=encoding, stop_above=limits.max_line_bytes)
    refuse(path, scan.overrun(limits, exact_fields=False))
    try:
        data = read_bounded(path, info.st_size)
    except ReadTooLarge:
        raise InputError("the file grew while it was read; not read", path=path) from None
    decoded = decode_table_text(path, data, encoding)
    text = universal_newlines(decoded.text)
    if not text.strip():
        raise InputError("file is empty: no header row", path=path)
    if fixed_widths:
        refuse(path, limits.columns(len(fixed_widths), "the fixed-width layout"))
        table = read_fixed_width(path, text, fixed_widths, decoded.encoding, limits)
    else:
        delimiter = delimiter or sniff_delimiter(first_line(text)) or ","
        check_records(path, data, decoded, text, delimiter, limits, scan)
        table = read_delimited(path, text, delimiter, decoded.encoding, limits)
    table.control_characters = has_control_characters(data, decoded)
    return _read_as_of(reject_bad_lines(path, table, decoded.bad_lines), info, encoding is None)


def _read_as_of(table: Table, info: os.stat_result, encoding_detected: bool) -> Table:
    """``table`` with its layout knowing the file's size and time when it was read, and whether its
    encoding was detected."""
    if table.layout is not None:
        table.layout = replace(
            table.layout,
            size=info.st_size,
            modified_ns=info.st_mtime_ns,
            encoding_detected=encoding_detected and table.layout.encoding is not None,
        )
    return table


@dataclass(frozen=True)
class TableHead:
    """A table file's header and whether a row with a value follows it.

    ``has_rows`` is False only when the whole file (or sheet) was looked at and holds no such row.
    """

    headers: list[str]
    has_rows: bool


def read_head(
    path: Path,
    *,
    delimiter: str | None = None,
    encoding: str | None = None,
    fixed_widths: Sequence[tuple[str, int]] | None = None,
    sheet: str | int | None = None,
    limits: TableLimits = TABLE_LIMITS,
) -> TableHead:
    """The header of a table file as :func:`read_table` reads it, from the file's first
    :data:`HEAD_BYTES` (a workbook's first :data:`HEAD_ROWS` rows): the checks that refuse a whole file
    (missing, unreadable, empty, unsupported type, an undecodable header, a missing sheet) in a moment,
    whatever the file's size. Rows are not checked; of ``limits``, the lines and the header's columns in
    those bytes are, and a workbook's are all (its sheet is measured whole before any of it is read).

    Raises:
        InputError: as :func:`read_table` for the file as a whole.
    """
    if path.is_dir():
        raise InputError("is a directory, not a file", path=path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    try:
        size = path.stat().st_size
        if size == 0:
            raise InputError("file is empty: no header row", path=path)
        if check_table_file(path) == "excel":
            return _excel_head(path, sheet, limits)
        data = _head_bytes(path, size, encoding, limits)
    except PermissionError as exc:
        raise InputError(f"cannot be read: {exc.strerror}", path=path) from exc
    complete = len(data) >= size
    if not complete and b"\n" in data:
        data = data[: data.rindex(b"\n") + 1]  # whole lines only: no character is cut in two
    decoded = decode_table_text(path, data, encoding)
    if 1 in decoded.bad_lines:
        raise InputError(f"line 1 (the header): {decoded.bad_lines[1]}", path=path)
    text = universal_newlines(decoded.text)
    if not text.strip():
        if complete:
            raise InputError("file is empty: no header row", path=path)
        return TableHead([], True)
    lines = text.split("\n")
    if fixed_widths:
        refuse(path, limits.columns(len(fixed_widths), "the fixed-width layout"))
        return _fixed_width_head(lines, fixed_widths, complete)
    delimiter = delimiter or sniff_delimiter(first_line(text)) or ","
    reader = csv.reader(StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, [])
    refuse(path, limits.columns(len(header), "the header"))
    has_rows = any(any(cell.strip() for cell in row) for row in reader)
    return TableHead(unique_headers(header, path), has_rows or not complete)


def _head_bytes(path: Path, size: int, encoding: str | None, limits: TableLimits) -> bytes:
    """The file's first :data:`HEAD_BYTES`, their lines measured against ``limits`` (the last one, cut
    off, measured on in the file's bytes as far as the limit).

    Raises:
        InputError: a line is longer than the limit allows.
    """
    with path.open("rb") as handle:
        data = handle.read(HEAD_BYTES)
        lengths = line_lengths(data, encoding=encoding)
        longest = max(range(len(lengths)), key=lengths.__getitem__)
        refuse(path, limits.line_bytes(lengths[longest], longest + 1))
        if len(data) < size and lengths[-1] and measures_bytes(data, encoding):
            length = _rest_of_line(handle, lengths[-1], limits.max_line_bytes)
            refuse(path, limits.line_bytes(length, len(lengths)))
    return data


def _fixed_width_head(
    lines: Sequence[str], fixed_widths: Sequence[tuple[str, int]], complete: bool
) -> TableHead:
    """The head of a fixed-width file: the layout's names; rows when a line is more than a repeated header
    (or the file goes on past its head)."""
    names = [name for name, _ in fixed_widths]
    rows = [line for line in lines if line.strip()]
    repeated = bool(rows) and fixed_fields(rows[0], fixed_widths) == [n.casefold() for n in names]
    return TableHead(names, len(rows) > int(repeated) or not complete)


def _rest_of_line(handle: BinaryIO, length: int, limit: int) -> int:
    """The length of a line of which ``length`` bytes were read, reading on from ``handle`` until it ends
    or is longer than ``limit``."""
    while length <= limit and (chunk := handle.read(1 << 16)):
        ends = [position for position in (chunk.find(b"\n"), chunk.find(b"\r")) if position >= 0]
        if ends:
            return length + min(ends)
        length += len(chunk)
    return length


def _excel_head(path: Path, sheet: str | int | None, limits: TableLimits) -> TableHead:
    _, header, rows = worksheets.read_worksheet(path, sheet, limits, nrows=HEAD_ROWS)
    filled = bool(rows.map(lambda value: isinstance(value, str) and bool(value.strip())).to_numpy().any())
    return TableHead(unique_headers(header, path), filled or len(rows) + 1 >= HEAD_ROWS)


def _read_excel(path: Path, sheet: str | int | None, limits: TableLimits) -> Table:
    name, header, rows = worksheets.read_worksheet(path, sheet, limits)
    names = unique_headers(header, path)
    frame = rows.set_axis(names, axis=1)
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return Table(drop_unnamed_empty(frame), layout=SourceLayout("xlsx", tuple(names), sheet=name))
