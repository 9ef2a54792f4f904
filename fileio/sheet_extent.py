"""Measuring a worksheet before the workbook reader builds its grid: the dimension its XML declares and the
extent of the cells it holds, read from the .xlsx archive as a stream, so that a far cell is measured, never
allocated (the reader makes a grid from A1 to the farthest cell: one cell at XFD1048576 is 17 billion).

Cells are placed as the reader places them: by their ``r`` reference, else after the previous cell of the
row (a row by its ``r``, else after the previous row). Every cell element counts, empty or not.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from xml.etree import ElementTree

from fileio.lazy import lazy_module
from fileio.limits import Overrun, TableLimits

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")  # imported on first use: reading a text file's head needs none

_CHUNK = 1 << 20
# Workbook parts read whole to find a worksheet's part (they hold a line per sheet); when one is larger, the
# part is not looked for and every part of the archive is measured instead.
_SMALL_PART = 16 << 20
_DIMENSION = re.compile(rb"<(?:[^\s<>/:!?]+:)?dimension\b[^>]*?\sref\s*=\s*[\"']([^\"']*)[\"']")
_SHEET_DATA = re.compile(rb"<(?:[^\s<>/:!?]+:)?sheetData[\s/>]")
_REFERENCE = re.compile(rb"([A-Za-z]*)([0-9]*)")
# Row and cell tags, as a lenient XML reader meets them (a namespace prefix, any attribute order, either
# quote, a self-closing row).
_TAG = re.compile(rb"<(/?)(?:[^\s<>/:!?]+:)?(row|c)(?=[\s/>])([^>]*)>")
R_ATTRIBUTE = re.compile(rb"(?:^|\s)r\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
"""A tag's ``r`` attribute (a cell's reference, a row's number), in either quote."""
_PREFIXED_CELL = re.compile(rb"<[^\s<>/:!?]+:c[\s/>]")
_RELATIONSHIPS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_OFFICE_DOCUMENT = "/officeDocument"
ARCHIVE_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    RuntimeError,
    NotImplementedError,
    ValueError,
)
"""What reading a damaged or unsupported .xlsx archive raises."""
_LT, _QUOTE, _ZERO, _NINE = ord("<"), ord('"'), ord("0"), ord("9")
_AFTER_NAME = b" \t\r\n/>"  # what may follow an element's name
_MAX_LETTERS, _MAX_DIGITS = 3, 7  # XFD and 1048576; a longer reference is measured the slow way
_PADDING = 32  # zero bytes after a chunk: a reference read past a cut-off tag stays inside
_PREFIX = int.from_bytes(b'<c r="', "little")
_PREFIX_MASK = (1 << 48) - 1


@dataclass(frozen=True)
class Extent:
    """Rows and columns from A1 to the farthest cell (0 and 0 for a sheet without cells)."""

    rows: int = 0
    columns: int = 0

    def cells(self) -> int:
        return self.rows * self.columns

    def __or__(self, other: Extent) -> Extent:
        return Extent(max(self.rows, other.rows), max(self.columns, other.columns))


def worksheet_overrun(path: Path, sheet: str, limits: TableLimits) -> Overrun | None:
    """The first limit the worksheet named ``sheet`` passes, by its declared dimension, then by the cells it
    holds (cells from A1 to the farthest, rows after the header, columns), or None. Its part of the archive
    is found through the workbook's relationships; when that fails, every part of the archive is measured.

    Raises:
        ValueError: the archive or a part of it cannot be read.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            for member in _worksheet_members(archive, sheet):
                found = _member_overrun(archive, member, sheet, limits)
                if found is not None:
                    return found
    except ARCHIVE_ERRORS as exc:
        raise ValueError(f"the worksheet cannot be measured: {exc}") from exc
    return None


def _member_overrun(archive: zipfile.ZipFile, member: str, sheet: str, limits: TableLimits) -> Overrun | None:
    where = f"worksheet {sheet!r}"
    measured = measure_member(archive, member, limits, where=where)
    if isinstance(measured, Overrun):
        return measured
    if found := limits.cells(
        measured.rows, measured.columns, f"{where} has a cell at {_reference(measured)}"
    ):
        return found
    return limits.rows(max(measured.rows - 1, 0), where) or limits.columns(measured.columns, where)


def measure_member(
    archive: zipfile.ZipFile, member: str, limits: TableLimits, *, where: str = "the worksheet"
) -> Extent | Overrun:
    """The extent of the cells of one worksheet part, or the refusal of its declared dimension by the
    cells limit. The measuring stops once the extent passes ``limits``: the extent is then as far as it
    got, which is over them already."""
    measure = _Measure(limits)
    for chunk in tag_chunks(archive, member):
        if not measure.declared_checked:
            found = measure.check_declared(chunk, where)
            if found is not None:
                return found
        if not measure.feed(chunk):
            break
    if not measure.exact:  # a cell the quick reading cannot place: every tag, one by one
        measure = _Measure(limits)
        for chunk in tag_chunks(archive, member):
            if not measure.feed_tags(chunk):
                break
    return measure.extent


class _Measure:
    """The extent of one worksheet's cells, read a chunk of whole tags at a time."""

    def __init__(self, limits: TableLimits) -> None:
        self.limits = limits
        self.extent = Extent()
        self.exact = True  # False: a cell the quick reading cannot place was met
        self.declared_checked = False
        self._row = 0  # the reader's row and column for a cell without a reference (0-based)
        self._column = 0

    def check_declared(self, chunk: bytes, where: str) -> Overrun | None:
        """The dimension the sheet declares (before its data), judged by the cells limit."""
        data = _SHEET_DATA.search(chunk)
        found = _DIMENSION.search(chunk, 0, data.start() if data else len(chunk))
        if found is None:
            self.declared_checked = data is not None
            return None
        self.declared_checked = True
        declared = _parse_reference(found.group(1).split(b":")[-1])
        if declared is None:
            return None
        return self.limits.cells(
            declared.rows,
            declared.columns,
            f"{where} declares the dimension {found.group(1)[:40].decode('ascii', 'replace')}",
        )

    def over(self) -> bool:
        extent = self.extent
        return (
            extent.rows - 1 > self.limits.max_rows
            or extent.columns > self.limits.max_columns
            or extent.cells() > self.limits.max_cells
        )

    def feed(self, chunk: bytes) -> bool:
        """Read the cells of ``chunk`` the quick way: every cell ``<c r="A1"`` with a plain reference (as
        every common writer has it), judged all at once. False when done: over a limit, or a cell the quick
        way cannot place (``exact`` is then False)."""
        extent = _quick_extent(chunk)
        if extent is None:
            self.exact = False
            return False
        self.extent |= extent
        return not self.over()

    def feed_tags(self, chunk: bytes) -> bool:
        """Read the row and cell tags of ``chunk`` one by one, as the reader does; False when over a limit.

        Raises:
            ValueError: a reference that is not letters then digits (the reader refuses it too).
        """
        for match in _TAG.finditer(chunk):
            closing, name, attributes = match.groups()
            self_closing = attributes.endswith(b"/")
            if name == b"row":
                if not closing:
                    reference = _attribute_r(attributes)
                    if reference is not None:
                        self._row = _place(reference, column=False).rows - 1
                if closing or self_closing:
                    self._row, self._column = self._row + 1, 0
                continue
            if closing:
                continue
            reference = _attribute_r(attributes)
            if reference is not None:
                place = _place(reference)
                row, self._column = place.rows, place.columns - 1
            else:
                row = self._row + 1
            self.extent |= Extent(row, self._column + 1)
            self._column += 1
            if self.over():
                return False
        return True


def _quick_extent(chunk: bytes) -> Extent | None:
    """The extent of the cells of ``chunk`` (whole tags) when every one is written ``<c r="XFD1048576"``
    (one to three letters, one to seven digits), else None. Each cell's reference is looked at through a
    window of bytes after its tag's start; the farthest column and row are found by comparing the letters
    and digits as big-endian numbers, longest first, without converting every reference."""
    data = np.frombuffer(chunk + bytes(_PADDING), dtype=np.uint8)
    size = len(chunk)
    starts = _pairs(chunk, b"<c")
    starts = starts[np.isin(data[starts + 2], np.frombuffer(_AFTER_NAME, dtype=np.uint8))]
    colons = _pairs(chunk, b":c")  # a cell with a namespace prefix, <x:c, is the slow way's
    if len(colons) and _PREFIXED_CELL.search(chunk) is not None:
        return None
    if not len(starts):
        return Extent()
    windows = np.lib.stride_tricks.as_strided(data, shape=(size, 16), strides=(1, 1))[starts]
    if not ((windows[:, :8].copy().view(np.uint64)[:, 0] & _PREFIX_MASK) == _PREFIX).all():
        return None  # a cell whose first attribute is not r="…": the slow way
    lowered = windows[:, 6 : 6 + _MAX_LETTERS + 1] | 0x20
    letters = _leading(lowered, ord("a"), ord("z"))
    digits = np.lib.stride_tricks.as_strided(data, shape=(size, 8), strides=(1, 1))[starts + 6 + letters]
    width = _leading(digits, _ZERO, _NINE)
    plain = (letters >= 1) & (letters <= _MAX_LETTERS) & (width >= 1) & (width <= _MAX_DIGITS)
    if not (plain & (data[starts + 6 + letters + width] == _QUOTE)).all():
        return None
    return Extent(_largest(digits, width), _largest(lowered, letters))


def _pairs(chunk: bytes, pair: bytes) -> np.ndarray:
    """Where the two bytes ``pair`` occur in ``chunk``, in no order: compared as 16-bit numbers at even and
    at odd offsets, which looks at each byte half as often as comparing it twice."""
    key = int.from_bytes(pair, "little")
    even = np.frombuffer(chunk, dtype="<u2", count=len(chunk) // 2)
    odd = np.frombuffer(chunk, dtype="<u2", offset=1, count=(len(chunk) - 1) // 2)
    return np.concatenate((np.flatnonzero(even == key) * 2, np.flatnonzero(odd == key) * 2 + 1))


def _leading(symbols: np.ndarray, low: int, high: int) -> np.ndarray:
    """How many of each row's first symbols lie in ``low``..``high``."""
    run = np.ones(len(symbols), dtype=bool)
    count = np.zeros(len(symbols), dtype=np.int64)
    for position in range(symbols.shape[1]):
        column = symbols[:, position]
        run &= (column >= low) & (column <= high)
        count += run
    return count


def _largest(symbols: np.ndarray, lengths: np.ndarray) -> int:
    """The largest of the references' rows (digits) or columns (letters): among the longest, the one whose
    symbols are largest as a big-endian number, as a number."""
    length = int(lengths.max())
    longest = symbols if (lengths == length).all() else symbols[lengths == length]
    keys = np.zeros((len(longest), 8), dtype=np.uint8)
    keys[:, :length] = longest[:, :length]
    best = bytes(keys[int(np.argmax(keys.view(">u8").ravel()))][:length])
    if best.isdigit():
        return int(best)
    number = 0
    for letter in best.upper():
        number = number * 26 + letter - ord("A") + 1
    return number


def _attribute_r(attributes: bytes) -> bytes | None:
    found = R_ATTRIBUTE.search(attributes)
    if found is None:
        return None
    return found.group(1) if found.group(1) is not None else found.group(2)


def _place(reference: bytes, *, column: bool = True) -> Extent:
    """Where a reference the reader reads puts a cell (or, without ``column``, a row: digits only).

    Raises:
        ValueError: it is not letters then digits (the reader refuses it too).
    """
    place = _parse_reference(reference, column=column)
    if place is None:
        raise ValueError(f"cell reference {reference[:40]!r} is not a column and a row")
    return place


def _parse_reference(reference: bytes, *, column: bool = True) -> Extent | None:
    """``XFD1048576`` as rows and columns from A1; None when it is not letters then digits."""
    match = _REFERENCE.fullmatch(reference.strip())
    if match is None or not match.group(2) or (column and not match.group(1)):
        return None
    columns = 0
    for letter in match.group(1).upper():
        columns = columns * 26 + letter - ord("A") + 1
    return Extent(int(match.group(2)), columns)


def _reference(extent: Extent) -> str:
    """The farthest corner as a cell reference: ``XFD1048576``."""
    letters, number = "", extent.columns
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return f"{letters}{extent.rows}"


def tag_chunks(archive: zipfile.ZipFile, member: str) -> Iterator[bytes]:
    """The member's bytes in chunks that end after a whole tag (the rest waits for the next chunk)."""
    with archive.open(member) as stream:
        held = b""
        while block := stream.read(_CHUNK):
            block = held + block
            cut = block.rfind(b"<")
            if cut <= 0:
                held = block
                continue
            held = block[cut:]
            yield block[:cut]
        if held:
            yield held


def _worksheet_members(archive: zipfile.ZipFile, sheet: str) -> list[str]:
    """The archive members the reader may read as the worksheet ``sheet``: its part (see
    :func:`worksheet_parts`), or else every part of the archive."""
    return worksheet_parts(archive, sheet) or [
        info.filename for info in archive.infolist() if not info.is_dir()
    ]


def worksheet_parts(archive: zipfile.ZipFile, sheet: str) -> list[str]:
    """The archive members holding the worksheet ``sheet``, found as the reader finds its part (package
    relationships → workbook → its relationships; names compared without case: more than one member when
    names differ in case alone); empty when it is not found so."""
    names = {info.filename: info for info in archive.infolist() if not info.is_dir()}
    by_folded: dict[str, list[str]] = {}
    for name in names:
        by_folded.setdefault(name.replace("\\", "/").lower(), []).append(name)

    def members(path: str) -> list[str]:
        return by_folded.get(path.lstrip("/").lower(), [])

    def small_xml(path: str) -> ElementTree.Element | None:
        found = members(path)
        if len(found) != 1 or names[found[0]].file_size > _SMALL_PART:
            return None
        try:
            return ElementTree.fromstring(archive.read(found[0]))
        except ElementTree.ParseError:
            return None

    def targets(path: str) -> dict[str, tuple[str, str]]:
        root = small_xml(path)
        if root is None:
            return {}
        return {
            element.get("Id", ""): (element.get("Target", ""), element.get("Type", ""))
            for element in root.iter(f"{{{_RELATIONSHIPS_NS}}}Relationship")
        }

    document = next(
        (target for target, kind in targets("_rels/.rels").values() if kind.endswith(_OFFICE_DOCUMENT)),
        "xl/workbook.xml",
    )
    folder = posixpath.dirname(document.lstrip("/"))
    prefix = f"{folder}/" if folder else ""  # the reader takes the folder, and workbook.xml in it
    relationships = targets(f"{prefix}_rels/workbook.xml.rels")
    root = small_xml(f"{prefix}workbook.xml")
    if root is not None:
        for element in root.iter():
            if element.tag.rsplit("}", 1)[-1] != "sheet" or element.get("name") != sheet:
                continue
            relation = next((value for key, value in element.attrib.items() if key.endswith("}id")), None)
            target = relationships.get(relation or "", ("", ""))[0]
            if target:
                part = target[1:] if target.startswith("/") else prefix + target
                found = members(part)
                if found:
                    return found
    return []
