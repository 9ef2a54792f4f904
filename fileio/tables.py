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
:data:`MAX_QUOTED_LINES` lines, or holds a line with as many delimiters as a whole record, is a quote
opened and never closed (or closed by a stray quote rows later): it would swallow the rows after it into
one cell, so the file is refused, naming the line where the quote opens.

A file over a limit on its shape (:class:`fileio.limits.TableLimits`: columns per row, bytes per line,
cells of a worksheet, rows) is refused before the reader allocates for it, naming the setting that allows
it.
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
import gc
import re
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, ParamSpec, TypeVar

from python_calamine import CalamineError, CalamineSheet, CalamineWorkbook, SheetTypeEnum

from fileio.errors import InputError
from fileio.filetypes import EXCEL_SUFFIXES, check_table_file
from fileio.lazy import lazy_module
from fileio.limits import TABLE_LIMITS, Overrun, TableLimits
from fileio.linescan import LineScan, line_lengths, measures_bytes, scan_lines, scan_text
from fileio.sheet_extent import worksheet_overrun
from fileio.textfiles import (
    ASCII_BYTES_ENCODINGS,
    DecodedText,
    decode_text,
    first_line,
    has_control_characters,
    sniff_delimiter,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
else:
    # Imported on first use: reading a file's header (read_head, the CLI's checks) needs none of them.
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    pa = lazy_module("pyarrow")

MAX_QUOTED_LINES = 10
# How much of a file :func:`read_head` looks at: the header and the first rows are in it.
HEAD_BYTES = 1 << 20
HEAD_ROWS = 50
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_QUOTE = '"'
# What the workbook reader gives for a cell (an empty cell is "").
CellValue = str | int | float | bool | dt.date | dt.datetime | dt.time | dt.timedelta
_WHOLE_LIMIT = 2.0**63  # whole numbers below this fit a 64-bit integer
_ZIP_ENCRYPTED = 0x01 | 0x40  # general purpose flags: encrypted, strongly encrypted
_P = ParamSpec("_P")
_R = TypeVar("_R")


@dataclass
class Table:
    """A file's rows as strings and the rows that could not be read.

    ``frame`` has the source headers, empty cells as ``""`` or NaN, and the 1-based data row number as index
    (blank rows included); ``malformed`` lists (row, problem), and a malformed row's cells are empty.
    ``lines`` holds, per row, the physical line of the file where it starts (the header is line 1); None
    for a workbook. ``control_characters`` is False when the file is known to hold no control character
    (C0 but tab, line feed and carriage return; DEL), so that callers need not look for them cell by cell.
    """

    frame: pd.DataFrame
    malformed: list[tuple[int, str]] = field(default_factory=list)
    encoding: str | None = None
    delimiter: str | None = None
    lines: np.ndarray | None = None
    control_characters: bool = True


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
    if path.stat().st_size == 0:
        raise InputError("file is empty: no header row", path=path)
    if check_table_file(path) == "excel":
        return _read_excel(path, sheet, limits)
    scan = scan_lines(path, encoding=encoding, stop_above=limits.max_line_bytes)
    _refuse(path, scan.overrun(limits, exact_fields=False))
    data = path.read_bytes()
    decoded = _decode(path, data, encoding)
    text = _universal_newlines(decoded.text)
    if not text.strip():
        raise InputError("file is empty: no header row", path=path)
    if fixed_widths:
        _refuse(path, limits.columns(len(fixed_widths), "the fixed-width layout"))
        table = _read_fixed_width(path, text, fixed_widths, decoded.encoding, limits)
    else:
        delimiter = delimiter or sniff_delimiter(first_line(text)) or ","
        _check_records(path, data, decoded, text, delimiter, limits, scan)
        table = _read_delimited(path, text, delimiter, decoded.encoding, limits)
    table.control_characters = has_control_characters(data, decoded)
    return _reject_bad_lines(path, table, decoded.bad_lines)


def _refuse(path: Path, overrun: Overrun | None) -> None:
    if overrun is not None:
        raise InputError(overrun.problem, path=path)


def _check_records(
    path: Path,
    data: bytes,
    decoded: DecodedText,
    text: str,
    delimiter: str,
    limits: TableLimits,
    scan: LineScan,
) -> None:
    """Refuse a delimited text whose records pass the columns or rows limit, before it is parsed.

    Without quotes every line is a record: its fields are its delimiters plus one, counted vectorised on
    the lines long enough to matter (its lines were counted as the file streamed by). With quotes a record
    may span lines: the header record is parsed here (the frame is as wide as it; the parser refuses a
    wider row, and the rows are then read one by one and checked, see :func:`_read_delimited_tolerant`), and
    the records are counted, none kept, when the file has more lines than rows allowed.

    Raises:
        InputError: naming the line of a record over the columns limit, the header, or the records in all.
    """
    if len(delimiter) != 1:
        return  # no reader takes such a delimiter: the parser refuses the file
    if not scan.quotes:
        if delimiter.isascii() and codecs.lookup(decoded.encoding).name in ASCII_BYTES_ENCODINGS:
            fields = scan_text(
                data, encoding=decoded.encoding, delimiter=delimiter, fields_from=limits.max_columns
            )
            _refuse(path, limits.columns(fields.widest, f"line {fields.widest_line:,}"))
        else:
            counts = [line.count(delimiter) for line in text.split("\n")]
            widest = max(range(len(counts)), key=counts.__getitem__)
            _refuse(path, limits.columns(counts[widest] + 1, f"line {widest + 1:,}"))
        return
    reader = csv.reader(StringIO(text, newline=""), delimiter=delimiter)
    try:
        _refuse(path, limits.columns(len(next(reader, [])), "the header"))
        if scan.lines - 1 > limits.max_rows:
            _refuse(path, limits.rows(sum(1 for _ in reader)))
    except csv.Error:  # a value past the csv module's own size limit: the lines decide the rows
        _refuse(path, limits.rows(scan.lines - 1, what="lines after the header"))


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
        with path.open("rb") as handle:
            data = handle.read(HEAD_BYTES)
            lengths = line_lengths(data, encoding=encoding)
            longest = max(range(len(lengths)), key=lengths.__getitem__)
            _refuse(path, limits.line_bytes(lengths[longest], longest + 1))
            # The last line, cut off, measured on in the file's bytes (as far as the limit).
            if len(data) < size and lengths[-1] and measures_bytes(data, encoding):
                length = _rest_of_line(handle, lengths[-1], limits.max_line_bytes)
                _refuse(path, limits.line_bytes(length, len(lengths)))
    except PermissionError as exc:
        raise InputError(f"cannot be read: {exc.strerror}", path=path) from exc
    complete = len(data) >= size
    if not complete and b"\n" in data:
        data = data[: data.rindex(b"\n") + 1]  # whole lines only: no character is cut in two
    decoded = _decode(path, data, encoding)
    if 1 in decoded.bad_lines:
        raise InputError(f"line 1 (the header): {decoded.bad_lines[1]}", path=path)
    text = _universal_newlines(decoded.text)
    if not text.strip():
        if complete:
            raise InputError("file is empty: no header row", path=path)
        return TableHead([], True)
    lines = text.split("\n")
    if fixed_widths:
        _refuse(path, limits.columns(len(fixed_widths), "the fixed-width layout"))
        names = [name for name, _ in fixed_widths]
        rows = [line for line in lines if line.strip()]
        repeated = bool(rows) and _fixed_fields(rows[0], fixed_widths) == [n.casefold() for n in names]
        return TableHead(names, len(rows) > int(repeated) or not complete)
    delimiter = delimiter or sniff_delimiter(first_line(text)) or ","
    reader = csv.reader(StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, [])
    _refuse(path, limits.columns(len(header), "the header"))
    has_rows = any(any(cell.strip() for cell in row) for row in reader)
    return TableHead(_unique_headers(header, path), has_rows or not complete)


def _rest_of_line(handle: BinaryIO, length: int, limit: int) -> int:
    """The length of a line of which ``length`` bytes were read, reading on from ``handle`` until it ends
    or is longer than ``limit``."""
    while length <= limit and (chunk := handle.read(1 << 16)):
        ends = [position for position in (chunk.find(b"\n"), chunk.find(b"\r")) if position >= 0]
        if ends:
            return length + min(ends)
        length += len(chunk)
    return length


def _fixed_fields(line: str, widths: Sequence[tuple[str, int]]) -> list[str]:
    fields, start = [], 0
    for _, width in widths:
        fields.append(line[start : start + width].strip().casefold())
        start += width
    return fields


def _excel_head(path: Path, sheet: str | int | None, limits: TableLimits) -> TableHead:
    header, rows = _excel_sheet(path, sheet, limits, nrows=HEAD_ROWS)
    filled = bool(rows.map(lambda value: isinstance(value, str) and bool(value.strip())).to_numpy().any())
    return TableHead(_unique_headers(header, path), filled or len(rows) + 1 >= HEAD_ROWS)


def _universal_newlines(text: str) -> str:
    """``\\r\\n`` and ``\\r`` as ``\\n``, as Python's text files read them (a line break inside a quoted cell
    included); the lines stay the same lines."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _decode(path: Path, data: bytes, encoding: str | None) -> DecodedText:
    """The file's text; byte-order marks left at its start (a file saved twice with one, or read in a
    given encoding that keeps it) are dropped, so that none becomes part of the first header."""
    try:
        decoded = decode_text(data, encoding)
    except UnicodeDecodeError as exc:
        # A single-byte codec calls itself "charmap"; with no encoding given that is the fallback,
        # Windows-1252.
        name = encoding or ("Windows-1252" if exc.encoding == "charmap" else exc.encoding)
        raise InputError(
            f"line {_line_at(data, exc.start, exc.encoding)}: cannot be decoded as {name}: {exc.reason} "
            f"(byte {exc.start + 1} of the file)",
            path=path,
        ) from exc
    except UnicodeError as exc:  # a codec that decodes no text file (punycode, idna) fails without a place
        raise InputError(f"cannot be decoded as {encoding}: {exc}", path=path) from exc
    except LookupError as exc:
        raise InputError(f"unknown encoding {encoding!r}", path=path) from exc
    if decoded.text.startswith("\ufeff"):
        return DecodedText(decoded.text.lstrip("\ufeff"), decoded.encoding, decoded.bad_lines)
    return decoded


def _line_at(data: bytes, offset: int, encoding: str) -> int:
    """The 1-based line (ended by ``\\n``, ``\\r\\n`` or ``\\r``) holding byte ``offset`` of a file."""
    try:
        before = data[:offset].decode(encoding, errors="replace")
    except (UnicodeError, LookupError):
        before = data[:offset].decode("latin-1")
    return _universal_newlines(before).count("\n") + 1


def _read_delimited(path: Path, text: str, delimiter: str, encoding: str, limits: TableLimits) -> Table:
    unclosed = False
    originals: dict[int, list[str]] = {}
    try:
        # header=None makes the C parser refuse rows longer than the header instead of silently
        # shifting them into an index.
        raw = pd.read_csv(
            StringIO(text),
            sep=delimiter,
            header=None,
            dtype=str,
            keep_default_na=False,
            na_values=[],
            skip_blank_lines=False,
            engine="c",
        )
    except pd.errors.ParserError as exc:
        unclosed = "EOF inside string" in str(exc)
        header, data, malformed, originals = _read_delimited_tolerant(path, text, delimiter, limits)
    except (ValueError, csv.Error) as exc:
        raise InputError(f"cannot be parsed with delimiter {delimiter!r}: {exc}", path=path) from exc
    else:
        header = [str(value) if isinstance(value, str) else "" for value in raw.iloc[0].tolist()]
        data, malformed = raw.iloc[1:], []
    frame = data.set_axis(_unique_headers(header, path), axis=1)
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    lines = _quoted_lines(path, text, header, frame, delimiter, unclosed=unclosed, originals=originals)
    return Table(_drop_unnamed_empty(frame), malformed, encoding, delimiter, lines)


def _read_delimited_tolerant(
    path: Path, text: str, delimiter: str, limits: TableLimits
) -> tuple[list[str], pd.DataFrame, list[tuple[int, str]], dict[int, list[str]]]:
    """Slow path for files with over-long rows: such rows are reported unless their extra fields are empty.

    Returns the header, the rows, the malformed rows and, by 0-based position, every over-long row as it
    was read (its line breaks still count, and its quoted cells are still checked).

    Raises:
        InputError: a row has more fields than ``limits`` allow (named by the line it starts on), or the
            text cannot be parsed.
    """
    reader = csv.reader(StringIO(text, newline=""), delimiter=delimiter)
    malformed: list[tuple[int, str]] = []
    data: list[list[str]] = []
    originals: dict[int, list[str]] = {}
    try:
        header = next(reader, [])
        width = len(header)
        ended = reader.line_num
        for number, row in enumerate(reader, start=1):
            _refuse(path, limits.columns(len(row), f"line {ended + 1:,}"))
            ended = reader.line_num
            if len(row) > width:
                originals[number - 1] = row
                if any(value.strip() for value in row[width:]):
                    malformed.append((number, f"row has {len(row)} fields, the header has {width}"))
                    row = []
            data.append((row + [""] * width)[:width])
    except csv.Error as exc:
        raise InputError(f"cannot be parsed with delimiter {delimiter!r}: {exc}", path=path) from exc
    return header, pd.DataFrame(data, columns=range(width), dtype=str), malformed, originals


def _quoted_lines(
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
    total_lines = _physical_lines(text)
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
    for found in np.flatnonzero(breaks):
        row = int(found)
        cells = _row_cells(frame, row, (originals or {}).get(row))
        _check_quoted_row(
            path, cells, row, int(starts[row]), width, delimiter, total_lines, unclosed=unclosed
        )
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


def _check_quoted_row(
    path: Path,
    cells: Sequence[tuple[str, str]],
    position: int,
    start: int,
    width: int,
    delimiter: str,
    total: int,
    *,
    unclosed: bool,
) -> None:
    """Refuse a quoted cell of the row that runs over too many lines or holds lines like whole rows.

    ``unclosed``: the parser met the end of the file inside a quote (its cell then may also hold the
    file's last line ending, running one line past the end).
    """
    line = start
    for column, value in cells:
        count = _breaks(value)
        if not count:
            continue
        continuation = _LINE_BREAK.split(value)[1:]
        swallowed = width >= 3 and any(part.count(delimiter) >= width - 1 for part in continuation)
        if swallowed or count + 1 > MAX_QUOTED_LINES:
            end = line + count
            never = end > total or (unclosed and end >= total)
            closed = "is never closed" if never else f"is closed only on line {end}"
            what = "lines that look like whole rows" if swallowed else f"{count + 1} lines"
            raise InputError(
                f"line {line}: a quote opened here {closed}; the quoted cell holds {what}, which would be "
                "swallowed into one cell. Close the quote, or write a quote inside a value as two quotes "
                '("")',
                path=path,
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


def _physical_lines(text: str) -> int:
    """Lines of a text with universal newlines (see :func:`_universal_newlines`); a last line without an
    ending counts."""
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _reject_bad_lines(path: Path, table: Table, bad_lines: dict[int, str]) -> Table:
    """Make the rows holding undecodable lines malformed (their cells emptied); a bad header is fatal."""
    if not bad_lines:
        return table
    assert table.lines is not None
    malformed = list(table.malformed)
    rows: set[int] = set()
    for line, problem in bad_lines.items():
        if not len(table.lines) or line < table.lines[0]:
            raise InputError(f"line {line} (the header): {problem}", path=path)
        row = int(np.searchsorted(table.lines, line, side="right"))
        if row not in rows:
            rows.add(row)
            malformed.append((row, problem))
    frame = table.frame.copy()
    frame.loc[sorted(rows)] = ""
    malformed.sort(key=lambda item: item[0])
    return Table(frame, malformed, table.encoding, table.delimiter, table.lines, table.control_characters)


def _read_fixed_width(
    path: Path, text: str, widths: Sequence[tuple[str, int]], encoding: str, limits: TableLimits
) -> Table:
    names = [name for name, _ in widths]
    # Every line is a row, but a first line repeating the names.
    first = text[: text.find("\n")] if "\n" in text else text
    repeated = _fixed_fields(first, widths) == [name.casefold() for name in names]
    _refuse(path, limits.rows(_physical_lines(text) - int(repeated), what="rows"))
    try:
        frame = pd.read_fwf(
            StringIO(text),
            widths=[width for _, width in widths],
            names=names,
            header=None,
            dtype=str,
            keep_default_na=False,
            na_values=[],
            skip_blank_lines=False,
        )
    except (ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot be read as fixed width {list(widths)}: {exc}", path=path) from exc
    skipped = int(
        bool(len(frame))
        and [str(v).strip().casefold() for v in frame.iloc[0]] == [n.casefold() for n in names]
    )
    frame = frame.iloc[skipped:]
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    lines = _physical_lines(text)
    if lines != skipped + len(frame):
        raise InputError(
            f"the file has {lines} lines, but {skipped + len(frame)} were read as fixed width; "
            "nothing is used",
            path=path,
        )
    return Table(frame, [], encoding, None, np.arange(1 + skipped, 1 + skipped + len(frame)))


def call_with_collector_paused(call: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """``call(*args, **kwargs)`` with Python's cyclic garbage collector paused for that call alone: building a
    sheet's million cells (a list per row) would start it hundreds of times over, to find no cycle in them
    (100,000 rows: 0.24 s to 0.11 s).

    The collector's switch is the whole process's, so ``call`` must spend its time in compiled code that
    keeps the GIL until it returns (calamine's ``to_python`` and numpy taking its rows, ``list()`` of a csv
    reader): no other thread runs Python code meanwhile, so the pause holds up no other thread's
    collection (fan-out threads reading files side by side). A caller that paused the collector itself
    finds it paused afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return call(*args, **kwargs)
    finally:
        if enabled:
            gc.enable()


def _excel_sheet(
    path: Path, sheet: str | int | None, limits: TableLimits, *, nrows: int | None = None
) -> tuple[list[str], pd.DataFrame]:
    """The header and the data rows (all, or the first ``nrows`` lines) of a worksheet, every cell as text
    (see :func:`_cell_text`); blank rows and columns after the last value are no part of the sheet.

    The sheet is measured against ``limits`` first (:func:`fileio.sheet_extent.worksheet_overrun`): the
    reader builds its whole grid, however few rows are asked for.

    The workbook is read by calamine (a compiled reader, through python-calamine), as Excel shows it: text
    that the XML does not mark as spaced keeps no spaces at its ends, ``_x0041_`` escapes are decoded, and
    a cell holding an error (``#DIV/0!``) or a formula without a saved result reads as empty.
    """
    shown = sheet if sheet is not None else 0
    try:
        _refuse_encrypted(path)
        with CalamineWorkbook.from_path(path) as workbook:
            name = _worksheet_name(workbook, sheet)
            overrun = worksheet_overrun(path, name, limits)
            if overrun is not None:
                raise InputError(overrun.problem, path=path)
            worksheet = workbook.get_sheet_by_name(name)
            cells = call_with_collector_paused(_worksheet_cells, worksheet, nrows)
    except (_SheetMissing, CalamineError, OSError, ValueError, OverflowError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot be read as an Excel workbook (sheet {sheet!r}): {exc}", path=path) from exc
    except BaseException as exc:  # a panic of the compiled reader on a damaged file
        if type(exc).__name__ != "PanicException":
            raise
        raise InputError(
            f"cannot be read as an Excel workbook (sheet {sheet!r}): the file is damaged ({exc})", path=path
        ) from exc
    values = _sheet_values(cells)
    if values is None:
        raise InputError(f"sheet {shown!r} is empty: no header row", path=path)
    header = [str(value) for value in values[0]]
    return header, _text_frame(values[1:])


def _text_frame(values: np.ndarray) -> pd.DataFrame:
    """Rows of text as a frame of pandas' ``str`` dtype, each column handed to Arrow as a list (pandas'
    own conversion looks at each cell once more)."""
    columns = [
        pa.array(values[:, position].tolist(), type=pa.large_string()) for position in range(values.shape[1])
    ]
    table = pa.table(columns, names=[str(position) for position in range(len(columns))])
    return text_frame(table).set_axis(pd.RangeIndex(len(columns)), axis=1)


def text_frame(table: pa.Table, *, self_destruct: bool = False) -> pd.DataFrame:
    """An Arrow table of text (``large_string`` columns) as a frame of pandas' ``str`` dtype, on the same
    buffers; ``self_destruct`` frees each Arrow column as it is handed over."""
    frame: pd.DataFrame = table.to_pandas(
        types_mapper={pa.large_string(): pd.StringDtype("pyarrow", na_value=np.nan)}.get,
        self_destruct=self_destruct,
    )
    return frame


class _SheetMissing(LookupError):
    """The workbook has no worksheet of that name or position."""


def _refuse_encrypted(path: Path) -> None:
    """Refuse a workbook with a member that its ZIP directory marks as encrypted: the compiled reader would
    read its bytes as they are.

    Raises:
        ValueError: naming the member.
    """
    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            if member.flag_bits & _ZIP_ENCRYPTED:
                raise ValueError(f"the member {member.filename} is encrypted")


def _worksheet_name(workbook: CalamineWorkbook, sheet: str | int | None) -> str:
    """A worksheet's name, by name (in any case; a number written as text is the sheet at that 1-based
    position when no sheet has that name) or by 0-based position among the worksheets (chart sheets do not
    count)."""
    names = _worksheet_names(workbook)
    listed = ", ".join(repr(name) for name in names)
    if isinstance(sheet, str):
        exact = [name for name in names if name == sheet.strip()]
        folded = [name for name in names if name.casefold() == sheet.strip().casefold()]
        if exact or len(folded) == 1:
            return (exact or folded)[0]
        if sheet.strip().isdigit() and 1 <= int(sheet) <= len(names):
            return names[int(sheet) - 1]
        raise _SheetMissing(f"no worksheet {sheet!r}; the workbook's worksheets are {listed}")
    index = sheet or 0
    if not -len(names) <= index < len(names):
        raise _SheetMissing(f"no worksheet at position {index + 1}; the workbook's worksheets are {listed}")
    return names[index]


def _worksheet_names(workbook: CalamineWorkbook) -> list[str]:
    return [meta.name for meta in workbook.sheets_metadata if meta.typ == SheetTypeEnum.WorkSheet]


@dataclass(frozen=True)
class SheetChoice:
    """Which worksheet of a file to read: ``sheet`` as :func:`read_table` takes it, and ``note``, a line
    saying why when it was chosen for the caller."""

    sheet: str | int | None
    note: str | None = None


def choose_sheet(
    path: Path,
    sheet: str | None,
    fits: Callable[[list[str]], bool],
    *,
    what: str,
    limits: TableLimits = TABLE_LIMITS,
) -> SheetChoice:
    """The worksheet to read of a workbook whose sheet was not named: the first when it ``fits`` (its header
    has ``what``) or it is the only one, else the only sheet that fits, said in ``note``. A named sheet, and
    any file that is no workbook, is read as given.

    Raises:
        InputError: no sheet fits, or several do but the first: naming the sheets and ``--sheet``.
    """
    if sheet is not None or path.suffix.lower() not in EXCEL_SUFFIXES or not path.is_file():
        return SheetChoice(sheet)
    try:
        with CalamineWorkbook.from_path(path) as workbook:
            names = _worksheet_names(workbook)
    except (CalamineError, OSError, ValueError, zipfile.BadZipFile):
        return SheetChoice(None)  # read_table says what is wrong with the file
    if len(names) <= 1:
        return SheetChoice(None)
    fitting = [name for name in names if fits(read_head(path, sheet=name, limits=limits).headers)]
    if fitting[:1] == names[:1]:
        return SheetChoice(None)
    listed = ", ".join(repr(name) for name in names)
    if len(fitting) == 1:
        return SheetChoice(fitting[0], f"read worksheet {fitting[0]!r}, the only one of {listed} with {what}")
    found = "none has" if not fitting else f"{', '.join(repr(name) for name in fitting)} have"
    raise InputError(
        f"the workbook's worksheets are {listed}: the first has no {what} and {found} them; name the one "
        "to read with --sheet NAME (form: Worksheet)",
        path=path,
    )


def _worksheet_cells(worksheet: CalamineSheet, nrows: int | None) -> np.ndarray:
    """A worksheet's cells (all rows, or the first ``nrows``) as a 2-D array of objects (see
    :data:`CellValue`). The reader gives a list per row; they are gone when this returns, so the garbage
    collector never walks them."""
    return np.array(worksheet.to_python(skip_empty_area=False, nrows=nrows), dtype=object)


def _sheet_values(cells: np.ndarray) -> np.ndarray | None:
    """The cells (:func:`_worksheet_cells`) as a 2-D array of text, cut after the last row and column holding
    a value; None when no cell holds one."""
    end = len(cells)
    while end and all(value == "" for value in cells[end - 1]):
        end -= 1
    if not end:
        return None
    grid = cells[:end]
    width = grid.shape[1]
    while width and all(value == "" for value in grid[:, width - 1]):
        width -= 1
    grid = grid[:, :width]
    for position in range(width):
        if not isinstance(grid[0, position], str):
            grid[0, position] = _cell_text(grid[0, position])
        column = grid[1:, position]
        kind = pd.api.types.infer_dtype(column, skipna=False)
        if kind != "string" and len(column):
            grid[1:, position] = _column_text(column, kind)
    return grid


# infer_dtype kinds of columns of neither text nor numbers (calamine's dates, times, durations, booleans).
_NO_NUMBER_KINDS = frozenset({"date", "datetime", "time", "timedelta", "boolean"})


def _column_text(column: np.ndarray, kind: str = "mixed") -> np.ndarray:
    """A column's cells as text (see :func:`_cell_text`). Whole numbers, the usual cells that are no text
    (postcodes, house numbers), are converted all at once; other values once per distinct value. ``kind``
    is pandas' ``infer_dtype`` of the column: a column of floats only, or of dates or booleans only, needs
    no look at each cell's type."""
    column = column.copy()
    all_floats = kind == "floating"
    if all_floats or kind in _NO_NUMBER_KINDS:
        numbers = np.full(len(column), all_floats)
    else:
        numbers = np.fromiter((type(value) is float for value in column), dtype=bool, count=len(column))
    if numbers.any():
        values = column[numbers].astype(np.float64)
        whole = np.isfinite(values) & (np.floor(values) == values)
        small = whole & (np.abs(values) < _WHOLE_LIMIT)
        texts = np.empty(len(values), dtype=object)
        texts[small] = values[small].astype(np.int64).astype(str)
        texts[~whole] = list(map(repr, values[~whole].tolist()))  # 2.5, 1e-07, inf
        texts[whole & ~small] = [_cell_text(value) for value in values[whole & ~small].tolist()]
        column[numbers] = texts
    if all_floats:
        return column
    if kind in _NO_NUMBER_KINDS:
        others = np.ones(len(column), dtype=bool)
    else:
        others = np.fromiter((type(value) is not str for value in column), dtype=bool, count=len(column))
    if others.any():
        known: dict[tuple[type, CellValue], str] = {}  # by type too: True == 1, but "True" != "1"
        column[others] = [
            known.get((type(value), value)) or known.setdefault((type(value), value), _cell_text(value))
            for value in column[others]
        ]
    return column


def _cell_text(value: CellValue) -> str:
    """A cell's value as text, as the reader has always given it: a whole number without decimals
    (``3000``, not ``3000.0``), other numbers as Python writes them (``2.5``, ``1e-07``), a date as
    ``2030-01-31 00:00:00``, a time as ``12:30:00``, a duration as ``1 day, 2:00:00``, booleans as
    ``True``/``False``."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return f"{value.isoformat()} 00:00:00"
    return str(value)


def _read_excel(path: Path, sheet: str | int | None, limits: TableLimits) -> Table:
    header, rows = _excel_sheet(path, sheet, limits)
    frame = rows.set_axis(_unique_headers(header, path), axis=1)
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return Table(_drop_unnamed_empty(frame))


def _unique_headers(header: Sequence[str], path: Path) -> list[str]:
    """Headers stripped; blanks named ``Unnamed: <n>``.

    Raises:
        InputError: a header repeats (``Ort;Ort``): which column is meant would be a guess, so the file is
            refused naming the header and its columns.
    """
    names = [raw.strip() or f"Unnamed: {position}" for position, raw in enumerate(header, start=1)]
    columns: dict[str, list[int]] = {}
    for position, name in enumerate(names, start=1):
        columns.setdefault(name, []).append(position)
    repeated = [(name, positions) for name, positions in columns.items() if len(positions) > 1]
    if repeated:
        name, positions = repeated[0]
        listed = ", ".join(map(str, positions[:-1])) + f" and {positions[-1]}"
        more = f" (and {len(repeated) - 1} more headers repeat)" if len(repeated) > 1 else ""
        raise InputError(
            f"header {name!r} names columns {listed}{more}; give each column its own name", path=path
        )
    return names


def unique_names(names: Sequence[str]) -> list[str]:
    """``names`` with each repeat suffixed ``.1``, ``.2`` as pandas does, skipping suffixes that another
    column already has as its own name: ``x.1, x, x`` becomes ``x.1, x, x.2``."""
    taken = set(names)
    seen: set[str] = set()
    counters: dict[str, int] = {}
    unique: list[str] = []
    for name in names:
        if name in seen:
            number = counters.get(name, 0)
            candidate = name
            while candidate in taken:
                number += 1
                candidate = f"{name}.{number}"
            counters[name] = number
            taken.add(candidate)
            name = candidate
        seen.add(name)
        unique.append(name)
    return unique


def _drop_unnamed_empty(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop columns with a blank header and no values: the trail of separators spreadsheets export."""
    unnamed = [
        column
        for column in frame.columns
        if column.startswith("Unnamed: ") and frame[column].fillna("").str.strip().eq("").all()
    ]
    return frame.drop(columns=unnamed) if unnamed else frame
