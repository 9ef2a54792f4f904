"""Per-cell fills and notes added to a workbook that rust_xlsxwriter wrote, which styles whole rows and
notes header cells only: its package (a zip of XML parts) copied with the sheet's annotated rows restyled,
the fills added to the styles, and the notes appended to the comments and VML parts it made for the header
notes, exactly as it (and Excel, and xlsxwriter) writes its own.

The sheet is streamed in blocks of whole rows and only rows with a filled cell are touched, so a sheet of
a hundred thousand rows is rewritten at the speed of decompressing and compressing it.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from fileio.lazy import lazy_module
from fileio.xlsx_vml import NoteShapes

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

_BLOCK_BYTES = 4 << 20
# zlib's default, as rust_xlsxwriter compresses: level 1 would write the 100,000-row review sheet in 0.6 s
# less, and the file 30 % larger.
_COMPRESS_LEVEL = 6
_ZIP64_FROM = 1 << 30  # a sheet this large may grow past the 2 GiB a zip entry holds without ZIP64
_ROW_START = b'<row r="'
_LAST_ROW = re.compile(rb'<row r="(\d+)"')
_CELL_REF = re.compile(rb'<c r="([A-Z]+)\d+"')
_STYLE_ATTR = re.compile(rb' s="(\d+)"')
_CELL_XFS = re.compile(r'<cellXfs count="(\d+)">(.*?)</cellXfs>', re.S)
_XF = re.compile(r"<xf\b[^>]*?(?:/>|>.*?</xf>)", re.S)
_FILLS = re.compile(r'<fills count="(\d+)">(.*?)</fills>', re.S)
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
MAX_NOTE = 32_767  # characters, as xlsxwriter cuts a comment


@dataclass(frozen=True)
class CellMarks:
    """The annotated cells of one sheet, sorted by row and column (0-based sheet coordinates: the header
    is row 0).

    Attributes:
        rows, columns: the cells' coordinates (int arrays of one length).
        fills: per cell, the index of its colour in ``colors`` or -1 for no fill.
        notes: per cell, its note or None.
        colors: the fill colours, ``"#RRGGBB"``.
    """

    rows: np.ndarray
    columns: np.ndarray
    fills: np.ndarray
    notes: Sequence[str | None]
    colors: Sequence[str]


def annotate_package(
    source: Path | IO[bytes],
    target: Path,
    *,
    sheet: int,
    marks: CellMarks,
    author: str,
    column_pixels: Sequence[int],
) -> None:
    """Copy the workbook ``source`` to ``target`` with ``marks`` added to its ``sheet``-th worksheet (from 1):
    a filled cell takes the style it had (or its row's) with the fill in its place; a note is appended to
    the comments of the sheet, by ``author``, with its shape in the sheet's VML drawing placed as Excel
    places a note beside its cell (``column_pixels``: the widths of the sheet's columns in pixels).

    Raises:
        ValueError: the sheet has notes to add but no comments part (rust_xlsxwriter writes one when the
            sheet has a header note).
    """
    sheet_part = f"xl/worksheets/sheet{sheet}.xml"
    with zipfile.ZipFile(source) as package:
        comments, drawing = _note_parts(package, sheet)
        noted = [index for index, note in enumerate(marks.notes) if note is not None]
        if noted and (comments is None or drawing is None):
            raise ValueError(f"{sheet_part} has no comments part for the notes (it needs a header note)")
        styles = _Styles(package.read("xl/styles.xml").decode("utf-8"))
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=_COMPRESS_LEVEL) as result:
            for info in package.infolist():
                name = info.filename
                if name == sheet_part:
                    large = info.file_size > _ZIP64_FROM  # its size is not known before it is written
                    with result.open(name, "w", force_zip64=large) as out, package.open(info) as sheet_in:
                        for piece in _annotated_sheet(sheet_in, marks, styles):
                            out.write(piece)
                    continue
                data = package.read(info)
                if name == comments:
                    data = _with_comments(data.decode("utf-8"), marks, noted, author).encode("utf-8")
                elif name == drawing:
                    rows, columns = marks.rows[noted].tolist(), marks.columns[noted].tolist()
                    shapes = NoteShapes(column_pixels)
                    data = shapes.appended(data.decode("utf-8"), rows, columns).encode("utf-8")
                elif name == "xl/styles.xml":
                    continue  # last: the sheet's fills have made their formats by then
                result.writestr(name, data)
            result.writestr("xl/styles.xml", styles.text())


def _note_parts(package: zipfile.ZipFile, sheet: int) -> tuple[str | None, str | None]:
    """The sheet's comments and VML drawing parts, by its relationships (None where it has none)."""
    try:
        rels = package.read(f"xl/worksheets/_rels/sheet{sheet}.xml.rels").decode("utf-8")
    except KeyError:
        return None, None
    targets = dict(re.findall(r'Type="' + re.escape(_RELS) + r'(\w+)" Target="\.\./([^"]+)"', rels))
    comments, drawing = targets.get("comments"), targets.get("vmlDrawing")
    return (None if comments is None else f"xl/{comments}"), (None if drawing is None else f"xl/{drawing}")


class _Styles:
    """styles.xml with the cell formats the fills need: a format like an existing one with a solid fill of
    a colour in its place, made once per (format, colour)."""

    def __init__(self, text: str) -> None:
        self._text = text
        xfs = _CELL_XFS.search(text)
        fills = _FILLS.search(text)
        if xfs is None or fills is None:
            raise ValueError("styles.xml has no cellXfs or fills")
        self._xfs = _XF.findall(xfs.group(2))
        self._fill_count = int(fills.group(1))
        self._new_fills: dict[str, int] = {}
        self._made: dict[tuple[int, str], int] = {}

    def filled(self, xf: int, color: str) -> int:
        """The index of the cell format ``xf`` with a solid ``color`` fill."""
        made = self._made.get((xf, color))
        if made is not None:
            return made
        fill = self._new_fills.get(color)
        if fill is None:
            fill = self._new_fills[color] = self._fill_count + len(self._new_fills)
        base = self._xfs[xf] if xf < len(self._xfs) else self._xfs[0]
        format_ = re.sub(r'fillId="\d+"', f'fillId="{fill}"', base, count=1)
        if "applyFill=" not in format_:
            format_ = re.sub(r"\s*(/?>)", r' applyFill="1"\1', format_, count=1)
        if format_ not in self._xfs:
            self._xfs.append(format_)
        self._made[(xf, color)] = made = self._xfs.index(format_)
        return made

    def text(self) -> str:
        """styles.xml with the fills and formats made."""
        if not self._made:
            return self._text
        fills = "".join(
            '<fill><patternFill patternType="solid"><fgColor rgb="FF'
            + color.lstrip("#").upper()
            + '"/><bgColor indexed="64"/></patternFill></fill>'
            for color in self._new_fills
        )
        text = _FILLS.sub(
            lambda m: f'<fills count="{self._fill_count + len(self._new_fills)}">{m.group(2)}{fills}</fills>',
            self._text,
            count=1,
        )
        return _CELL_XFS.sub(
            lambda m: f'<cellXfs count="{len(self._xfs)}">{"".join(self._xfs)}</cellXfs>', text, count=1
        )


def _annotated_sheet(sheet: IO[bytes], marks: CellMarks, styles: _Styles) -> Iterator[bytes]:
    """The sheet's XML in pieces, the rows with filled cells rewritten, streamed in blocks of whole rows."""
    filled = marks.fills >= 0
    rows, columns, fills = marks.rows[filled], marks.columns[filled], marks.fills[filled]
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if len(rows) else np.array([], dtype=int)
    groups = _Groups(rows, columns, fills, np.r_[starts, len(rows)])
    rewriter = _RowRewriter(styles, marks.colors)
    pending = b""
    previous = 0  # the number of the last row of the blocks before
    while True:
        chunk = sheet.read(_BLOCK_BYTES)
        last: int | None = None
        if chunk:
            buffer = pending + chunk
            cut = buffer.rfind(_ROW_START)
            if cut <= 0:  # no whole row yet
                pending = buffer
                continue
            block, pending = buffer[:cut], buffer[cut:]
            last = _last_row(block) or previous
        else:
            block, pending = _without_repeated_row(pending, previous), b""
        yield b"".join(rewriter.block(block, last, groups))
        if not chunk:
            return
        previous = last or previous


def _without_repeated_row(block: bytes, previous: int) -> bytes:
    """The last block of the sheet without the empty copy of the sheet's last row that rustpy-xlsxwriter
    0.8 writes after it when it has a row format (``<row r="4" s="1" customFormat="1"/>`` after row 4): a
    row twice is a file Excel repairs."""
    start = block.find(_ROW_START)
    found = _LAST_ROW.match(block, start) if start >= 0 else None
    if found is None or int(found.group(1)) != previous:
        return block
    end = block.index(b">", start) + 1
    return block[:start] + block[end:] if block[end - 2 : end] == b"/>" else block


def _last_row(block: bytes) -> int:
    """The number (1-based) of the last row that starts in ``block``, 0 when none does."""
    start = block.rfind(_ROW_START)
    found = _LAST_ROW.match(block, start) if start >= 0 else None
    return int(found.group(1)) if found else 0


@dataclass
class _Groups:
    """The filled cells by row: group ``i`` is ``rows[bounds[i]:bounds[i + 1]]`` (one row); ``next`` is
    the first group not yet written."""

    rows: np.ndarray
    columns: np.ndarray
    fills: np.ndarray
    bounds: np.ndarray
    next: int = 0

    def row(self, group: int) -> tuple[int, list[tuple[int, int]]]:
        """The group's row number (1-based) and its (column, colour index) cells."""
        first, end = int(self.bounds[group]), int(self.bounds[group + 1])
        cells = list(zip(self.columns[first:end].tolist(), self.fills[first:end].tolist(), strict=True))
        return int(self.rows[first]) + 1, cells


@dataclass
class _RowRewriter:
    styles: _Styles
    colors: Sequence[str]

    def block(self, block: bytes, last: int | None, groups: _Groups) -> list[bytes]:
        """The block in pieces, the rows of the groups it holds rewritten (``last``: its last row number,
        None at the end of the sheet)."""
        pieces: list[bytes] = []
        position = 0
        while groups.next < len(groups.bounds) - 1:
            number, cells = groups.row(groups.next)
            if last is not None and number > last:
                break
            start = block.find(b'<row r="%d"' % number, position)
            if start < 0:  # a row rust_xlsxwriter left out (nothing in it): made here, in its place
                start = _insertion_point(block, position, number)
                pieces += [block[position:start], self._new_row(number, cells)]
                position = start
            else:
                tag_end = block.index(b">", start) + 1
                closed = block[tag_end - 2 : tag_end] == b"/>"
                row_end = tag_end if closed else block.index(b"</row>", tag_end) + len(b"</row>")
                pieces += [block[position:start], self._row(block[start:row_end], number, cells)]
                position = row_end
            groups.next += 1
        pieces.append(block[position:])
        return pieces

    def _new_row(self, number: int, cells: list[tuple[int, int]]) -> bytes:
        body = b"".join(self._blank(number, column, 0, fill) for column, fill in cells)
        return b'<row r="%d">%s</row>' % (number, body)

    def _blank(self, number: int, column: int, xf: int, fill: int) -> bytes:
        style = self.styles.filled(xf, self.colors[fill])
        return b'<c r="%s%d" s="%d"/>' % (column_letters(column).encode(), number, style)

    def _row(self, row: bytes, number: int, cells: list[tuple[int, int]]) -> bytes:
        """A row element with its cells filled: ``cells`` are (column, colour index) by column."""
        tag_end = row.index(b">") + 1
        row_style = _STYLE_ATTR.search(row, 0, tag_end)
        row_xf = int(row_style.group(1)) if row_style else 0
        if row.endswith(b"/>"):
            head, body, tail = row[: tag_end - 2] + b">", b"", b"</row>"
        else:
            head, body, tail = row[:tag_end], row[tag_end : -len(b"</row>")], b"</row>"
        pieces: list[bytes] = [head]
        position = 0
        for column, fill in cells:
            ref = b'<c r="%s%d"' % (column_letters(column).encode(), number)
            found = body.find(ref, position)
            if found < 0:
                insert = _next_cell(body, position, column)
                pieces += [body[position:insert], self._blank(number, column, row_xf, fill)]
                position = insert
                continue
            cell_end = body.index(b">", found)
            style = _STYLE_ATTR.search(body, found, cell_end)
            xf = self.styles.filled(int(style.group(1)) if style else row_xf, self.colors[fill])
            if style:
                pieces += [body[position : style.start()], b' s="%d"' % xf]
                position = style.end()
            else:
                pieces += [body[position : found + len(ref)], b' s="%d"' % xf]
                position = found + len(ref)
        pieces += [body[position:], tail]
        return b"".join(pieces)


def _insertion_point(block: bytes, position: int, number: int) -> int:
    """Where row ``number`` goes in ``block``: before the first row after it, else before the end of the
    sheet's data."""
    for found in _LAST_ROW.finditer(block, position):
        if int(found.group(1)) > number:
            return found.start()
    end = block.find(b"</sheetData>", position)
    if end < 0:
        raise ValueError(f"row {number} has no place in the sheet")
    return end


def _next_cell(body: bytes, position: int, column: int) -> int:
    """Where a cell of ``column`` goes in a row's cells: before the first cell right of it."""
    for found in _CELL_REF.finditer(body, position):
        if column_number(found.group(1).decode()) > column:
            return found.start()
    return len(body)


def column_letters(column: int) -> str:
    """Excel's letters for a 0-based column: 0 → A, 26 → AA."""
    letters = ""
    column += 1
    while column:
        column, remainder = divmod(column - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


def column_number(letters: str) -> int:
    """The 0-based column of Excel's letters: A → 0, AA → 26."""
    number = 0
    for letter in letters:
        number = number * 26 + ord(letter) - 64
    return number - 1


def note_text(text: str) -> str:
    """A note's text as it can stand in XML: characters XML cannot hold left out, at most
    :data:`MAX_NOTE` characters."""
    return _INVALID_XML.sub("", text)[:MAX_NOTE]


def _with_comments(text: str, marks: CellMarks, noted: Sequence[int], author: str) -> str:
    """comments1.xml with the notes appended (after the header's: notes are listed by row)."""
    authors = re.findall(r"<author>(.*?)</author>|<author/>", text)
    escaped_author = _escape(author)
    if escaped_author in authors:
        author_id = authors.index(escaped_author)
    else:
        author_id = len(authors)
        text = text.replace("</authors>", f"<author>{escaped_author}</author></authors>", 1)
    run = '<rPr><sz val="8"/><color indexed="81"/><rFont val="Tahoma"/><family val="2"/></rPr>'
    rows, columns = marks.rows.tolist(), marks.columns.tolist()
    comments = "".join(
        f'<comment ref="{column_letters(columns[index])}{rows[index] + 1}" authorId="{author_id}"><text><r>'
        f'{run}<t xml:space="preserve">{_escape(note_text(marks.notes[index] or ""))}</t></r></text>'
        "</comment>"
        for index in noted
    )
    return text.replace("</commentList>", comments + "</commentList>", 1)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def pixel_widths(widths: Sequence[float], columns: int) -> list[int]:
    """Column widths (Excel's character units) in pixels, as Excel and rust_xlsxwriter convert them, for
    ``columns`` columns (Excel's default width past the given ones)."""
    pixels = [int(width * 12 + 0.5) if width < 1 else int(width * 7 + 0.5) + 5 for width in widths]
    return pixels + [64] * max(0, columns - len(pixels))
