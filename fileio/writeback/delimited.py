"""A delimited record cut into its fields as the table reader reads them, and written again with some fields
changed: an unchanged field keeps its exact text (its quotes, its spaces), a changed one is quoted when it was
quoted or when its value needs quotes (the delimiter, a quote or a line break in it), quotes inside doubled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fileio.line_accounting import MAX_QUOTED_LINES, universal_newlines
from fileio.writeback.text_file import Cell

_QUOTE = '"'


def record_cells(record: str, delimiter: str) -> list[Cell] | None:
    """The fields of a record (its lines without the last line ending) as the reader reads them: a field
    starting with a quote runs to the closing quote (``""`` inside is a quote) and takes what follows it up
    to the delimiter as it is; any other field runs to the delimiter, quotes and all. Line breaks in a value
    read as ``\\n``. None when a quote is never closed."""
    cells: list[Cell] = []
    position, length = 0, len(record)
    while True:
        start = position
        quoted = record.startswith(_QUOTE, position)
        if quoted:
            parts, position = _quoted(record, position + 1)
            if parts is None:
                return None
        else:
            parts = []
        end = record.find(delimiter, position)
        end = length if end < 0 else end
        parts.append(record[position:end])
        cells.append(Cell(start, end, universal_newlines("".join(parts)), quoted))
        if end >= length:
            return cells
        position = end + 1


def _quoted(record: str, position: int) -> tuple[list[str] | None, int]:
    """The parts of a quoted value starting at ``position`` (after its opening quote) and where the text
    after its closing quote starts; None when the quote is never closed."""
    parts: list[str] = []
    while True:
        closing = record.find(_QUOTE, position)
        if closing < 0:
            return None, position
        parts.append(record[position:closing])
        if record.startswith(_QUOTE, closing + 1):
            parts.append(_QUOTE)
            position = closing + 2
            continue
        return parts, closing + 1


def field_text(value: str, delimiter: str, *, quoted: bool) -> str:
    """A value as a field: in quotes (quotes inside doubled) when ``quoted`` or when the value needs them."""
    if quoted or any(char in value for char in (delimiter, _QUOTE, "\r", "\n")):
        return _QUOTE + value.replace(_QUOTE, _QUOTE * 2) + _QUOTE
    return value


@dataclass(frozen=True)
class DelimitedFormat:
    """The records of a delimited file with ``width`` header fields."""

    delimiter: str
    width: int

    def cells(self, record: str) -> list[Cell] | None:
        return record_cells(record, self.delimiter)

    def refusal(self, value: str, position: int) -> str | None:
        """A value whose line breaks the reader would take for a quote that swallows rows: more lines
        than a quoted cell may hold, or a line with as many delimiters as a whole record."""
        lines = universal_newlines(value).split("\n")
        if len(lines) > MAX_QUOTED_LINES:
            return (
                f"the value has {len(lines)} lines, more than the {MAX_QUOTED_LINES} a quoted cell may hold"
            )
        if self.width >= 3 and any(line.count(self.delimiter) >= self.width - 1 for line in lines[1:]):
            return "a line of the value holds as many delimiters as a whole record"
        return None

    def rewrite(self, record: str, cells: Sequence[Cell], values: Mapping[int, str]) -> str:
        """The record with new values; a field past the record's last one is added, with empty fields
        before it."""
        pieces: list[str] = []
        done = 0
        for position in sorted(values):
            if position >= len(cells):
                break
            cell = cells[position]
            pieces += [
                record[done : cell.start],
                field_text(values[position], self.delimiter, quoted=cell.quoted),
            ]
            done = cell.end
        pieces.append(record[done:])
        added = [position for position in values if position >= len(cells)]
        if added:
            fields = [""] * (max(added) + 1 - len(cells))
            for position in added:
                fields[position - len(cells)] = field_text(values[position], self.delimiter, quoted=False)
            pieces += [self.delimiter, self.delimiter.join(fields)]
        return "".join(pieces)

    def row_refusal(self, row: int, record: str) -> str | None:
        return None
