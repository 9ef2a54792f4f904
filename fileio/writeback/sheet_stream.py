"""One worksheet part of an .xlsx read and rewritten as a stream of chunks of whole tags
(:func:`fileio.sheet_extent.tag_chunks`): what the cells of some rows hold (:func:`survey_sheet`), and the
part with some cells replaced by inline strings, missing cells and rows inserted where they belong
(:func:`rewrite_sheet`). Only the row tags of the sheet are looked at, and the cell tags of the rows asked
for; every other byte is copied as it is, so memory holds a chunk and the changes, whatever the sheet's size.

Rows and cells are placed by their ``r`` reference, as every common writer writes them; a row without one,
or rows out of order (a cell of a row asked for likewise), is refused (:class:`SheetShapeError`): such a
sheet is placed otherwise by the reader, and guessing could write a value into another cell.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from fileio.sheet_extent import R_ATTRIBUTE

# Tags as a lenient XML reader meets them (a namespace prefix, any attribute order, either quote).
_OUTER = re.compile(rb"<(/?)((?:[^\s<>/:!?]+:)?)(row|sheetData)(?=[\s/>])([^>]*)>")
_INNER = re.compile(rb"<(/?)((?:[^\s<>/:!?]+:)?)(row|sheetData|c|f|v|is)(?=[\s/>])([^>]*)>")
_S = re.compile(rb"(?:^|\s)s\s*=\s*(?:\"[^\"]*\"|'[^']*')")
_T = re.compile(rb"(?:^|\s)t\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_REFERENCE = re.compile(rb"\s*([A-Za-z]{1,3})([0-9]{1,7})\s*")
_ROW_NUMBER = re.compile(rb"\s*([0-9]{1,7})\s*")
_ESCAPED = re.compile(r"_(x[0-9A-Fa-f]{4}_)")  # the reader decodes _x0041_: its "_" is written _x005F_


class SheetShapeError(ValueError):
    """The worksheet's rows or cells cannot be placed by their references alone."""


@dataclass
class CellSeen:
    """What a cell of the sheet holds: a formula, a value the reader reads (an error value reads as
    none)."""

    formula: bool = False
    value: bool = False


class _Tag(NamedTuple):
    start: int
    end: int
    closing: bool
    prefix: bytes
    name: bytes
    attributes: bytes
    row: int  # the row the tag is in (0 outside a row)
    column: int  # a cell's column (1-based; 0 for other tags)

    @property
    def empty(self) -> bool:
        return self.attributes.endswith(b"/")


def survey_sheet(chunks: Iterable[bytes], rows: Collection[int]) -> dict[int, dict[int, CellSeen]]:
    """The cells of ``rows`` (1-based sheet rows) that the sheet has: row → column (1-based) → what it
    holds.

    Raises:
        SheetShapeError: a row, or a cell of ``rows``, without a reference or out of order.
    """
    seen: dict[int, dict[int, CellSeen]] = {}
    cell: CellSeen | None = None
    error = False
    for _, tag in _walk(chunks, rows):
        if tag is None or tag.row not in rows:
            continue
        if tag.name == b"c":
            cell = None
            if not tag.closing:
                found = seen.setdefault(tag.row, {})[tag.column] = CellSeen()
                cell, error = (None if tag.empty else found), _attribute(_T, tag.attributes) == b"e"
        elif cell is not None and not tag.closing:
            if tag.name == b"f":
                cell.formula = True
            elif tag.name in (b"v", b"is") and not tag.empty and not error:
                cell.value = True
    return seen


def rewrite_sheet(chunks: Iterable[bytes], changes: Mapping[int, Mapping[int, str]]) -> Iterator[bytes]:
    """The sheet's bytes with the cells of ``changes`` (sheet row → column → text, both 1-based) replaced:
    a cell keeps its reference and style and holds the text as an inline string (an empty text leaves it
    empty); a cell or row the sheet lacks is inserted in its place. Every other byte stays.

    Raises:
        SheetShapeError: a row, or a cell of a changed row, without a reference or out of order, or a sheet
            without ``sheetData``.
    """
    rewrite = _Rewrite(changes)
    for chunk, tag in _walk(chunks, changes):
        if tag is None:
            yield rewrite.end_chunk(chunk)
        else:
            rewrite.tag(chunk, tag)
    if rewrite.rows:
        raise SheetShapeError("the worksheet has no sheetData to hold its rows")


class _Rewrite:
    """The state of :func:`rewrite_sheet` between tags: what is written of the current chunk, the rows
    still to write and the cells of the current row still to write."""

    def __init__(self, changes: Mapping[int, Mapping[int, str]]) -> None:
        self.rows = {row: dict(sorted(cells.items())) for row, cells in sorted(changes.items()) if cells}
        self.cells: dict[int, str] = {}
        self.out: list[bytes] = []
        self.copied = 0  # the bytes of the chunk up to here are written (or dropped)
        self.skipping = False  # inside a replaced cell: its bytes are dropped
        self.prefix = b""
        self.current = 0  # the changed row being written

    def end_chunk(self, chunk: bytes) -> bytes:
        if not self.skipping:
            self.out.append(chunk[self.copied :])
        written, self.out, self.copied = b"".join(self.out), [], 0
        return written

    def insert(self, chunk: bytes, position: int, data: bytes, resume: int | None = None) -> None:
        """Write the chunk up to ``position``, then ``data``; go on from ``resume`` (else ``position``)."""
        self.out += (chunk[self.copied : position], data)
        self.copied = position if resume is None else resume

    def tag(self, chunk: bytes, tag: _Tag) -> None:
        if self.skipping:
            if tag.closing and tag.name == b"c":
                self.skipping, self.copied = False, tag.end
            return
        if tag.name == b"sheetData":
            self.prefix = tag.prefix
            if tag.closing or tag.empty:
                rows = self.rows_before(None)
                if tag.closing:
                    self.insert(chunk, tag.start, rows)
                elif rows:
                    opened = b"<" + tag.prefix + b"sheetData" + tag.attributes[:-1] + b">"
                    self.insert(chunk, tag.start, opened + rows + b"</" + tag.prefix + b"sheetData>", tag.end)
        elif tag.name == b"row":
            self.row_tag(chunk, tag)
        elif tag.name == b"c" and not tag.closing and tag.row == self.current and self.cells:
            self.cell_tag(chunk, tag)

    def row_tag(self, chunk: bytes, tag: _Tag) -> None:
        if tag.closing:
            if self.cells:
                self.insert(chunk, tag.start, self.cells_before(None, tag.prefix, tag.row))
            return
        rows = self.rows_before(tag.row)
        if rows:
            self.insert(chunk, tag.start, rows)
        cells = self.rows.pop(tag.row, None)
        if cells is None:
            return
        self.current, self.cells = tag.row, cells
        if tag.empty:
            opened = b"<" + tag.prefix + b"row" + tag.attributes[:-1] + b">"
            filled = self.cells_before(None, tag.prefix, tag.row)
            self.insert(chunk, tag.start, opened + filled + b"</" + tag.prefix + b"row>", tag.end)

    def cell_tag(self, chunk: bytes, tag: _Tag) -> None:
        before = self.cells_before(tag.column, tag.prefix, tag.row)
        text = self.cells.pop(tag.column, None)
        if text is None:
            if before:
                self.insert(chunk, tag.start, before)
            return
        reference = R_ATTRIBUTE.search(tag.attributes)
        assert reference is not None  # _walk's
        style = _S.search(tag.attributes)
        attributes = reference.group().strip() + (b" " + style.group().strip() if style else b"")
        self.insert(chunk, tag.start, before + _cell(tag.prefix, attributes, text), tag.end)
        self.skipping = not tag.empty

    def cells_before(self, column: int | None, prefix: bytes, row: int) -> bytes:
        """The new cells of the current row left of ``column`` (all when None), taken from those to write."""
        taken = [found for found in self.cells if column is None or found < column]
        return b"".join(
            _cell(prefix, b'r="' + _reference(row, found) + b'"', self.cells.pop(found)) for found in taken
        )

    def rows_before(self, row: int | None) -> bytes:
        """The new rows above ``row`` (all when None), taken from those to write."""
        taken = [found for found in self.rows if row is None or found < row]
        prefix = self.prefix
        return b"".join(
            b"<"
            + prefix
            + b'row r="'
            + str(found).encode()
            + b'">'
            + b"".join(
                _cell(prefix, b'r="' + _reference(found, column) + b'"', text)
                for column, text in self.rows.pop(found).items()
            )
            + b"</"
            + prefix
            + b"row>"
            for found in taken
        )


def _cell(prefix: bytes, attributes: bytes, text: str) -> bytes:
    """A cell element holding ``text`` as an inline string (none when empty)."""
    if not text:
        return b"<" + prefix + b"c " + attributes + b"/>"
    escaped = (
        _ESCAPED.sub(r"_x005F_\1", text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\r", "&#13;")
    )
    return (
        b"<" + prefix + b"c " + attributes + b' t="inlineStr"><' + prefix + b"is><" + prefix
        + b't xml:space="preserve">' + escaped.encode("utf-8") + b"</" + prefix + b"t></" + prefix
        + b"is></" + prefix + b"c>"
    )  # fmt: skip


def _reference(row: int, column: int) -> bytes:
    letters = b""
    while column:
        column, rest = divmod(column - 1, 26)
        letters = bytes((ord("A") + rest,)) + letters
    return letters + str(row).encode()


def _walk(chunks: Iterable[bytes], rows: Collection[int]) -> Iterator[tuple[bytes, _Tag | None]]:
    """The sheet's row tags, and the tags of the cells of ``rows`` (with their ``f``, ``v`` and ``is``
    tags), each with its chunk; None after the last tag of each chunk.

    Raises:
        SheetShapeError: a row (or a cell of ``rows``) without a reference, or not after the one before.
    """
    in_data = False
    row = previous_row = column = 0
    for chunk in chunks:
        position = 0
        while True:
            found = (_INNER if row in rows else _OUTER).search(chunk, position)
            if found is None:
                break
            position = found.end()
            closing, prefix, name, attributes = found.groups()
            closing = bool(closing)
            if name == b"sheetData":
                in_data = not closing and not attributes.endswith(b"/")
            elif not in_data:
                continue
            elif name == b"row" and not closing:
                row = _row_number(attributes, previous_row)
                previous_row, column = row, 0
            elif name == b"c" and not closing:
                column = _column(attributes, row, column)
            tag = _Tag(found.start(), found.end(), closing, prefix, name, attributes, row, column)
            yield chunk, tag
            if name == b"row" and (closing or attributes.endswith(b"/")):
                row = column = 0
        yield chunk, None


def _row_number(attributes: bytes, previous: int) -> int:
    value = _attribute(R_ATTRIBUTE, attributes)
    found = None if value is None else _ROW_NUMBER.fullmatch(value)
    if found is None:
        raise SheetShapeError(f"a row after row {previous} has no row number (r) the write-back can place")
    number = int(found.group(1))
    if number <= previous:
        raise SheetShapeError(f"row {number} comes after row {previous}")
    return number


def _column(attributes: bytes, row: int, previous: int) -> int:
    value = _attribute(R_ATTRIBUTE, attributes)
    found = None if value is None else _REFERENCE.fullmatch(value)
    if found is None:
        raise SheetShapeError(f"a cell of row {row} has no reference (r) the write-back can place")
    letters, number = found.groups()
    if int(number) != row:
        raise SheetShapeError(f"cell {found.group().strip().decode()} stands in row {row}")
    column = 0
    for letter in letters.upper():
        column = column * 26 + letter - ord("A") + 1
    if column <= previous:
        raise SheetShapeError(f"cell {found.group().strip().decode()} comes after a cell right of it")
    return column


def _attribute(pattern: re.Pattern[bytes], attributes: bytes) -> bytes | None:
    found = pattern.search(attributes)
    if found is None:
        return None
    return found.group(1) if found.group(1) is not None else found.group(2)
