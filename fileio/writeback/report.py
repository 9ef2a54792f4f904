"""What a write-back tells its user: the copy's counts for the run summary, and the corrections it left out
(``writeback-skipped.csv``: row, field, the customer's column, reason)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, write_csv
from fileio.writeback.outcome import WriteBackOutcome

SKIPPED_FILE = "writeback-skipped.csv"
SKIPPED_COLUMNS = ("row", "field", "column", "reason")
SkippedLine = tuple[int, str, str, str]
"""One correction left out: the data row, the field, the customer's column, why."""


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
            text += f"; {self.skipped} corrections left out, listed in {self.skipped_path.name}"
        return text + ".\n"


def written_back(
    outcome: WriteBackOutcome,
    lines: Sequence[SkippedLine],
    output_dir: Path,
    *,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
) -> WrittenBack:
    """The outcome with ``writeback-skipped.csv`` written in row order when ``lines`` has any."""
    path = None
    if lines:
        frame = pd.DataFrame(list(lines), columns=list(SKIPPED_COLUMNS)).sort_values("row", kind="stable")
        path = write_csv(frame, output_dir / SKIPPED_FILE, style=csv_style)
    return WrittenBack(outcome=outcome, skipped_path=path, skipped=len(lines))
