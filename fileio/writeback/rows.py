"""The rows and cells a write-back edits, whatever the file's format: the edited rows in order with their
cells as the reader read them (edits of rows that are not in the file, or that the reader could not read,
left out), and the edits of a row that change a cell and can be written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from fileio.table_frame import Table
from fileio.writeback.outcome import EditLedger, Edits
from fileio.writeback_policy import formula_refusal

if TYPE_CHECKING:
    import pandas as pd


def edited_rows(
    table: Table, edits: Edits, ledger: EditLedger
) -> Iterator[tuple[int, dict[str, str], Mapping[str, str]]]:
    """(row, its cells as read, its edits) for each row with edits, in row order; the edits of a row that
    is not in the file or that the reader could not read are skipped."""
    rows = len(table.frame)
    malformed = dict(table.malformed)
    wanted: list[int] = []
    for row in sorted(edits):
        if not edits[row]:
            continue
        if not 1 <= row <= rows:
            ledger.skip(row, edits[row], f"row {row} is not in the file (its rows are 1 to {rows})")
        elif row in malformed:
            ledger.skip(row, edits[row], f"the reader could not read this row: {malformed[row]}")
        else:
            wanted.append(row)
    for row, cells in zip(wanted, _row_values(table.frame, wanted), strict=True):
        yield row, cells, edits[row]


def _row_values(frame: pd.DataFrame, rows: Sequence[int]) -> list[dict[str, str]]:
    """The cells of ``rows`` as the reader read them (an empty cell as ``""``), taken out all at once."""
    if not rows:
        return []
    chosen = frame.loc[list(rows)]
    columns = [str(column) for column in chosen.columns]
    values = chosen.astype(object).where(chosen.notna(), "").to_numpy(dtype=object)
    return [dict(zip(columns, map(str, cells), strict=True)) for cells in values]


def planned_cells(
    row: int,
    current: Mapping[str, str],
    edits: Mapping[str, str],
    ledger: EditLedger,
    refusal: Callable[[str, str], str | None],
) -> dict[str, str]:
    """The edits of ``row`` that change a cell and can be written (column → value). An edit of a column
    the file does not have, whose value starts like a formula
    (:func:`fileio.writeback_policy.formula_refusal`), or that ``refusal(column, value)`` refuses, is
    skipped; one giving a cell the value it has is left out."""
    planned: dict[str, str] = {}
    for column, value in edits.items():
        if column not in current:
            ledger.skip(row, [column], f"the file has no column {column!r}")
            continue
        if value == current[column]:
            continue
        reason = formula_refusal(value) or refusal(column, value)
        if reason is not None:
            ledger.skip(row, [column], reason)
        else:
            planned[column] = value
    return planned
