"""The rows of an input table as the per-row readers check them (pickup users, purchase addresses, statistics
records): each row's cells of the fields read, as text; rows rejected already are left out, and completely
empty rows are counted and skipped."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")


def cell_text(value: Any) -> str:
    """A cell as text without surrounding blanks; an empty cell as ``""``."""
    return str(value).strip() if pd.notna(value) else ""


class RowCells:
    """The rows of ``frame`` (indexed by data row) to check, as ``(row, cells)``: the cells of ``columns``
    (field → header) as ``cell`` makes them text. Rows in ``skip`` are left out; a row whose cells are all
    empty is counted in :attr:`empty` and not given.
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        columns: Mapping[str, str],
        *,
        skip: Collection[int] = (),
        cell: Callable[[Any], str] = cell_text,
    ) -> None:
        self.frame = frame
        self.columns = columns
        self.skip = skip
        self.cell = cell
        self.empty = 0

    def __iter__(self) -> Iterator[tuple[int, dict[str, str]]]:
        for label, values in self.frame.iterrows():
            row = int(str(label))
            if row in self.skip:
                continue
            cells = {name: self.cell(values[header]) for name, header in self.columns.items()}
            if not any(cells.values()):
                self.empty += 1
                continue
            yield row, cells
