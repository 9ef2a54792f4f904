"""A fixed-width record cut into its columns as the table reader reads them (each slice without the spaces
and tabs around it), and written again with a new value left-aligned and padded to its column's width.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate

from fileio.text_tables import fixed_fields
from fileio.writeback.text_file import Cell

_PADDING = " \t"


@dataclass(frozen=True)
class FixedWidthFormat:
    """The records of a fixed-width file; ``header_line``: its first line repeats the column names."""

    widths: tuple[tuple[str, int], ...]
    header_line: bool

    @property
    def _starts(self) -> list[int]:
        return [0, *accumulate(width for _, width in self.widths)]

    def cells(self, record: str) -> list[Cell] | None:
        starts = self._starts
        return [
            Cell(start, start + width, record[start : start + width].strip(_PADDING))
            for start, (_, width) in zip(starts, self.widths, strict=False)
        ]

    def refusal(self, value: str, position: int) -> str | None:
        width = self.widths[position][1]
        if "\r" in value or "\n" in value:
            return "a fixed-width line cannot hold a line break"
        if value != value.strip(_PADDING):
            return "spaces or tabs at the ends of a value are not kept in a fixed-width column"
        if len(value) > width:
            return f"the value has {len(value)} characters; the column is {width} wide"
        return None

    def rewrite(self, record: str, cells: Sequence[Cell], values: Mapping[int, str]) -> str:
        for position, value in values.items():
            cell = cells[position]
            record = record.ljust(cell.start)
            record = record[: cell.start] + value.ljust(cell.end - cell.start) + record[cell.end :]
        return record

    def row_refusal(self, row: int, record: str) -> str | None:
        """The first line of a file without a header line must not come to read as one: it would be
        skipped as the header."""
        names = [name.casefold() for name, _ in self.widths]
        if row == 1 and not self.header_line and fixed_fields(record, self.widths) == names:
            return "the first line would repeat the column names and be read as a header line"
        return None
