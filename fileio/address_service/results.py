"""The address service's batch output: unpacking the download, reading the result file (UTF-8 with or
without BOM, else Windows-1252; tab-separated; ragged rows; refused as ``ResultUnreadable`` when over a limit
on its shape, measured before it is read), decoding QSTAT, ShortReport, CorrectionType and TotalScore
(§2.3-§2.5) without per-row Python loops, joining it onto the input, the moves file, the reports.

The result file repeats the uploaded columns first, then the §2.3 fields, so the address fields occur twice.
Header names are folded onto the §2.3 spelling (``StreetName`` → ``Streetname``, ``POBoxTerm`` →
``PoBoxTerm``); address fields before the first status field (QSTAT …) are the uploaded copies and become
``<Field>_uploaded``, as does any earlier occurrence of a name that repeats.
"""

from __future__ import annotations

import codecs
import csv
import ctypes
import ctypes.util
import functools
import itertools
import logging
import os
import re
import warnings
import zipfile
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from connectors.address_service.codes import (
    ADDRESS_FIELD_NAMES,
    QSTAT,
    QSTAT_GRAMMAR,
    SHORT_REPORT_CHARS,
    SHORT_REPORT_GRAMMAR,
    SHORT_REPORT_LENGTH,
    SHORT_REPORT_POSITIONS,
    STATUS_FIELD_NAMES,
    canonical_output_field,
    normalize_qstat,
    qstat_info,
    short_report_char,
    short_report_column,
)
from fileio.address_service.records import RECORD_ID, AddressInput
from fileio.archives import ZipInflation, inflate
from fileio.errors import DuplicateRecordIds, ResultFileError, ResultUnreadable
from fileio.files import atomic_open
from fileio.limits import (
    DOWNLOAD_MAX_BYTES,
    TABLE_LIMITS,
    ZIP_MAX_RATIO,
    Overrun,
    TableLimits,
)
from fileio.linescan import scan_lines
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, write_csv, write_xlsx
from fileio.tables import call_with_collector_paused, text_frame, unique_names
from fileio.textfiles import detect_encoding, read_rows, sniff_delimiter

RETURNED_COLUMN = "ReturnedByService"
UPLOADED_SUFFIX = "_uploaded"
INPUT_SUFFIX = "_in"  # the §2.2 convention for input values, used for the original address beside the result
QSTAT_DESIGNATION = "QSTAT_Designation"
QSTAT_MEANING = "QSTAT_Meaning"
NOT_RETURNED = "not returned"
NOT_RETURNED_MEANING = "the service's result has no row with this record id"
SUMMARY_COLUMNS = ["QSTAT", "Designation", "Meaning", "Count", "Share %"]
RESULT_FILE_NAME = "result.txt"
MOVES_FILE_NAME = "moves.txt"
_ZIP_MAGIC = b"PK\x03\x04"
_LINE_END = re.compile(r"\r\n|\r|\n")
_LARGEST_RECORD_ID = 2**53  # every whole number below it is exact as a float (and fits Int64)
# The result file's columns: pandas' str dtype held by Arrow, so Arrow's parsed strings are used as they are.
_LIKELY_REPORT_BYTES = "".join(["\x00 ", *SHORT_REPORT_CHARS]).encode("ascii")
_STRING = pd.StringDtype("pyarrow", na_value=np.nan)
# Encodings the Arrow reader takes (after transcoding to UTF-8, which it reads); others go to pandas.
_UTF8_CODECS = frozenset({"utf-8", "utf-8-sig"})
_ARROW_ENCODINGS = _UTF8_CODECS | {"cp1252", "latin-1", "iso8859-1", "iso8859-15", "ascii"}
_ARROW_BLOCK_BYTES = 1 << 20
_LINES_PER_BLOCK = 1 << 16
_SCAN_BYTES = 4 << 20
# A result file's lines are padded a piece per core (at most _MAX_PIECES), each of at least this size.
_PIECE_MIN_BYTES = 8 << 20
_MAX_PIECES = 8
_T = TypeVar("_T")
_R = TypeVar("_R")
# glibc's malloc_trim (None elsewhere): see _give_back_memory.
_MALLOC_TRIM = (
    getattr(ctypes.CDLL(ctypes.util.find_library("c")), "malloc_trim", None) if os.name == "posix" else None
)
_LF, _CR = ord("\n"), ord("\r")
# The code columns of results.csv and their grammars: a value is written as it is (a ShortReport starting
# "--", its decoded label "- no statement") only when it matches its column's grammar whole; every other text
# cell, the service's other fields (ValidFrom, Housekey, Double_DSTAT …) included, gets the formula guard.
SHORT_REPORT_LABEL = re.compile(r"[-0-9A-Za-z] [a-z][a-z ]*")
CODE_COLUMNS: Mapping[str, re.Pattern[str]] = MappingProxyType(
    {
        "QSTAT": QSTAT_GRAMMAR,
        "ShortReport": SHORT_REPORT_GRAMMAR,
        **{
            short_report_column(position): SHORT_REPORT_LABEL
            for position in range(1, len(SHORT_REPORT_POSITIONS) + 1)
        },
    }
)


logger = logging.getLogger("postflows.address_service.results")


@dataclass(frozen=True)
class DownloadedFiles:
    """The files of one batch download: the result file and, for a maintenance run, the moves file."""

    result: Path
    moves: Path | None = None


def unpack_download(
    path: Path,
    workdir: Path,
    *,
    max_bytes: int = DOWNLOAD_MAX_BYTES,
    max_ratio: float = ZIP_MAX_RATIO,
) -> DownloadedFiles:
    """Recognise a downloaded file: a plain result file, or a ZIP holding the result and a moves file.

    A ZIP is recognised by its magic bytes, not its name. In a ZIP the member whose name contains "move" is
    the moves file and the largest other member is the result. They are written to ``workdir`` under names
    of ours (``result.txt``, ``moves.txt``), never the names in the archive. Inflated bytes are counted as
    they come, whatever the archive's headers claim: more than ``max_bytes`` in all, or more than
    ``max_ratio`` times the compressed size (per member, and for the archive as a whole), stops the
    unpacking and leaves neither file.

    Raises:
        ResultFileError: the ZIP is damaged, holds no result file, or passes a limit.
    """
    with path.open("rb") as handle:
        magic = handle.read(len(_ZIP_MAGIC))
    if magic != _ZIP_MAGIC:
        return DownloadedFiles(result=path)
    written: list[Path] = []
    try:
        with zipfile.ZipFile(path) as archive:
            members = [member for member in archive.infolist() if not member.is_dir()]
            moves = [member for member in members if "move" in Path(member.filename).name.lower()]
            results = sorted((m for m in members if m not in moves), key=lambda m: m.file_size, reverse=True)
            if not results:
                raise ResultFileError(
                    f"the ZIP holds no result file (members: {archive.namelist()[:20]})", path=path
                )
            wanted = [(results[0], RESULT_FILE_NAME)] + ([(moves[0], MOVES_FILE_NAME)] if moves else [])
            inflation = ZipInflation(
                path.stat().st_size,
                max_bytes,
                max_ratio,
                refuse=lambda problem: ResultFileError(f"{problem}; nothing was unpacked", path=path),
            )
            inflation.check_headers([member for member, _ in wanted])
            for member, name in wanted:
                written.append(_extract(archive, member, _unpacked_path(workdir, name, path), inflation))
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        _remove(written)
        raise ResultFileError(f"damaged ZIP: {exc}", path=path) from exc
    except BaseException:
        _remove(written)
        raise
    return DownloadedFiles(result=written[0], moves=written[1] if len(written) > 1 else None)


def _unpacked_path(workdir: Path, name: str, download: Path) -> Path:
    target = workdir / name
    if target.resolve() == download.resolve():  # the download itself may be named like an unpacked file
        target = workdir / f"unpacked-{name}"
    return target


def _extract(
    archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, inflation: ZipInflation
) -> Path:
    with atomic_open(target) as sink:
        for chunk in inflate(archive, member, inflation):
            sink.write(chunk)
    return target


def _remove(paths: Sequence[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def read_result_file(path: Path, *, limits: TableLimits = TABLE_LIMITS) -> pd.DataFrame:
    """Read a result file into a frame of strings (``""`` for empty and for missing trailing fields).

    §2.3 headers are folded onto their canonical spelling case-insensitively; other columns keep their names;
    uploaded copies of address fields become ``<Field>_uploaded`` (see the module docstring). A row with
    more fields than the header keeps the surplus in extra ``Unnamed: <n>`` columns.

    Before anything is parsed, the file's lines are measured as they stream by (:func:`scan_lines`): a
    line longer than ``limits`` allow, one with more fields, or more lines than rows allowed, and the file
    is refused, never padded to its widest line.

    The columns are the pandas ``str`` dtype held by Arrow. Files are parsed by Arrow's multi-threaded CSV
    reader (:func:`_read_arrow`); a file it cannot take as it is (a line ended by a lone CR, UTF-16, a
    NUL byte) is read by pandas' C parser, and one whose rows the C parser refuses by the csv module.

    Raises:
        ResultFileError: the file is empty.
        ResultUnreadable: the file is over a limit.
    """
    encoding = detect_encoding(path)
    with path.open(encoding=encoding, errors="replace", newline="") as handle:
        header_line = handle.readline(limits.max_line_bytes + 2).rstrip("\r\n")
    if not header_line.strip():
        raise ResultFileError("result file is empty: no header row", path=path)
    delimiter = "\t" if "\t" in header_line else sniff_delimiter(header_line) or "\t"
    scan = scan_lines(
        path,
        encoding=encoding,
        delimiter=delimiter,
        stop_above=limits.max_line_bytes,
        fields_from=limits.max_columns,
    )
    _refuse_unreadable(path, scan.overrun(limits, exact_fields=True))
    names = result_headers(header_line.split(delimiter))
    frame = _read_arrow(path, encoding, delimiter, names)
    if frame is None:
        frame = _read_pandas(path, encoding, delimiter, names).astype(_STRING)
    return frame


def _refuse_unreadable(path: Path, overrun: Overrun | None) -> None:
    if overrun is not None:
        raise ResultUnreadable(overrun.problem, path=path, setting=overrun.setting, limit=overrun.limit)


def _read_pandas(path: Path, encoding: str, delimiter: str, names: list[str]) -> pd.DataFrame:
    try:
        with warnings.catch_warnings():
            # pandas only warns when a row is longer than the header and drops the surplus; we keep it.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                path,
                sep=delimiter,
                header=None,
                skiprows=1,
                names=names,
                index_col=False,
                dtype=object,
                keep_default_na=False,
                na_values=[],
                quoting=csv.QUOTE_NONE,
                encoding=encoding,
                encoding_errors="replace",
                engine="c",
            )
    except (pd.errors.ParserWarning, pd.errors.ParserError):
        frame = _read_ragged(path, encoding, delimiter, names)
    # Without NA parsing the C parser already yields "" for empty and missing trailing fields.
    return frame


def _read_arrow(path: Path, encoding: str, delimiter: str, names: list[str]) -> pd.DataFrame | None:
    """The data rows parsed by ``pyarrow.csv``, or None when the file needs the pandas reader.

    Arrow reads UTF-8 and wants every row as wide as the widest; :func:`_arrow_bodies` brings the bytes there
    in one vectorised pass, a piece of the lines per core. Empty lines are skipped, as pandas skips them.
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
    """``work`` on every item, in order, a thread each (numpy lets go of the GIL)."""
    if len(items) < 2:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=len(items)) as pool:
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
    """``body`` cut after line feeds into a piece per core, each of at least _PIECE_MIN_BYTES."""
    count = min(os.cpu_count() or 1, _MAX_PIECES, max(1, len(body) // _PIECE_MIN_BYTES))
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


def result_headers(raw: Sequence[str]) -> list[str]:
    """Result file headers folded onto §2.3 spelling; address fields before the first status field (the
    uploaded copies) and earlier repeats of a name get ``_uploaded``."""
    names = [canonical_output_field(name) or name.strip() for name in raw]
    status_positions = [position for position, name in enumerate(names) if name in STATUS_FIELD_NAMES]
    output_start = status_positions[0] if status_positions else 0
    last = {name: position for position, name in enumerate(names)}
    renamed = [
        name + UPLOADED_SUFFIX
        if last[name] != position or (position < output_start and name in ADDRESS_FIELD_NAMES)
        else name
        for position, name in enumerate(names)
    ]
    return unique_names([name or f"Unnamed: {position}" for position, name in enumerate(renamed, start=1)])


def _read_ragged(path: Path, encoding: str, delimiter: str, names: list[str]) -> pd.DataFrame:
    text = path.read_text(encoding=encoding, errors="replace")
    rows = call_with_collector_paused(read_rows, text, delimiter, quoting=csv.QUOTE_NONE)[1:]
    rows = [row for row in rows if row]
    width = max([len(names), *(len(row) for row in rows)])
    columns = names + [f"Unnamed: {position}" for position in range(len(names) + 1, width + 1)]
    return pd.DataFrame([row + [""] * (width - len(row)) for row in rows], columns=columns, dtype=object)


def decode_results(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the decoded status columns to a result frame (vectorised: work is per distinct value, not per row).

    Adds ``QSTAT_Designation`` and ``QSTAT_Meaning`` after QSTAT (unknown codes read "Unknown QSTAT"), turns
    ``CorrectionType`` into nullable ``Int64`` and ``TotalScore`` into float (``"100.00"`` → 100.0), and
    appends ``SR01_Company`` … ``SR24_AddressStatus``: each ShortReport character with its label, such as
    ``"1 compliance"``, ``"3 changed"``, ``"- no statement"``, ``"H special"``; a missing position is ``""``.
    The decoded text columns are categorical.
    """
    decoded = frame.copy(deep=False)  # copy-on-write: the caller's frame is never modified
    if "QSTAT" in decoded:
        qstat = decoded["QSTAT"].fillna("")
        position = decoded.columns.get_loc("QSTAT")
        assert isinstance(position, int)
        designation, meaning = _decode_distinct(qstat, _designation, _meaning)
        decoded.insert(position + 1, QSTAT_DESIGNATION, designation)
        decoded.insert(position + 2, QSTAT_MEANING, meaning)
    if "CorrectionType" in decoded:
        numbers = _numbers_distinct(decoded["CorrectionType"])
        whole = (numbers == numbers.round()) & (numbers.abs() < _LARGEST_RECORD_ID)
        decoded["CorrectionType"] = numbers.where(whole).astype("Int64")
    if "TotalScore" in decoded:
        decoded["TotalScore"] = _numbers_distinct(decoded["TotalScore"])
    if "ShortReport" in decoded:
        for name, column in decode_short_report(decoded["ShortReport"]).items():
            decoded[name] = column
    return decoded


def decode_short_report(short_report: pd.Series) -> pd.DataFrame:
    """One categorical column per ShortReport position, labelled ``"<char> <label>"``."""
    chars = _short_report_chars(short_report)
    # A lookup from code point to category number: the alphabet is tiny, the rows are many. A blank is read
    # as 0 ("not delivered"), as is a position past the report's end.
    size = 0x100 if chars.dtype == np.uint8 else 0x10000
    seen = np.zeros(size, dtype=bool)
    if chars.dtype == np.uint8:
        seen[_bytes_present(chars.tobytes(), _LIKELY_REPORT_BYTES)] = True
    else:
        seen[chars] = True
    if seen[ord(" ")]:
        seen[ord(" ")], seen[0] = False, True
    present = np.flatnonzero(seen)
    lookup = np.zeros(size, dtype=np.int8 if len(present) < 2**7 else np.int16)
    lookup[present] = np.arange(len(present))
    lookup[ord(" ")] = lookup[0]
    if chars.dtype == np.uint8:  # one byte per character and per code: a byte translation
        codes = np.frombuffer(chars.tobytes().translate(lookup.tobytes()), dtype=np.int8).reshape(chars.shape)
    else:
        codes = lookup[chars]
    labels = pd.Index([_short_report_label(chr(code)) for code in present], dtype=object)
    columns = {
        short_report_column(position + 1): pd.Categorical.from_codes(
            codes[position], categories=labels, validate=False
        )
        for position in range(SHORT_REPORT_LENGTH)
    }
    return pd.DataFrame(columns, index=short_report.index)


def _bytes_present(data: bytes, likely: bytes) -> list[int]:
    """The distinct byte values in ``data``: each ``likely`` one looked for (a memchr), the others read from
    what is left once the likely ones are deleted, one value at a time."""
    present = [value for value in likely if bytes((value,)) in data]
    rest = data.translate(None, likely)
    while rest:
        present.append(rest[0])
        rest = rest.translate(None, rest[:1])
    return present


def _short_report_chars(short_report: pd.Series) -> np.ndarray:
    """The reports' first 24 characters as a 24 × rows array of code points, a row per position (uint8 when
    all are ASCII, else uint16), 0 past a short report's end. Code points beyond U+FFFF (never valid report
    characters) fold onto U+FFFF, which reads "unknown"."""
    rows, length = len(short_report), SHORT_REPORT_LENGTH
    if isinstance(short_report.dtype, pd.StringDtype) and short_report.dtype.storage == "pyarrow" and rows:
        # Arrow strings: when all are ASCII, the padded reports are one buffer of rows × 24 bytes.
        values = pa.array(short_report.array)
        values = (values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values).fill_null("")
        padded = pc.utf8_rpad(pc.utf8_slice_codeunits(values, 0, length), width=length, padding="\x00")
        if pc.all(pc.string_is_ascii(padded)).as_py():
            offset_type = np.int64 if pa.types.is_large_string(padded.type) else np.int32
            offsets = np.frombuffer(padded.buffers()[1], dtype=offset_type)[padded.offset :]
            data = np.frombuffer(padded.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[0] + rows * length]
            chars = np.ascontiguousarray(data.reshape(rows, length).T)
            del values, padded
            pa.default_memory_pool().release_unused()
            return chars
    values = short_report.fillna("").to_numpy(dtype=f"U{length}")
    # A U24 array is 24 UCS-4 code points per row; padding becomes 0 ("not delivered").
    points = values.view(np.uint32).reshape(rows, length).T
    return np.ascontiguousarray(np.minimum(points, 0xFFFF), dtype=np.uint16)


def _short_report_label(char: str) -> str:
    label = short_report_char(char).label
    return f"{char} {label}" if label else ""


def _designation(code: str) -> str:
    info = qstat_info(code)
    if info is not None:
        return info.designation
    return "Unknown QSTAT" if code.strip() else ""


def _meaning(code: str) -> str:
    info = qstat_info(code)
    if info is not None:
        return info.meaning
    return f"QSTAT {code.strip()!r} is not in the status table" if code.strip() else ""


def _decode_distinct(values: pd.Series, *decoders: Callable[[str], str]) -> list[pd.Series]:
    """A categorical column per decoder, each distinct value decoded once."""
    codes, uniques = pd.factorize(values)
    decoded = []
    for decode in decoders:
        label_codes, labels = pd.factorize(
            np.array([decode(str(unique)) for unique in uniques], dtype=object)
        )
        mapped = label_codes[codes] if len(codes) else codes
        categories = pd.Index(labels, dtype=object)
        decoded.append(
            pd.Series(pd.Categorical.from_codes(mapped, categories=categories), index=values.index)
        )
    return decoded


def _numbers_distinct(values: pd.Series) -> pd.Series:
    """Text to float (``"100.00"``, ``"99,5"``; empty or junk → NaN, and so is a number too large for a
    float, such as ``"1e400"``), parsing each distinct value once."""
    codes, uniques = pd.factorize(values.fillna(""))
    text = pd.Series(uniques, dtype=object).astype(str).str.strip().str.replace(",", ".", regex=False)
    numbers = pd.to_numeric(text.where(text != ""), errors="coerce").to_numpy(dtype="float64")
    numbers = np.where(np.isfinite(numbers), numbers, np.nan)
    parsed = np.append(numbers, np.nan)[codes]  # code -1 (none here after fillna) would pick the NaN
    return pd.Series(parsed, index=values.index, dtype="float64")


def merge_results(
    input: AddressInput,
    decoded: pd.DataFrame,
    *,
    source: Path | None = None,
    record_id: str = RECORD_ID,
    uploaded_columns: Collection[str] = (),
) -> pd.DataFrame:
    """One row per accepted input row, in input order: RecordId and the pass-through columns (from the input),
    ``ReturnedByService``, the service's status, §2.3 and decoded columns, then the input address as
    ``<Field>_in``. A row the service did not return has ``ReturnedByService`` False and an empty QSTAT.
    Result rows whose RecordId no input row has are logged and left out; a RecordId on several rows is
    refused.

    Args:
        input: the accepted input records.
        decoded: the decoded result rows.
        source: the result file, named in errors (the input file when not given).
        record_id: how the result file names the id column (an agreed alignment's own name).
        uploaded_columns: the upload's columns, echoed by the result; not merged (the input's are kept).

    Raises:
        ResultFileError: the result has no record id column, or not one of its rows matches an input row
            (it cannot be the answer to this upload).
        DuplicateRecordIds: a record id has more than one result row.
    """
    source = source or input.source
    records = input.records
    left = records[[RECORD_ID, *input.passthrough_columns]]
    id_column = next((c for c in decoded.columns if str(c).casefold() == record_id.casefold()), None)
    if id_column is None:
        raise ResultFileError(f"result has no {record_id} column", path=source)
    uploaded = (
        set(input.passthrough_columns)
        | {c for c in decoded.columns if str(c).endswith(UPLOADED_SUFFIX)}
        | (set(uploaded_columns) & set(decoded.columns))
    )
    right = decoded.drop(columns=[c for c in decoded.columns if c in uploaded or c == id_column])
    right.insert(0, RECORD_ID, _record_ids(decoded[id_column]))
    right = right[right[RECORD_ID].notna()]
    repeated = right[RECORD_ID].duplicated(keep=False)
    if repeated.any():
        raise DuplicateRecordIds(sorted(int(i) for i in right.loc[repeated, RECORD_ID].unique()), path=source)
    right.insert(1, RETURNED_COLUMN, True)
    right[RECORD_ID] = right[RECORD_ID].astype("int64")
    matches = right[RECORD_ID].isin(left[RECORD_ID])
    if len(left) and not matches.any():
        raise ResultFileError(
            f"no result row matches the uploaded record ids ({len(decoded)} result rows, "
            f"{len(right)} of them with a {RECORD_ID}; {len(left)} rows uploaded)",
            path=source,
        )
    unmatched = int((~matches).sum())
    if unmatched:
        logger.warning(
            "%d result rows carry a RecordId that no accepted input row has; not merged", unmatched
        )
    merged = left.merge(right, on=RECORD_ID, how="left", sort=False, validate="one_to_one")
    merged[RETURNED_COLUMN] = merged[RETURNED_COLUMN].astype("boolean").fillna(False).astype(bool)
    if "QSTAT" in merged:
        merged["QSTAT"] = merged["QSTAT"].fillna("")
    else:
        merged["QSTAT"] = ""
    missing = ~merged[RETURNED_COLUMN]
    if missing.any():
        for column, text in ((QSTAT_DESIGNATION, NOT_RETURNED), (QSTAT_MEANING, NOT_RETURNED_MEANING)):
            if column in merged:
                merged[column] = merged[column].astype(object).where(~missing, text)
        logger.warning(
            "%d uploaded rows did not come back from the service (%s)", int(missing.sum()), NOT_RETURNED
        )
    for field in ADDRESS_FIELD_NAMES:
        if field in records:
            merged[field + INPUT_SUFFIX] = records[field].to_numpy()
    return merged


def _record_ids(values: pd.Series) -> pd.Series:
    """Record ids as ``Int64``: a whole number an upload can have (``"7"``, ``"7.0"``), else missing — a
    fraction, a number past any row count or not a number at all is the id of no uploaded row."""
    numbers = pd.to_numeric(values, errors="coerce").astype("float64")
    whole = np.isfinite(numbers) & (numbers == np.floor(numbers)) & (numbers.abs() < _LARGEST_RECORD_ID)
    return numbers.where(whole).astype("Int64")


def qstat_summary(decoded: pd.DataFrame) -> pd.DataFrame:
    """Rows per QSTAT with designation, meaning, count and share in percent; spec order, unknown codes next,
    rows without a status last."""
    raw = decoded["QSTAT"].fillna("") if "QSTAT" in decoded else pd.Series([], dtype=str)
    counts = raw.value_counts(sort=False)
    by_code: dict[str, int] = {}
    for value, count in counts.items():
        code = normalize_qstat(value)
        by_code[code] = by_code.get(code, 0) + int(count)
    order = {code: position for position, code in enumerate(QSTAT)}
    codes = sorted(by_code, key=lambda c: (c == "", c not in order, order.get(c, 0), c.zfill(4)))
    total = sum(by_code.values())
    rows = [
        {
            "QSTAT": code,
            "Designation": _designation(code) if code else "(no status)",
            "Meaning": _meaning(code) if code else "no QSTAT delivered for these rows",
            "Count": by_code[code],
            "Share %": round(100.0 * by_code[code] / total, 2) if total else 0.0,
        }
        for code in codes
    ]
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS).astype({"Count": "int64", "Share %": "float64"})


def read_moves_file(
    path: Path, *, header: bool | None = None, limits: TableLimits = TABLE_LIMITS
) -> pd.DataFrame:
    """Read a moves file (layout not given by the spec) as strings, detecting encoding and delimiter.

    ``header=None`` decides from the first row: it is a header unless a cell is all digits (a postcode, a
    date) — data rows of a moves file always carry those. Without a header the columns are
    ``Column1`` … ``ColumnN``. Ragged rows are padded with ``""``, once the lines are known to be within
    ``limits`` (their bytes and number measured before the file is read, their fields before it is split).

    Raises:
        ResultUnreadable: the file is over a limit.
    """
    encoding = detect_encoding(path)
    _refuse_unreadable(
        path,
        scan_lines(path, encoding=encoding, stop_above=limits.max_line_bytes).overrun(
            limits, exact_fields=True
        ),
    )
    text = path.read_text(encoding=encoding, errors="replace")
    # Lines end at a line feed or carriage return only: str.splitlines would also split at a form feed,
    # a NEL or a line separator inside a value, making two rows of one.
    lines = [line for line in _LINE_END.split(text) if line.strip()]
    if not lines:
        return pd.DataFrame()
    delimiter = sniff_delimiter(lines[0]) or "\t"
    widest = max(range(len(lines)), key=lambda number: lines[number].count(delimiter))
    _refuse_unreadable(
        path, limits.columns(lines[widest].count(delimiter) + 1, f"non-empty line {widest + 1:,}")
    )
    rows = [row for row in read_rows("\n".join(lines), delimiter, quoting=csv.QUOTE_NONE) if row]
    if header is None:
        header = not any(cell.strip().isdigit() for cell in rows[0])
    width = max(len(row) for row in rows)
    if header:
        first = [cell.strip() for cell in rows[0]]
        names = [name or f"Column{n}" for n, name in enumerate(first + [""] * (width - len(first)), start=1)]
        rows = rows[1:]
    else:
        names = [f"Column{n}" for n in range(1, width + 1)]
    return pd.DataFrame([row + [""] * (width - len(row)) for row in rows], columns=names, dtype=str)


def write_address_results(
    merged: pd.DataFrame,
    summary: pd.DataFrame,
    out_dir: Path,
    *,
    moves: pd.DataFrame | None = None,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
) -> list[Path]:
    """Write ``results.csv``, ``results.xlsx`` (sheets Results, QSTAT summary and, with a moves file,
    Moves) and ``moves.csv`` when moves are given; returns the paths written.

    The CSV files are written in ``csv_style``'s dialect; with its guard a text cell that a spreadsheet
    would run as a formula gets a leading ``'`` (:func:`fileio.reports.neutralise_formulas`), unless it is a
    code of the :data:`CODE_COLUMNS` that matches its grammar; the workbook never needs it (its cells are
    written as text, never as formulas).
    """
    paths = [write_csv(merged, out_dir / "results.csv", style=csv_style, code_columns=CODE_COLUMNS)]
    sheets = {"Results": merged, "QSTAT summary": summary}
    if moves is not None:
        sheets["Moves"] = moves
        paths.append(write_csv(moves, out_dir / "moves.csv", style=csv_style))
    paths.insert(1, write_xlsx(out_dir / "results.xlsx", sheets))
    return paths
