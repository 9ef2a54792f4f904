"""The VML shapes of cell notes, as Excel, xlsxwriter and rust_xlsxwriter write them: one hidden text box
per note beside its cell, numbered in blocks of 1024 shapes that the drawing's ``o:idmap`` lists.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

NOTE_WIDTH, NOTE_HEIGHT = 128, 74  # a note's default size in pixels
ROW_PIXELS = 20  # a row of the default height (15 points)
SHAPES_PER_ID = 1024
_SHAPE_ID = re.compile(r'<v:shape id="_x0000_s(\d+)"')
_IDMAP = re.compile(r'<o:idmap v:ext="edit" data="([\d,]+)"/>')
_SHAPE = (
    '<v:shape id="_x0000_s{id}" type="#_x0000_t202" style="position:absolute;margin-left:{left:.16g}pt;'
    'margin-top:{top:.16g}pt;width:{width:.16g}pt;height:{height:.16g}pt;z-index:{z};visibility:hidden" '
    'fillcolor="#ffffe1" o:insetmode="auto"><v:fill color2="#ffffe1"/><v:shadow on="t" color="black" '
    'obscured="t"/><v:path o:connecttype="none"/><v:textbox style="mso-direction-alt:auto"><div '
    'style="text-align:left"></div></v:textbox><x:ClientData ObjectType="Note"><x:MoveWithCells/>'
    "<x:SizeWithCells/><x:Anchor>{anchor}</x:Anchor><x:AutoFill>False</x:AutoFill><x:Row>{row}</x:Row>"
    "<x:Column>{column}</x:Column></x:ClientData></v:shape>"
)


class NoteShapes:
    """Note shapes for a sheet whose columns are ``column_pixels`` wide (Excel's default width past them)
    and whose rows have the default height."""

    def __init__(self, column_pixels: Sequence[int]) -> None:
        self._pixels = list(column_pixels)
        self._across: dict[int, tuple[int, int, int, int, int]] = {}

    def _width(self, column: int) -> int:
        return self._pixels[column] if column < len(self._pixels) else 64

    def across(self, column: int) -> tuple[int, int, int, int, int]:
        """Where the note of a cell in ``column`` lies across the columns: its first column and the offset
        in it, its last column and the offset in it, and its left edge in pixels."""
        found = self._across.get(column)
        if found is None:
            start, offset = column + 1, 15
            left = sum(self._width(number) for number in range(start)) + offset
            while offset >= self._width(start):
                offset -= self._width(start)
                start += 1
            end, rest = start, NOTE_WIDTH + offset
            while rest >= self._width(end):
                rest -= self._width(end)
                end += 1
            found = self._across[column] = (start, offset, end, rest, left)
        return found

    @staticmethod
    def down(row: int) -> tuple[int, int, int, int, int]:
        """Where the note of a cell in ``row`` lies down the rows, as :meth:`across` does across."""
        start, offset = (0, 2) if row == 0 else (row - 1, 10)
        end, rest = divmod(offset + NOTE_HEIGHT, ROW_PIXELS)
        return start, offset, start + end, rest, start * ROW_PIXELS + offset

    def shape(self, shape_id: int, z_index: int, row: int, column: int) -> str:
        """The VML shape of the note on cell (``row``, ``column``), 0-based."""
        first_column, x1, last_column, x2, left = self.across(column)
        first_row, y1, last_row, y2, top = self.down(row)
        return _SHAPE.format(
            id=shape_id,
            left=left * 0.75,
            top=top * 0.75,
            width=NOTE_WIDTH * 0.75,
            height=NOTE_HEIGHT * 0.75,
            z=z_index,
            anchor=f"{first_column}, {x1}, {first_row}, {y1}, {last_column}, {x2}, {last_row}, {y2}",
            row=row,
            column=column,
        )

    def appended(self, drawing: str, rows: Sequence[int], columns: Sequence[int]) -> str:
        """The VML drawing with the shapes of notes on cells (``rows``, ``columns``) after the shapes it
        holds, numbered on from them, and its ``o:idmap`` covering every block of 1024 shape ids used.

        Raises:
            ValueError: the drawing has no note shape to number on from.
        """
        ids = [int(found) for found in _SHAPE_ID.findall(drawing)]
        idmap = _IDMAP.search(drawing)
        if not ids or idmap is None:
            raise ValueError("the VML drawing has no note shape and idmap to continue")
        first_block = int(idmap.group(1).split(",")[0])
        next_id, z_index = max(ids) + 1, len(ids) + 1
        shapes = "".join(
            self.shape(next_id + number, z_index + number, row, column)
            for number, (row, column) in enumerate(zip(rows, columns, strict=True))
        )
        count = len(ids) + len(rows)
        blocks = ",".join(str(first_block + block) for block in range(count // SHAPES_PER_ID + 1))
        drawing = _IDMAP.sub(f'<o:idmap v:ext="edit" data="{blocks}"/>', drawing, count=1)
        end = drawing.rindex("</xml>")
        return drawing[:end] + shapes + drawing[end:]
