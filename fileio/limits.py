"""Limits on what is read: the size of a download or document and the compression ratio of a ZIP from the
services, and the shape of every table file read (users' inputs and the services' results) — columns per
row, bytes per line, cells of a worksheet, rows — each decided before the reader allocates for it; the
defaults of the settings that change them, whose names the refusals quote.
"""

from __future__ import annotations

from dataclasses import dataclass

DOWNLOAD_MAX_BYTES = 1 << 30
"""Largest download, document or inflated ZIP content accepted, in bytes (1 GiB)."""

DOWNLOAD_MAX_BYTES_SETTING = "POSTFLOWS_DOWNLOAD_MAX_BYTES"

ZIP_MAX_RATIO = 100.0
"""Largest ratio of inflated to compressed size accepted from a ZIP, per member and for the whole archive."""

ZIP_MAX_RATIO_SETTING = "POSTFLOWS_ZIP_MAX_RATIO"

TABLE_MAX_COLUMNS = 1000
"""Most fields in one row (one line) of a table file, or columns of a worksheet."""

TABLE_MAX_COLUMNS_SETTING = "POSTFLOWS_TABLE_MAX_COLUMNS"

TABLE_MAX_LINE_BYTES = 1 << 20
"""Longest line of a text table file, in bytes without its line ending (1 MiB)."""

TABLE_MAX_LINE_BYTES_SETTING = "POSTFLOWS_TABLE_MAX_LINE_BYTES"

TABLE_MAX_CELLS = 10_000_000
"""Most cells of a worksheet (rows × columns from A1), by its declared dimension and by its cells."""

TABLE_MAX_CELLS_SETTING = "POSTFLOWS_TABLE_MAX_CELLS"

TABLE_MAX_ROWS = 5_000_000
"""Most rows after the header of a table file."""

TABLE_MAX_ROWS_SETTING = "POSTFLOWS_TABLE_MAX_ROWS"


@dataclass(frozen=True)
class Overrun:
    """A table file over a limit: what was found, the setting that would allow it, and its current value."""

    problem: str
    setting: str
    limit: int


@dataclass(frozen=True)
class TableLimits:
    """The limits on a table file's shape (see the module docstring); the settings
    ``POSTFLOWS_TABLE_MAX_*`` choose them, the flows pass them down to the readers."""

    max_columns: int = TABLE_MAX_COLUMNS
    max_line_bytes: int = TABLE_MAX_LINE_BYTES
    max_cells: int = TABLE_MAX_CELLS
    max_rows: int = TABLE_MAX_ROWS

    def value_of(self, setting: str) -> int | None:
        """The current limit that ``setting`` names (None for a name that is no table limit)."""
        return {
            TABLE_MAX_COLUMNS_SETTING: self.max_columns,
            TABLE_MAX_LINE_BYTES_SETTING: self.max_line_bytes,
            TABLE_MAX_CELLS_SETTING: self.max_cells,
            TABLE_MAX_ROWS_SETTING: self.max_rows,
        }.get(setting)

    def columns(self, found: int, where: str) -> Overrun | None:
        """``where`` (``line 7``, ``the header``, ``worksheet 'Data'``) has ``found`` fields or columns."""
        if found <= self.max_columns:
            return None
        return Overrun(
            f"{where} has {found:,} columns, more than the limit of {self.max_columns:,} columns per row "
            f"({TABLE_MAX_COLUMNS_SETTING}); nothing was read",
            TABLE_MAX_COLUMNS_SETTING,
            self.max_columns,
        )

    def line_bytes(self, found: int, line: int) -> Overrun | None:
        """Line ``line`` is at least ``found`` bytes long (the measuring stops past the limit)."""
        if found <= self.max_line_bytes:
            return None
        return Overrun(
            f"line {line:,} is longer than the limit of {self.max_line_bytes:,} bytes per line "
            f"({TABLE_MAX_LINE_BYTES_SETTING}); nothing was read",
            TABLE_MAX_LINE_BYTES_SETTING,
            self.max_line_bytes,
        )

    def rows(
        self, found: int, where: str = "the file", what: str = "rows after the header"
    ) -> Overrun | None:
        """``where`` has ``found`` rows (``what`` says how they were counted)."""
        if found <= self.max_rows:
            return None
        return Overrun(
            f"{where} has {found:,} {what}, more than the limit of {self.max_rows:,} rows "
            f"({TABLE_MAX_ROWS_SETTING}); nothing was read",
            TABLE_MAX_ROWS_SETTING,
            self.max_rows,
        )

    def cells(self, rows: int, columns: int, where: str) -> Overrun | None:
        """A worksheet grid of ``rows`` × ``columns`` from A1; ``where`` says what reaches that far."""
        found = rows * columns
        if found <= self.max_cells:
            return None
        return Overrun(
            f"{where}: {columns:,} columns × {rows:,} rows = {found:,} cells from A1, more than the limit "
            f"of {self.max_cells:,} cells ({TABLE_MAX_CELLS_SETTING}); nothing was read",
            TABLE_MAX_CELLS_SETTING,
            self.max_cells,
        )


TABLE_LIMITS = TableLimits()
"""The defaults, for callers that pass no limits of their own (tests, benchmarks)."""
