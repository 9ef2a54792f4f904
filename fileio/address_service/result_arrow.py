"""The fast reader of a result file: Arrow's multi-threaded CSV reader, on the file's bytes made regular
in one vectorised pass over pieces of its lines, a thread per core (every line padded to the widest, a
single-byte encoding turned into UTF-8). A file whose lines pandas reads in a way of its own is left to the
plain reader, :func:`fileio.address_service.result_file.read_with_pandas`, which is the reference this one
is tested against.
"""

from __future__ import annotations

import codecs
import ctypes
import ctypes.util
import functools
import itertools
import logging
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from fileio.lazy import lazy_module
from fileio.table_frame import text_frame

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.csv as pa_csv
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    pa = lazy_module("pyarrow")
    pa_csv = lazy_module("pyarrow.csv")

# Encodings the Arrow reader takes (after transcoding to UTF-8, which it reads); others go to pandas.
_UTF8_CODECS = frozenset({"utf-8", "utf-8-sig"})
_ARROW_ENCODINGS = _UTF8_CODECS | {"cp1252", "latin-1", "iso8859-1", "iso8859-15", "ascii"}
_ARROW_BLOCK_BYTES = 1 << 20
_LINES_PER_BLOCK = 1 << 16
_SCAN_BYTES = 4 << 20
# A result file's lines are padded in pieces of at least _PIECE_MIN_BYTES (at most _MAX_PIECES), a thread
# per core taking them in turn: a piece's passes over its bytes stay in the caches more than a piece per
# core's would (a 176 MB file: 22 pieces, about 15 % faster than two).
_PIECE_MIN_BYTES = 8 << 20
_MAX_PIECES = 32
_T = TypeVar("_T")
_R = TypeVar("_R")
# glibc's malloc_trim (None elsewhere): see _give_back_memory.
_MALLOC_TRIM = (
    getattr(ctypes.CDLL(ctypes.util.find_library("c")), "malloc_trim", None) if os.name == "posix" else None
)
_LF, _CR = ord("\n"), ord("\r")

logger = logging.getLogger("postflows.address_service.results")


def read_with_arrow(path: Path, encoding: str, delimiter: str, names: list[str]) -> pd.DataFrame | None:
    """The data rows parsed by ``pyarrow.csv``, or None when the file needs the pandas reader.

    Arrow reads UTF-8 and wants every row as wide as the widest; :func:`_arrow_bodies` brings the bytes there
    in one vectorised pass over pieces of the lines, a thread per core. Empty lines are skipped, as pandas
    skips them.
    """
    codec = codecs.lookup(encoding).name
    if codec not in _ARROW_ENCODINGS or len(delimiter) != 1 or not delimiter.isascii():
        return None
    data = path.read_bytes()
    if codec in _UTF8_CODECS and data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    whole = np.frombuffer(data, dtype=np.uint8)
    line_feeds = _positions(whole, lambda block: block == _LF)
    carriage_returns = data.count(b"\r")
    if b"\x00" in data or carriage_returns != np.count_nonzero(whole[line_feeds[line_feeds > 0] - 1] == _CR):
        return None  # a NUL byte, or a CR ending a line on its own: pandas decides how to take those
    del data
    header_end = int(line_feeds[0]) + 1 if len(line_feeds) else len(whole)
    table = None if codec in _UTF8_CODECS else _utf8_table(codec)
    padded = _arrow_bodies(whole[header_end:], line_feeds[1:] - header_end, ord(delimiter), len(names), table)
    del whole, line_feeds
    if padded is None:
        return None
    bodies, width = padded
    if any(body[: len(codecs.BOM_UTF8)].tobytes() == codecs.BOM_UTF8 for body in bodies):
        return None  # Arrow drops a byte-order mark starting its input; in a data line it is a value's
    _give_back_memory()
    columns = names + [f"Unnamed: {position}" for position in range(len(names) + 1, width + 1)]
    tables = []
    try:
        while bodies:  # each piece's bytes go once it is parsed
            tables.append(
                pa_csv.read_csv(
                    pa.BufferReader(pa.py_buffer(bodies.pop(0))),
                    read_options=pa_csv.ReadOptions(column_names=columns, block_size=_ARROW_BLOCK_BYTES),
                    parse_options=pa_csv.ParseOptions(
                        delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False
                    ),
                    convert_options=pa_csv.ConvertOptions(
                        column_types=dict.fromkeys(columns, pa.large_string()),
                        strings_can_be_null=False,
                        # Bytes transcoded from a single-byte encoding are valid UTF-8 by construction.
                        check_utf8=table is None,
                    ),
                )
            )
    except pa.ArrowInvalid as exc:  # not expected after _arrow_bodies; pandas' readers decide then
        logger.debug("Arrow could not parse %s (%s); reading it with pandas", path, exc)
        return None
    parsed = pa.concat_tables(tables)
    del tables
    frame = text_frame(parsed, self_destruct=True)
    del parsed
    _give_back_memory()
    return frame


def _give_back_memory() -> None:
    """Hand freed memory back to the system: glibc keeps what a thread frees in that thread's arena, and
    Arrow's pool keeps the parser's working memory, together up to a quarter of a large file's peak."""
    pa.default_memory_pool().release_unused()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def _in_threads(work: Callable[[_T], _R], items: Sequence[_T]) -> list[_R]:
    """``work`` on every item, in order, on a thread per core (numpy lets go of the GIL)."""
    threads = min(len(items), os.cpu_count() or 1)
    if threads < 2:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(work, items))


@dataclass(frozen=True)
class _Lines:
    """A piece of the data lines: its bytes and line feeds, where its lines start and where their content
    ends (before the CR of a CRLF), and how many delimiters each line holds."""

    body: np.ndarray
    line_feeds: np.ndarray
    starts: np.ndarray
    content_ends: np.ndarray
    delimiters: np.ndarray


def _pieces(body: np.ndarray, line_feeds: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """``body`` cut after line feeds into pieces of at least _PIECE_MIN_BYTES (at most _MAX_PIECES)."""
    count = min(_MAX_PIECES, max(1, len(body) // _PIECE_MIN_BYTES))
    if count < 2 or len(line_feeds) < count:
        return [(body, line_feeds)]
    cuts = [0, *(int(line_feeds[len(line_feeds) * k // count]) + 1 for k in range(1, count)), len(body)]
    pieces = []
    for low, high in itertools.pairwise(cuts):
        if high > low:
            first, last = np.searchsorted(line_feeds, [low, high])
            pieces.append((body[low:high], line_feeds[first:last] - low))
    return pieces


def _measure_lines(piece: tuple[np.ndarray, np.ndarray], delimiter: int) -> _Lines:
    body, line_feeds = piece
    starts = np.concatenate(([0], line_feeds + 1))
    ends = np.append(line_feeds, len(body))
    if starts[-1] == len(body):  # the piece ends with a line feed: no line after it
        starts, ends = starts[:-1], ends[:-1]
    content_ends = ends - (body[np.maximum(ends - 1, 0)] == _CR)
    return _Lines(body, line_feeds, starts, content_ends, _count_per_line(body, starts, delimiter))


def _arrow_bodies(
    body: np.ndarray, line_feeds: np.ndarray, delimiter: int, header_width: int, table: _Utf8Table | None
) -> tuple[list[np.ndarray], int] | None:
    """The data lines (ended by LF or CRLF) in pieces of whole lines, as UTF-8 with every non-empty line
    padded with delimiters to the width of the widest line or the header; and that width in fields. None
    when pandas reads the lines in a way of its own (:func:`_pandas_quirks`)."""
    if not len(body):
        return [body], header_width
    pieces = _in_threads(lambda piece: _measure_lines(piece, delimiter), _pieces(body, line_feeds))
    pieces = [lines for lines in pieces if len(lines.starts)]
    if not pieces:
        return [body], header_width
    if _pandas_quirks(bool(body[-1] == delimiter), pieces, delimiter, header_width):
        return None
    width = max(header_width, *(int(lines.delimiters.max()) + 1 for lines in pieces))
    return _in_threads(lambda lines: _pad_lines(lines, width, delimiter, table), pieces), width


def _pad_lines(lines: _Lines, width: int, delimiter: int, table: _Utf8Table | None) -> np.ndarray:
    """The bytes of ``lines`` as UTF-8, every non-empty line padded with delimiters to ``width`` fields.

    With ``table`` (a single-byte encoding's UTF-8 bytes per byte value) each byte from 0x80 up becomes its
    two or three UTF-8 bytes; ASCII bytes stay. Inserted bytes are placed by their computed positions, so
    the piece is copied once, whatever the number of short rows and accented letters.
    """
    body, line_feeds, starts, content_ends = lines.body, lines.line_feeds, lines.starts, lines.content_ends
    missing = np.where(content_ends > starts, width - 1 - lines.delimiters, 0)
    high = _positions(body, lambda block: block >= 0x80) if table is not None else np.zeros(0, dtype=np.intp)
    if not missing.any() and not len(high):
        return body
    # Bytes inserted before each line (its padding goes at its end) and before each high byte.
    padding_before = np.concatenate(([0], np.cumsum(missing)))
    codes = body[high]
    extra = table.length[codes] - 1 if table is not None else np.zeros(0, dtype=np.intp)
    extra_before = np.concatenate(([0], np.cumsum(extra)))
    lead = high + extra_before[:-1] + padding_before[np.searchsorted(line_feeds, high)]
    line_extra = extra_before[np.searchsorted(high, content_ends)]
    padding = np.repeat(content_ends + line_extra, missing) + np.arange(int(padding_before[-1]))
    out = np.empty(len(body) + int(extra_before[-1]) + int(padding_before[-1]), dtype=np.uint8)
    out[padding] = delimiter
    inserted = [padding]
    if table is not None:
        second, third = lead + 1, lead[extra == 2] + 2
        out[second] = table.second[codes]
        out[third] = table.third[codes[extra == 2]]
        inserted += [second, third]
    bounds = np.append(starts, len(body))
    out_bounds = bounds + padding_before + extra_before[np.searchsorted(high, bounds)]
    for first in range(0, len(starts), _LINES_PER_BLOCK):  # the original bytes, into the gaps left
        last = min(first + _LINES_PER_BLOCK, len(starts))
        low, high_end = int(out_bounds[first]), int(out_bounds[last])
        kept = np.ones(high_end - low, dtype=bool)
        for positions in inserted:
            begin, end = np.searchsorted(positions, [low, high_end])
            kept[positions[begin:end] - low] = False
        out[low:high_end][kept] = body[bounds[first] : bounds[last]]
    if table is not None:
        out[lead] = table.lead[codes]
    return out


def _positions(data: np.ndarray, where: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The positions in ``data`` for which ``where`` holds, judged a block at a time, so the temporary mask
    stays small (and in memory already touched) however large the data."""
    found = [
        np.flatnonzero(where(data[low : low + _SCAN_BYTES])) + low for low in range(0, len(data), _SCAN_BYTES)
    ]
    return np.concatenate(found) if found else np.zeros(0, dtype=np.intp)


def _count_per_line(body: np.ndarray, starts: np.ndarray, byte: int) -> np.ndarray:
    """How often ``byte`` occurs in each line (lines begin at ``starts``), a block of lines at a time, so
    the temporary arrays stay small. A block whose lines are all shorter than 64 KiB is summed in 16 bits,
    which saves numpy a wider cast of every byte."""
    counts = np.empty(len(starts), dtype=np.int32)
    bounds = np.append(starts, len(body))
    for first in range(0, len(starts), _LINES_PER_BLOCK):
        last = min(first + _LINES_PER_BLOCK, len(starts))
        block = body[bounds[first] : bounds[last]] == byte
        narrow = int(np.diff(bounds[first : last + 1]).max()) < 1 << 16
        counts[first:last] = np.add.reduceat(
            block.view(np.uint8), starts[first:last] - bounds[first], dtype=np.uint16 if narrow else np.int32
        )
    return counts


def _pandas_quirks(
    ends_with_delimiter: bool, pieces: list[_Lines], delimiter: int, header_width: int
) -> bool:
    """Whether pandas' C parser reads these lines in a way of its own, which the Arrow reader leaves to it:
    it drops a delimiter ending the file, and one ending the first data line when that line is one field
    wider than the header (all its lines are then taken to end so); it skips a line holding only blanks,
    which the csv module (its reader for rows wider than the header) keeps."""
    if ends_with_delimiter:
        return True
    for lines in pieces:  # the first non-empty line
        non_empty = np.flatnonzero(lines.content_ends > lines.starts)
        if len(non_empty):
            first = non_empty[0]
            if (
                lines.delimiters[first] == header_width
                and lines.body[lines.content_ends[first] - 1] == delimiter
            ):
                return True
            break
    return any(
        _has_blank_lines(lines.body, lines.starts, lines.content_ends, lines.delimiters, delimiter)
        for lines in pieces
    )


def _has_blank_lines(
    body: np.ndarray, starts: np.ndarray, content_ends: np.ndarray, delimiters: np.ndarray, delimiter: int
) -> bool:
    """Whether a non-empty line holds only spaces and tabs (other than the delimiter)."""
    suspects = np.flatnonzero((delimiters == 0) & (content_ends > starts))
    blanks = b" \t".replace(bytes([delimiter]), b"")
    if len(suspects) > 1000:  # e.g. a file of one column: judge all lines in one pass
        blank = np.isin(body, np.frombuffer(blanks, dtype=np.uint8)).view(np.uint8)
        counts = np.add.reduceat(blank, starts, dtype=np.int64)[suspects]
        return bool((counts >= (content_ends - starts)[suspects]).any())
    return any(not body[starts[line] : content_ends[line]].tobytes().strip(blanks) for line in suspects)


@dataclass(frozen=True)
class _Utf8Table:
    """A single-byte encoding's bytes as UTF-8: per byte value its length and first three bytes."""

    length: np.ndarray
    lead: np.ndarray
    second: np.ndarray
    third: np.ndarray


@functools.cache
def _utf8_table(encoding: str) -> _Utf8Table:
    """Undecodable bytes become U+FFFD, as ``errors="replace"`` does."""
    encoded = [bytes([value]).decode(encoding, errors="replace").encode("utf-8") for value in range(256)]
    assert all(len(bytes_) <= 3 for bytes_ in encoded)
    padded = [bytes_.ljust(3, b"\x00") for bytes_ in encoded]
    return _Utf8Table(
        length=np.array([len(bytes_) for bytes_ in encoded], dtype=np.intp),
        lead=np.array([bytes_[0] for bytes_ in padded], dtype=np.uint8),
        second=np.array([bytes_[1] for bytes_ in padded], dtype=np.uint8),
        third=np.array([bytes_[2] for bytes_ in padded], dtype=np.uint8),
    )
