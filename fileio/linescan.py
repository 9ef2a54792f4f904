"""Measuring a text file's lines before it is read: how many, the longest in bytes and the most fields in one,
a chunk at a time, so that a file over a limit (:class:`fileio.limits.TableLimits`) is refused before a reader
holds it whole or pads its rows.

Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (as the readers take them); a last line without an ending
counts. A line's length is its bytes without the ending: the file's own bytes for an encoding that writes
ASCII as ASCII, else the bytes of its text as UTF-8. Fields are the delimiters of a line plus one: a
record's fields where every line is a record (a file without quotes, such as the services' result files);
a quoted value may hold delimiters and line breaks, so a quoted file's records are its reader's to count.
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.lazy import lazy_module
from fileio.limits import Overrun, TableLimits
from fileio.textfiles import ASCII_BYTES_ENCODINGS

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")  # imported on first use: measuring a file's head (line_lengths) needs none

_CHUNK = 4 << 20
_LF, _CR = 10, 13
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass
class LineScan:
    """What the lines of a file (or of the part read before stopping) measure.

    ``longest`` is the byte length of the longest line, on ``longest_line`` (1-based); ``widest`` the fields
    of the widest line, on ``widest_line`` (0 when fields were not counted); ``quotes`` whether a ``"``
    occurs. ``complete`` is False when the measuring stopped at a line longer than asked for: ``lines``
    then counts the lines before it.
    """

    lines: int = 0
    longest: int = 0
    longest_line: int = 0
    widest: int = 0
    widest_line: int = 0
    quotes: bool = False
    complete: bool = True

    def overrun(self, limits: TableLimits, *, exact_fields: bool) -> Overrun | None:
        """The first limit the lines pass: a line's bytes, then (with ``exact_fields``, for a file without
        quoting) its fields, then the rows after the header (lines but the first; with ``exact_fields`` or
        without quotes, where no line break can be inside a value)."""
        if (found := limits.line_bytes(self.longest, self.longest_line)) is not None:
            return found
        if exact_fields and (found := limits.columns(self.widest, f"line {self.widest_line:,}")) is not None:
            return found
        if exact_fields or not self.quotes:
            return limits.rows(self.lines - 1, what="lines after the header")
        return None


class _Scanner:
    """Measures lines fed as chunks of bytes; a CR ending a chunk waits for the next (it may start a CRLF).

    Fields are counted only on lines of at least ``fields_from`` bytes: a shorter line cannot hold more
    fields than it has bytes (plus one), so a limit on fields needs no look at it, and most files hold no
    long line at all.
    """

    def __init__(self, delimiter: int | None, stop_above: int | None, fields_from: int) -> None:
        self.scan = LineScan()
        self._delimiter = delimiter
        self._stop_above = stop_above
        self._fields_from = fields_from
        self._length = 0  # bytes of the unfinished line so far
        self._fields = 0  # delimiters of the unfinished line so far
        self._held_cr = False
        self._flags = np.zeros(0, dtype=bool)  # a chunk's flags, the same memory for every chunk

    def feed(self, chunk: bytes | bytearray) -> bool:
        """Measure ``chunk``; False once a line is longer than ``stop_above`` (nothing more is needed)."""
        if self._held_cr:
            chunk, self._held_cr = b"\r" + chunk, False
        if chunk.endswith(b"\r"):
            chunk, self._held_cr = chunk[:-1], True
        if not chunk:
            return True
        self.scan.quotes = self.scan.quotes or b'"' in chunk
        data = np.frombuffer(chunk, dtype=np.uint8)
        if len(self._flags) < len(data):
            self._flags = np.empty(len(data), dtype=bool)
        ends, crlf = _line_ends(data, self._flags[: len(data)], returns=b"\r" in chunk)
        starts = np.concatenate(([0], ends + 1))
        lengths = ends - crlf - starts[:-1]
        if len(lengths):
            lengths[0] += self._length
            delimiters = self._delimiters(data, starts, lengths)
            if self._record(lengths, delimiters):
                return False
        tail = int(starts[-1])
        self._length = len(data) - tail + (self._length if not len(ends) else 0)
        if self._delimiter is not None:
            self._fields = chunk.count(self._delimiter, tail) + (self._fields if not len(ends) else 0)
        if self._stop_above is not None and self._length > self._stop_above:
            self._set_longest(self._length, self.scan.lines + 1)
            self.scan.complete = False
            return False
        return True

    def finish(self) -> LineScan:
        """The measure of the whole file, its last line (ended by a held CR, or by no ending) included."""
        if self._held_cr or self._length:
            fields = np.array([self._fields]) if self._delimiter is not None else None
            self._record(np.array([self._length]), fields)
        return self.scan

    def _delimiters(self, data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
        """Delimiters per finished line of the chunk (the first line's earlier ones included), or None when
        none is counted (no delimiter, or no line long enough to matter)."""
        if self._delimiter is None or not (lengths >= self._fields_from).any():
            return None
        # Summed in 32 bits, which saves numpy a wider cast of every byte (a chunk is far below 2**31).
        mask = (data == self._delimiter).view(np.uint8)
        inside = starts[starts < len(data)]
        counts = np.add.reduceat(mask, inside, dtype=np.int32)[: len(lengths)].astype(np.int64)
        counts[0] += self._fields
        return counts

    def _record(self, lengths: np.ndarray, delimiters: np.ndarray | None) -> bool:
        """Count finished lines; True when one is longer than ``stop_above``."""
        first = self.scan.lines + 1
        if self._stop_above is not None:
            over = np.flatnonzero(lengths > self._stop_above)
            if len(over):
                position = int(over[0])
                self.scan.lines += position
                self._set_longest(int(lengths[position]), first + position)
                self.scan.complete = False
                return True
        self.scan.lines += len(lengths)
        longest = int(np.argmax(lengths))
        self._set_longest(int(lengths[longest]), first + longest)
        if delimiters is not None and len(delimiters):
            widest = int(np.argmax(delimiters))
            if int(delimiters[widest]) + 1 > self.scan.widest:
                self.scan.widest, self.scan.widest_line = int(delimiters[widest]) + 1, first + widest
        return False

    def _set_longest(self, length: int, line: int) -> None:
        if length > self.scan.longest or not self.scan.longest_line:
            self.scan.longest, self.scan.longest_line = length, line


def _line_ends(data: np.ndarray, flags: np.ndarray, *, returns: bool) -> tuple[np.ndarray, np.ndarray]:
    """Where the lines of a chunk end (at a LF, or at a CR no LF follows) and which of those ends are the LF
    of a CRLF; ``flags`` is scratch memory as long as the chunk. The CRs (with ``returns``) are counted
    before they are looked for: in most files each one is a CRLF's."""
    ends = np.flatnonzero(np.equal(data, _LF, out=flags))
    if not returns:
        return ends, np.zeros(len(ends), dtype=bool)
    crlf = (ends > 0) & (data[np.maximum(ends - 1, 0)] == _CR)
    if np.count_nonzero(np.equal(data, _CR, out=flags)) == np.count_nonzero(crlf):
        return ends, crlf
    positions = np.flatnonzero(flags)
    following = np.minimum(positions + 1, len(data) - 1)
    lone = positions[(positions + 1 == len(data)) | (data[following] != _LF)]
    ends = np.concatenate((ends, lone))
    order = np.argsort(ends, kind="stable")
    return ends[order], np.concatenate((crlf, np.zeros(len(lone), dtype=bool)))[order]


def scan_lines(
    path: Path,
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    stop_above: int | None = None,
    fields_from: int = 0,
) -> LineScan:
    """Measure the lines of a file, a chunk at a time; stop at the first line longer than ``stop_above``
    bytes.

    ``encoding``: the file's (None: a UTF-16 byte-order mark decides, else its bytes are measured as they
    are, which holds for UTF-8 and Windows-1252 alike). ``delimiter``: count fields by it (a single ASCII
    character; any other is not counted), on the lines of at least ``fields_from`` bytes (a limit of
    ``fields_from`` fields is then judged exactly).
    """
    with path.open("rb") as handle:
        return _scan(_as_measured(_chunks(handle), encoding), delimiter, stop_above, fields_from)


def _chunks(handle: io.BufferedReader) -> Iterator[bytes | bytearray]:
    """A file's bytes a chunk at a time, read into one buffer (no chunk pays for fresh pages): a chunk is
    overwritten once the next is asked for."""
    buffer = bytearray(_CHUNK)
    while read := handle.readinto(buffer):
        yield buffer if read == len(buffer) else buffer[:read]


def line_lengths(data: bytes, *, encoding: str | None) -> list[int]:
    """The length of each line of a file's first bytes, measured as :func:`scan_lines` measures (the last,
    cut off where the bytes end, as far as it goes; empty when they end with a line), without numpy: for
    the checks that look at a file's head only."""
    measured = b"".join(_as_measured(iter([data]), encoding))
    return [len(line) for line in _LINE_END.split(measured)]


def scan_text(
    data: bytes, *, encoding: str | None, delimiter: str | None = None, fields_from: int = 0
) -> LineScan:
    """Measure the lines of a file's bytes already read, decoded as ``encoding`` (see :func:`scan_lines`)."""
    view = memoryview(data)
    chunks = (bytes(view[low : low + _CHUNK]) for low in range(0, len(data), _CHUNK))
    return _scan(_as_measured(iter(chunks), encoding), delimiter, None, fields_from)


def _scan(
    chunks: Iterable[bytes | bytearray], delimiter: str | None, stop_above: int | None, fields_from: int
) -> LineScan:
    code = delimiter.encode("utf-8") if delimiter is not None and len(delimiter) == 1 else b""
    scanner = _Scanner(code[0] if len(code) == 1 else None, stop_above, fields_from)
    for chunk in chunks:
        if not scanner.feed(chunk):
            return scanner.scan
    return scanner.finish()


def measures_bytes(first: bytes, encoding: str | None) -> bool:
    """Whether a file whose first bytes are ``first`` is measured in its own bytes (its encoding writes
    ASCII as ASCII), rather than in those of its text as UTF-8."""
    return _measured_encoding(first, encoding) in ASCII_BYTES_ENCODINGS


def _measured_encoding(first: bytes | bytearray, encoding: str | None) -> str:
    if encoding is None and first.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    try:
        return codecs.lookup(encoding).name if encoding is not None else "utf-8"
    except LookupError:
        return "utf-8"


def _is_text_encoding(name: str) -> bool:
    """Whether ``name`` turns text into bytes and back: ``str.encode`` and ``bytes.decode`` refuse the
    others (``hex``, ``base64``, ``rot13``, ``zlib``, ...) with a LookupError."""
    try:
        "".encode(name)
        b"".decode(name)
    except LookupError:
        return False
    return True


def _as_measured(chunks: Iterator[bytes | bytearray], encoding: str | None) -> Iterator[bytes | bytearray]:
    """The chunks as measured: as they are when the encoding writes ASCII as ASCII, else re-encoded from
    their text as UTF-8 (undecodable bytes replaced: the reader reports them). An unknown encoding, one
    that is no text encoding, or bytes it cannot decode at all are measured as bytes: the reader refuses
    the file."""
    first = next(chunks, b"")
    name = _measured_encoding(first, encoding)
    if name in ASCII_BYTES_ENCODINGS or not _is_text_encoding(name):
        yield first
        yield from chunks
        return
    decoder = codecs.getincrementaldecoder(name)(errors="replace")
    chunk: bytes | bytearray | None = first
    while chunk is not None:
        try:
            text = decoder.decode(chunk, final=not chunk)
        except (UnicodeError, ValueError, TypeError):
            yield chunk
            yield from chunks
            return
        yield text.encode("utf-8", errors="replace")
        chunk = next(chunks, b"") if chunk else None
