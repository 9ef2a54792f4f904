"""Writing a text table back: the file's text decoded so that it encodes back to the very same bytes, each
edited row found by the line the reader recorded for it, checked against what the reader read, and rewritten
by its format (:mod:`fileio.writeback.delimited`, :mod:`fileio.writeback.fixed_width`); every other byte of
the file stays as it is.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from fileio.limits import TABLE_MAX_LINE_BYTES_SETTING, TableLimits
from fileio.table_frame import Table
from fileio.writeback.outcome import ROW_NOT_MATCHED, EditLedger, Edits
from fileio.writeback.rows import edited_rows, planned_cells

_BREAK = re.compile(r"\r\n|\r|\n")
# What surrogateescape decodes an undecodable byte to.
_UNDECODED = re.compile("[\udc80-\udcff]")


class Cell(NamedTuple):
    """A field of a record: where it is in the record's text, its value as the reader reads it, and
    whether it is written in quotes."""

    start: int
    end: int
    value: str
    quoted: bool = False


class TextFormat(Protocol):
    """How the records of a text table are cut into cells and written again."""

    def cells(self, record: str) -> list[Cell] | None:
        """The cells of a record (its lines without the last line ending); None when it cannot be cut."""

    def refusal(self, value: str, position: int) -> str | None:
        """Why ``value`` cannot be written into the cell at ``position``; None when it can."""

    def rewrite(self, record: str, cells: Sequence[Cell], values: Mapping[int, str]) -> str:
        """The record with the cells at the positions of ``values`` holding those values instead."""

    def row_refusal(self, row: int, record: str) -> str | None:
        """Why the rewritten ``record`` of ``row`` cannot be written; None when it can."""


@dataclass(frozen=True)
class FileText:
    """A text file's content decoded so that :meth:`encode` gives its bytes back exactly."""

    text: str
    codec: str
    errors: str
    name: str

    def encode(self, text: str) -> bytes:
        return text.encode(self.codec, self.errors)

    def unencodable(self, value: str) -> str | None:
        """Why ``value`` cannot be written in the file's encoding (its first such character); None when
        it can."""
        try:
            value.encode(self.codec)
        except UnicodeEncodeError as exc:
            char = value[exc.start]
            return f"character {char!r} (U+{ord(char):04X}) cannot be written in {self.name}"
        return None


def decode_file(data: bytes, encoding: str) -> FileText | None:
    """A file's text in ``encoding`` as it encodes back to ``data`` (bytes that do not decode kept as
    escapes); None when no decoding gives the bytes back.

    A byte-order mark stays a character of the text (``\\ufeff``), so that it is written back as it was.
    """
    name = codecs.lookup(encoding).name
    codec = name
    if name in ("utf-8", "utf-8-sig"):
        codec = "utf-8"
    elif name in ("utf-16", "utf-32"):  # by the byte-order mark; without one, as Python reads them
        big = data.startswith(codecs.BOM_UTF16_BE if name == "utf-16" else codecs.BOM_UTF32_BE)
        codec = f"{name}-{'be' if big else 'le'}"
    shown = "Windows-1252" if name == "cp1252" else encoding
    for errors in ("surrogateescape", "strict"):
        try:
            text = data.decode(codec, errors)
            if text.encode(codec, errors) == data:
                return FileText(text, codec, errors, shown)
        except UnicodeError:
            continue
    return None


class _Lines:
    """Where each physical line of a text starts (lines end at ``\\r\\n``, ``\\r`` or ``\\n``, as the reader
    counts them), found going forward only: the rows are visited in order."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._breaks = _BREAK.finditer(text)
        self._line = 1
        self._offset = 0

    def start(self, line: int) -> int:
        """The offset of 1-based ``line`` (the end of the text for a line past the last)."""
        while self._line < line:
            found = next(self._breaks, None)
            if found is None:
                return len(self._text)
            self._line += 1
            self._offset = found.end()
        return self._offset


def _line_ending(raw: str) -> str:
    if raw.endswith("\r\n"):
        return "\r\n"
    return raw[-1:] if raw.endswith(("\r", "\n")) else ""


@dataclass
class TextRewrite:
    """One text file written back: its decoded text, its table as the reader read it, the position of
    each column in a record, its format, the limits, and the ledger of what was done."""

    file: FileText
    table: Table
    positions: Mapping[str, int]
    form: TextFormat
    limits: TableLimits
    ledger: EditLedger

    def run(self, edits: Edits) -> str | None:
        """The file's text with the edits made; None when no cell changed."""
        text = self.file.text
        rows = len(self.table.frame)
        assert self.table.lines is not None  # a text table knows its lines
        starts = self.table.lines
        lines = _Lines(text)
        pieces: list[str] = []
        done = 0
        for row, current, row_edits in edited_rows(self.table, edits, self.ledger):
            start = lines.start(int(starts[row - 1]))
            end = lines.start(int(starts[row])) if row < rows else len(text)
            raw = text[start:end]
            ending = _line_ending(raw)
            rewritten = self._edit_row(row, raw[: len(raw) - len(ending)], current, row_edits)
            if rewritten is not None:
                pieces += [text[done:start], rewritten, ending]
                done = end
        if not pieces:
            return None
        pieces.append(text[done:])
        return "".join(pieces)

    def _edit_row(
        self, row: int, record: str, current: Mapping[str, str], edits: Mapping[str, str]
    ) -> str | None:
        """The record of ``row`` with its edits made (those that cannot be are skipped); None when it is
        left as it is."""
        if _UNDECODED.search(record):
            self.ledger.skip(row, edits, f"the row holds bytes that are not valid {self.file.name}")
            return None
        cells = self.form.cells(record)
        if cells is None or any(
            _value(cells, self.positions[column]) != value for column, value in current.items()
        ):
            self.ledger.skip(row, edits, ROW_NOT_MATCHED)
            return None

        def refusal(column: str, value: str) -> str | None:
            return self.file.unencodable(value) or self.form.refusal(value, self.positions[column])

        planned = planned_cells(row, current, edits, self.ledger, refusal)
        if not planned:
            return None
        values = {self.positions[column]: value for column, value in planned.items()}
        rewritten = self.form.rewrite(record, cells, values)
        reason = self.form.row_refusal(row, rewritten) or self._line_refusal(rewritten)
        if reason is not None:
            self.ledger.skip(row, planned, reason)
            return None
        self.ledger.changed(row, len(planned))
        return rewritten

    def _line_refusal(self, record: str) -> str | None:
        """Why a rewritten record cannot be written: a line of it longer than the reader allows."""
        limit = self.limits.max_line_bytes
        for line in _BREAK.split(record):
            if len(self.file.encode(line)) > limit:
                return (
                    f"the line would be longer than the limit of {limit:,} bytes per line "
                    f"({TABLE_MAX_LINE_BYTES_SETTING})"
                )
        return None


def _value(cells: Sequence[Cell], position: int) -> str:
    return cells[position].value if position < len(cells) else ""
