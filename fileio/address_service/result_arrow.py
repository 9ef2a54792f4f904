"""The fast reader of a result file: the file read in pieces of whole lines, each made regular for Arrow's
CSV reader by one Arrow join (every line padded with delimiters to the widest, a single-byte encoding's bytes
from 0x80 up turned into UTF-8) and parsed on another thread while the next piece is read. A file whose
lines pandas reads in a way of its own is left to the plain reader,
:func:`fileio.address_service.result_file.read_with_pandas`, which is the reference this one is tested
against.
"""

from __future__ import annotations

import codecs
import ctypes
import ctypes.util
import functools
import io
import logging
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.lazy import lazy_module
from fileio.table_frame import text_frame

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")
    pa_csv = lazy_module("pyarrow.csv")

# Encodings the Arrow reader takes (after transcoding to UTF-8, which it reads); others go to pandas.
_UTF8_CODECS = frozenset({"utf-8", "utf-8-sig"})
_ARROW_ENCODINGS = _UTF8_CODECS | {"cp1252", "latin-1", "iso8859-1", "iso8859-15", "ascii"}
_ARROW_BLOCK_BYTES = 1 << 20
_LINES_PER_BLOCK = 1 << 16
# Bytes read at a time: a piece's passes over its bytes stay in the processor's caches, and a piece is made
# regular while the one before is parsed (at most _WAITING_PIECES wait for the parser).
_PIECE_BYTES = 4 << 20
_WAITING_PIECES = 2
# glibc's malloc_trim (None elsewhere): see _give_back_memory.
_MALLOC_TRIM = (
    getattr(ctypes.CDLL(ctypes.util.find_library("c")), "malloc_trim", None) if os.name == "posix" else None
)
_LF, _CR = ord("\n"), ord("\r")
_HIGH = 0x80  # the first byte a single-byte encoding may turn into more than one UTF-8 byte

logger = logging.getLogger("postflows.address_service.results")


def read_with_arrow(path: Path, encoding: str, delimiter: str, names: list[str]) -> pd.DataFrame | None:
    """The data rows parsed by ``pyarrow.csv``, or None when the file needs the pandas reader.

    Arrow reads UTF-8 and wants every row as wide as the widest: :class:`_Regular` brings each piece of the
    file there. Empty lines are skipped, as pandas skips them.
    """
    codec = codecs.lookup(encoding).name
    if codec not in _ARROW_ENCODINGS or len(delimiter) != 1 or not delimiter.isascii():
        return None
    regular = _Regular(ord(delimiter), names, None if codec in _UTF8_CODECS else _utf8_table(codec))
    with path.open("rb") as handle:
        if not _plain_header(handle.readline()):
            return None
        try:
            tables = _parsed_pieces(handle, regular)
        except pa.ArrowInvalid as exc:  # not expected of regular lines; pandas' readers decide then
            logger.debug("Arrow could not parse %s (%s); reading it with pandas", path, exc)
            return None
    if not tables:  # a NUL byte, a lone CR, a line pandas reads its own way; or no data line at all
        return None
    columns = regular.columns(regular.width)
    parsed = pa.concat_tables([_widened(table, columns) for table in tables])
    del tables
    frame = text_frame(parsed, self_destruct=True)
    del parsed
    _give_back_memory()
    return frame


def _parsed_pieces(handle: io.BufferedReader, regular: _Regular) -> list[pa.Table]:
    """The pieces of the file made regular on this thread and parsed on another meanwhile (Arrow lets go
    of the GIL); empty when a piece needs the pandas reader."""
    tables: list[pa.Table] = []
    waiting: deque[Future[pa.Table]] = deque()
    delimiter = chr(regular.delimiter)
    with ThreadPoolExecutor(max_workers=1) as parser:
        for piece, line_feeds in _line_pieces(handle, _PIECE_BYTES):
            text = regular.text(piece, line_feeds)
            if text is None:
                parser.shutdown(cancel_futures=True)
                return []
            if len(waiting) == _WAITING_PIECES:
                tables.append(waiting.popleft().result())
            columns = regular.columns(regular.piece_width)
            waiting.append(parser.submit(_parse, text, delimiter, columns, regular.table is None))
        tables.extend(parsed.result() for parsed in waiting)
    return tables


def _plain_header(header: bytes) -> bool:
    """Whether the header line holds no NUL byte and no CR but the one ending it."""
    return b"\x00" not in header and header.count(b"\r") == header.endswith(b"\r\n")


def _line_pieces(handle: io.BufferedReader, size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The rest of a file in pieces of whole lines (each ending with a line feed, but a last line without
    one) and the positions of their line feeds. The bytes are read into one buffer, grown only for a line
    longer than it: a piece is overwritten once the next is asked for."""
    buffer = np.empty(size, dtype=np.uint8)
    flags = np.empty(size, dtype=bool)
    filled = 0
    while True:
        if filled == len(buffer):  # one line fills the buffer: room for the rest of it
            buffer = np.concatenate((buffer, np.empty(len(buffer), dtype=np.uint8)))
            flags = np.empty(len(buffer), dtype=bool)
        read = handle.readinto(buffer.data[filled:])
        if not read:
            if filled:
                yield buffer[:filled], np.zeros(0, dtype=np.intp)
            return
        # The bytes kept from the last piece hold no line feed: only the new ones are searched.
        line_feeds = np.flatnonzero(np.equal(buffer[filled : filled + read], _LF, out=flags[:read])) + filled
        filled += read
        if not len(line_feeds):
            continue
        cut = int(line_feeds[-1]) + 1
        yield buffer[:cut], line_feeds
        buffer[: filled - cut] = buffer[cut:filled]
        filled -= cut


def _parse(text: pa.Buffer, delimiter: str, columns: list[str], check_utf8: bool) -> pa.Table:
    """Regular lines as a table of ``large_string`` columns (bytes transcoded from a single-byte encoding
    are valid UTF-8 by construction: only a UTF-8 file's are checked)."""
    return pa_csv.read_csv(
        pa.BufferReader(text),
        read_options=pa_csv.ReadOptions(column_names=columns, block_size=_ARROW_BLOCK_BYTES),
        parse_options=pa_csv.ParseOptions(
            delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False
        ),
        convert_options=pa_csv.ConvertOptions(
            column_types=dict.fromkeys(columns, pa.large_string()),
            strings_can_be_null=False,
            check_utf8=check_utf8,
        ),
    )


def _widened(table: pa.Table, columns: list[str]) -> pa.Table:
    """``table`` with the columns it lacks (a piece whose lines are narrower than the file's widest) as
    empty strings."""
    if table.num_columns == len(columns):
        return table
    empty = pa.LargeStringArray.from_buffers(
        len(table), pa.py_buffer(np.zeros(len(table) + 1, dtype=np.int64)), pa.py_buffer(b"")
    )
    for name in columns[table.num_columns :]:
        table = table.append_column(name, empty)
    return table


def _give_back_memory() -> None:
    """Hand freed memory back to the system: glibc keeps what a thread frees in that thread's arena, and
    Arrow's pool keeps the parser's working memory."""
    pa.default_memory_pool().release_unused()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


@dataclass(frozen=True)
class _Lines:
    """The lines of a piece: where they start, where their content ends (before the CR of a CRLF) and how
    many delimiters each holds."""

    starts: np.ndarray
    content_ends: np.ndarray
    delimiters: np.ndarray


class _Regular:
    """Makes the pieces of a file regular, one after the other, and keeps what they share: the widest line
    so far, whether the first data line was seen, and the scratch arrays of a piece's passes over its
    bytes (the same memory for every piece, so no piece pays for fresh pages)."""

    def __init__(self, delimiter: int, names: list[str], table: _Utf8Table | None) -> None:
        self.delimiter = delimiter
        self.names = names
        self.header_width = len(names)
        self.table = table
        self.width = self.piece_width = len(names)
        self._first_line_seen = False
        self._scratches: dict[type, np.ndarray] = {}

    def columns(self, width: int) -> list[str]:
        """The header's names, then ``Unnamed: <n>`` for each field more that lines of ``width`` have."""
        extra = range(self.header_width + 1, width + 1)
        return self.names + [f"Unnamed: {position}" for position in extra]

    def text(self, piece: np.ndarray, line_feeds: np.ndarray) -> pa.Buffer | None:
        """The piece as Arrow reads it, every non-empty line padded to the widest of the piece (and the
        header). None when pandas reads the lines in a way of its own (:meth:`_pandas_quirks`), or the
        piece holds a NUL byte or a CR ending a line on its own."""
        lines = self._lines(piece, line_feeds)
        if lines is None or self._pandas_quirks(piece, lines, ends_file=not len(line_feeds)):
            return None
        width = max(self.header_width, int(lines.delimiters.max(initial=0)) + 1)
        self.piece_width, self.width = width, max(self.width, width)
        missing = np.where(lines.content_ends > lines.starts, width - 1 - lines.delimiters, 0)
        text = self._joined(piece, lines.content_ends, missing)
        if text is None:  # nothing goes in: a copy, as the piece's buffer takes the next piece
            text = pa.py_buffer(piece.tobytes())
        if text[: len(codecs.BOM_UTF8)].to_pybytes() == codecs.BOM_UTF8:
            return None  # Arrow drops a byte-order mark starting its input; in a data line it is a value's
        return text

    def _lines(self, piece: np.ndarray, line_feeds: np.ndarray) -> _Lines | None:
        returns = np.count_nonzero(np.equal(piece, _CR, out=self._scratch(len(piece), np.bool_)))
        crlf = piece[np.maximum(line_feeds - 1, 0)] == _CR
        crlf &= line_feeds > 0
        if returns != np.count_nonzero(crlf) or piece.min(initial=1) == 0:
            return None  # a CR ending a line on its own, or a NUL byte: pandas decides how to take those
        ends = line_feeds if len(line_feeds) else np.array([len(piece)])  # or the file's last line
        starts = np.concatenate(([0], ends[:-1] + 1))
        content_ends = ends - crlf if len(line_feeds) else ends
        return _Lines(starts, content_ends, self._delimiters_per_line(piece, starts))

    def _delimiters_per_line(self, piece: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """How many delimiters each line holds (lines begin at ``starts``), a block of lines at a time. The
        flags are summed as they are where every line of the block is shorter than 256 bytes, else
        written as the 16-bit (or 32-bit) numbers summed: numpy then casts no copy of the block."""
        counts = np.empty(len(starts), dtype=np.int32)
        bounds = np.append(starts, len(piece))
        for first in range(0, len(starts), _LINES_PER_BLOCK):
            last = min(first + _LINES_PER_BLOCK, len(starts))
            low, high = int(bounds[first]), int(bounds[last])
            longest = int(np.diff(bounds[first : last + 1]).max())
            dtype = np.uint8 if longest < 1 << 8 else np.uint16 if longest < 1 << 16 else np.int32
            flags = self._scratch(high - low, dtype)
            np.equal(
                piece[low:high],
                self.delimiter,
                out=flags.view(np.bool_) if dtype is np.uint8 else flags,
                casting="unsafe",
            )
            counts[first:last] = np.add.reduceat(flags, starts[first:last] - low, dtype=dtype)
        return counts

    def _pandas_quirks(self, piece: np.ndarray, lines: _Lines, *, ends_file: bool) -> bool:
        """Whether pandas' C parser reads these lines in a way of its own, which the Arrow reader leaves to
        it: it drops a delimiter ending the file, and one ending the first data line when that line is one
        field wider than the header (all its lines are then taken to end so); it skips a line holding only
        blanks, which the csv module (its reader for rows wider than the header) keeps."""
        if ends_file and piece[-1] == self.delimiter:
            return True
        if not self._first_line_seen:
            non_empty = np.flatnonzero(lines.content_ends > lines.starts)
            if len(non_empty):
                self._first_line_seen = True
                first = non_empty[0]
                if (
                    lines.delimiters[first] == self.header_width
                    and piece[lines.content_ends[first] - 1] == self.delimiter
                ):
                    return True
        return _has_blank_lines(piece, lines, self.delimiter)

    def _joined(self, piece: np.ndarray, content_ends: np.ndarray, missing: np.ndarray) -> pa.Buffer | None:
        """``piece`` with ``missing[i]`` delimiters before the end of line ``i`` and, for a single-byte
        encoding, every byte from 0x80 up as UTF-8; None when nothing goes in.

        The piece is cut where bytes go in, and Arrow joins each part with what follows it: a line's
        padding, or a byte's UTF-8 continuation (its lead byte replaces it in the piece). One copy of the
        bytes, whatever the number of lines and accented letters.
        """
        padded = np.flatnonzero(missing)
        lengths = missing[padded]
        pads = np.flatnonzero(np.bincount(lengths, minlength=1))  # the paddings there are, by length
        rank = np.zeros(int(pads[-1]) + 1 if len(pads) else 0, dtype=np.int64)
        rank[pads] = np.arange(len(pads))
        # What follows a part is numbered: the continuations of the bytes 0x80 to 0xFF, the paddings, then
        # nothing (after the last part). A key holds where a part ends and that number, in one integer.
        first_pad = 0 if self.table is None else _HIGH
        bits = (first_pad + len(pads)).bit_length()
        keys = [(content_ends[padded] << bits) | (first_pad + rank[lengths])]
        follows = [_paddings(self.delimiter, pads)]
        if self.table is not None:
            high = np.flatnonzero(np.greater_equal(piece, _HIGH, out=self._scratch(len(piece), np.bool_)))
            codes = piece[high]
            piece[high] = self.table.lead[codes]
            keys.insert(0, ((high + 1) << bits) | (codes - _HIGH))
            follows.insert(0, self.table.continuations)
        count = sum(len(part) for part in keys)
        if not count:
            return None
        merged = np.sort(np.concatenate(keys), kind="stable")  # two sorted runs: one merge
        offsets = np.empty(count + 2, dtype=np.int64)
        offsets[0], offsets[-1] = 0, len(piece)
        np.right_shift(merged, bits, out=offsets[1:-1])
        numbers = np.empty(count + 1, dtype=np.int64)
        np.bitwise_and(merged, (1 << bits) - 1, out=numbers[:-1])
        numbers[-1] = first_pad + len(pads)
        parts = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(), count + 1, [None, pa.py_buffer(offsets), pa.py_buffer(piece)]
        )
        follow = pa.concat_arrays(follows).take(pa.array(numbers))
        joined = pc.binary_join_element_wise(parts, follow, pa.scalar(b"", pa.large_binary()))
        end = int(np.frombuffer(joined.buffers()[1], dtype=np.int64, count=count + 2)[-1])
        return joined.buffers()[2][:end]

    def _scratch(self, size: int, dtype: type) -> np.ndarray:
        held = self._scratches.get(dtype)
        if held is None or len(held) < size:
            held = self._scratches[dtype] = np.empty(size, dtype=dtype)
        return held[:size]


def _paddings(delimiter: int, lengths: np.ndarray) -> pa.Array:
    """Runs of ``delimiter`` of the ``lengths``, then an empty string."""
    return pa.array([bytes([delimiter]) * int(length) for length in lengths] + [b""], pa.large_binary())


def _has_blank_lines(piece: np.ndarray, lines: _Lines, delimiter: int) -> bool:
    """Whether a non-empty line holds only spaces and tabs (other than the delimiter)."""
    starts, content_ends = lines.starts, lines.content_ends
    suspects = np.flatnonzero((lines.delimiters == 0) & (content_ends > starts))
    blanks = b" \t".replace(bytes([delimiter]), b"")
    if len(suspects) > 1000:  # e.g. a file of one column: judge all lines in one pass
        blank = np.isin(piece, np.frombuffer(blanks, dtype=np.uint8)).view(np.uint8)
        counts = np.add.reduceat(blank, starts, dtype=np.int64)[suspects]
        return bool((counts >= (content_ends - starts)[suspects]).any())
    return any(not piece[starts[line] : content_ends[line]].tobytes().strip(blanks) for line in suspects)


@dataclass(frozen=True)
class _Utf8Table:
    """A single-byte encoding's bytes as UTF-8: per byte value its first byte (``lead``), and from 0x80 up
    the bytes that follow it (``continuations``, as Arrow strings)."""

    lead: np.ndarray
    continuations: pa.Array


@functools.cache
def _utf8_table(encoding: str) -> _Utf8Table:
    """Undecodable bytes become U+FFFD, as ``errors="replace"`` does."""
    encoded = [bytes([value]).decode(encoding, errors="replace").encode("utf-8") for value in range(256)]
    return _Utf8Table(
        lead=np.array([bytes_[0] for bytes_ in encoded], dtype=np.uint8),
        continuations=pa.array([bytes_[1:] for bytes_ in encoded[_HIGH:]], pa.large_binary()),
    )
