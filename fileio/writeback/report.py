"""What a write-back tells its user: the copy's counts for the run summary, and the changes it left out
(``writeback-skipped.csv``, one shape for every flow: the data row, the customer's id column when the file
has one, the service's answer (a quality, a QSTAT), the field, the customer's column, the value given, the
value the answer has, and why it was not written)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.lazy import lazy_module
from fileio.rejected_rows import LINE
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, write_csv
from fileio.writeback.outcome import WriteBackOutcome

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

SKIPPED_FILE = "writeback-skipped.csv"
SKIPPED_COLUMNS = ("row", "answer", "field", "column", "given", "answered", "reason")
"""The report's columns; the customer's id column, when there is one, follows ``row`` under its own name."""


@dataclass(frozen=True)
class SkippedChange:
    """One change a write-back leaves as it was, in every flow: the data row, the field, why; the service's
    answer (a quality, a QSTAT and CorrectionType), the value given, the value the answer has and the
    customer's column, when known."""

    row: int
    field: str
    reason: str
    answer: str = ""
    given: str = ""
    answered: str = ""
    column: str = ""


@dataclass(frozen=True)
class WrittenBack:
    """The copy written and the corrections left out (``skipped_path`` None when none was)."""

    outcome: WriteBackOutcome
    skipped_path: Path | None
    skipped: int

    def summary(self) -> dict[str, object]:
        """What the run summary records."""
        return {
            "path": str(self.outcome.target),
            "rows": self.outcome.rows,
            "rows_changed": self.outcome.rows_changed,
            "cells_changed": self.outcome.cells_changed,
            "skipped": self.skipped,
        }

    def markdown(self, policy: str) -> str:
        """The paragraph summary.md gets."""
        outcome = self.outcome
        text = (
            f"\n\nWrite-back ({policy}): {outcome.target.name}, {outcome.cells_changed} cells changed in "
            f"{outcome.rows_changed} of {outcome.rows} rows"
        )
        if self.skipped_path is not None:
            text += f"; {self.skipped} changes left out, listed in {self.skipped_path.name}"
        return text + ".\n"


def written_back(
    outcome: WriteBackOutcome,
    lines: Sequence[SkippedChange],
    output_dir: Path,
    *,
    ids: pd.Series | None = None,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
) -> WrittenBack:
    """The outcome with ``writeback-skipped.csv`` written in row order when ``lines`` has any; ``ids``: the
    customer's id per data row (named by its header), a column after ``row``."""
    path = None
    if lines:
        frame = pd.DataFrame(
            [{column: getattr(line, column) for column in SKIPPED_COLUMNS} for line in lines],
            columns=list(SKIPPED_COLUMNS),
        ).sort_values("row", kind="stable")
        if ids is not None:
            header = str(ids.name)
            header = f"{header} (input)" if header in SKIPPED_COLUMNS else header
            values = ids.reindex(frame["row"].to_numpy()).astype(object)
            frame.insert(1, header, values.where(values.notna(), "").to_numpy())
        path = write_csv(frame, output_dir / SKIPPED_FILE, style=csv_style)
    return WrittenBack(outcome=outcome, skipped_path=path, skipped=len(lines))


def customer_ids(rejected_report: pd.DataFrame, records: pd.DataFrame, row_column: str) -> pd.Series | None:
    """The customer's id per data row, named by its header: the column ``rejected.csv`` names rows by (the
    input's id column), taken from the accepted ``records`` (their data row in ``row_column``); None when
    the report names rows by no column of the input."""
    columns = rejected_report.columns
    header = str(columns[0]) if len(columns) and columns[0] != LINE else None
    if header is None or header not in records:
        return None
    index = pd.Index(records[row_column].astype("int64").to_numpy())
    return pd.Series(records[header].to_numpy(), index=index, name=header)
