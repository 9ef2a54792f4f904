"""How a write-back is written, whatever the input: the limits the input file is read again within, the
dialect of the list of changes left out, and whether the run was against the sandbox."""

from __future__ import annotations

from dataclasses import dataclass

from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle


@dataclass(frozen=True)
class WriteBackOptions:
    """How a write-back and its ``writeback-skipped.csv`` are written.

    Attributes:
        limits: the limits the input file is read again within.
        csv_style: the dialect of the CSV files written.
        sandbox: the run was against the sandbox: the files say so (:mod:`fileio.sandbox_marks`).
    """

    limits: TableLimits = TABLE_LIMITS
    csv_style: CsvStyle = DEFAULT_CSV_STYLE
    sandbox: bool = False


DEFAULT_WRITE_BACK = WriteBackOptions()
"""The table limits and CSV dialect by default, after a run against the service."""
