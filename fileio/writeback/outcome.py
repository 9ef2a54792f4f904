"""What a write-back did (:class:`WriteBackOutcome`): the rows and cells it changed and every edit it left
out with the reason (:class:`SkippedEdit`), gathered while the file is written (:class:`EditLedger`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

Edits = Mapping[int, Mapping[str, str]]
"""Data row number (1-based, as :func:`fileio.tables.read_table` numbers them: blank rows included) →
{source column header, as the reader names it: new text}."""

ROW_NOT_MATCHED = "row could not be matched to its line"


class SkippedEdit(NamedTuple):
    """An edit that was not applied: the cell (data row, source column) stays as it was, for ``reason``."""

    row: int
    column: str
    reason: str


@dataclass(frozen=True)
class WriteBackOutcome:
    """What :func:`fileio.writeback.write_back` wrote.

    Attributes:
        target: the file written.
        rows: the data rows of the source, every one of them in the copy, in input order.
        rows_changed: the rows with at least one cell changed.
        cells_changed: the cells changed (an edit giving a cell the value it has changes nothing).
        skipped: the edits left out, each with its reason, by row and then in the order given.
    """

    target: Path
    rows: int
    rows_changed: int
    cells_changed: int
    skipped: tuple[SkippedEdit, ...] = ()


class EditLedger:
    """The changes and the skipped edits of one write-back, as they happen."""

    def __init__(self) -> None:
        self._skipped: list[SkippedEdit] = []
        self._rows: set[int] = set()
        self._cells = 0

    def skip(self, row: int, columns: Iterable[str], reason: str) -> None:
        """Leave the cells of ``columns`` in ``row`` as they are, for ``reason``."""
        self._skipped.extend(SkippedEdit(row, column, reason) for column in columns)

    def skip_all(self, edits: Edits, reason: str) -> None:
        """Leave every edit out, for ``reason``."""
        for row in sorted(edits):
            self.skip(row, edits[row], reason)

    def changed(self, row: int, cells: int) -> None:
        """``cells`` cells of ``row`` were changed."""
        if cells:
            self._rows.add(row)
            self._cells += cells

    @property
    def cells_changed(self) -> int:
        return self._cells

    def outcome(self, target: Path, rows: int) -> WriteBackOutcome:
        skipped = tuple(sorted(self._skipped, key=lambda skipped: skipped.row))  # stable: in order given
        return WriteBackOutcome(target, rows, len(self._rows), self._cells, skipped)
