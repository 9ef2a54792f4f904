"""Parsing a table file's decoded text: delimited (pandas' C parser; the csv module for rows longer than the
header) or fixed width, every line accounted for (:mod:`fileio.line_accounting`); the text decoded with its
undecodable lines made malformed rows, and records over the limits refused before they are parsed.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Sequence
from dataclasses import replace
from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.errors import InputError
from fileio.lazy import lazy_module
from fileio.limits import Overrun, TableLimits
from fileio.line_accounting import physical_lines, row_start_lines, universal_newlines
from fileio.linescan import LineScan, scan_text
from fileio.source_layout import SourceLayout
from fileio.table_frame import Table, drop_unnamed_empty, unique_headers
from fileio.textfiles import ASCII_BYTES_ENCODINGS, DecodedText, decode_text

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")


def refuse(path: Path, overrun: Overrun | None) -> None:
    if overrun is not None:
        raise InputError(overrun.problem, path=path)


def decode_table_text(path: Path, data: bytes, encoding: str | None) -> DecodedText:
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
    return universal_newlines(before).count("\n") + 1


def check_records(
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
            refuse(path, limits.columns(fields.widest, f"line {fields.widest_line:,}"))
        else:
            counts = [line.count(delimiter) for line in text.split("\n")]
            widest = max(range(len(counts)), key=counts.__getitem__)
            refuse(path, limits.columns(counts[widest] + 1, f"line {widest + 1:,}"))
        return
    reader = csv.reader(StringIO(text, newline=""), delimiter=delimiter)
    try:
        refuse(path, limits.columns(len(next(reader, [])), "the header"))
        if scan.lines - 1 > limits.max_rows:
            refuse(path, limits.rows(sum(1 for _ in reader)))
    except csv.Error:  # a value past the csv module's own size limit: the lines decide the rows
        refuse(path, limits.rows(scan.lines - 1, what="lines after the header"))


def read_delimited(path: Path, text: str, delimiter: str, encoding: str, limits: TableLimits) -> Table:
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
    names = unique_headers(header, path)
    frame = data.set_axis(names, axis=1)
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    lines = row_start_lines(path, text, header, frame, delimiter, unclosed=unclosed, originals=originals)
    layout = SourceLayout("delimited", tuple(names), encoding, delimiter=delimiter)
    return Table(drop_unnamed_empty(frame), malformed, encoding, delimiter, lines, layout=layout)


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
            refuse(path, limits.columns(len(row), f"line {ended + 1:,}"))
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


def reject_bad_lines(path: Path, table: Table, bad_lines: dict[int, str]) -> Table:
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
    return replace(table, frame=frame, malformed=malformed)


def read_fixed_width(
    path: Path, text: str, widths: Sequence[tuple[str, int]], encoding: str, limits: TableLimits
) -> Table:
    names = [name for name, _ in widths]
    # Every line is a row, but a first line repeating the names.
    first = text[: text.find("\n")] if "\n" in text else text
    repeated = fixed_fields(first, widths) == [name.casefold() for name in names]
    refuse(path, limits.rows(physical_lines(text) - int(repeated), what="rows"))
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
    lines = physical_lines(text)
    if lines != skipped + len(frame):
        raise InputError(
            f"the file has {lines} lines, but {skipped + len(frame)} were read as fixed width; "
            "nothing is used",
            path=path,
        )
    fixed = tuple((str(name), int(width)) for name, width in widths)
    layout = SourceLayout("fixed_width", tuple(names), encoding, fixed_widths=fixed)
    return Table(frame, [], encoding, None, np.arange(1 + skipped, 1 + skipped + len(frame)), layout=layout)


def fixed_fields(line: str, widths: Sequence[tuple[str, int]]) -> list[str]:
    fields, start = [], 0
    for _, width in widths:
        fields.append(line[start : start + width].strip().casefold())
        start += width
    return fields
