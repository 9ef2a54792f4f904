"""Limits on what is read: the size of a download or document and the compression ratio of a ZIP from the
services, the shape of every table file read (users' inputs and the services' results) — columns per
row, bytes per line, cells of a worksheet, rows — and the parts of a workbook's package, each decided
before the reader allocates for it; the defaults of the settings that change them, whose names the
refusals quote.
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

WORKBOOK_MAX_PART_BYTES = 512 << 20
"""Largest part of a workbook's package (a sheet, the shared strings, the styles), unpacked, in bytes."""

WORKBOOK_MAX_PART_BYTES_SETTING = "POSTFLOWS_WORKBOOK_MAX_PART_BYTES"

WORKBOOK_MAX_RATIO = 100.0
"""Largest ratio of unpacked to compressed size of a workbook's part (past 1 MiB) and of the workbook."""

WORKBOOK_MAX_RATIO_SETTING = "POSTFLOWS_WORKBOOK_MAX_RATIO"

WORKBOOK_MAX_SHARED_STRINGS = 5_000_000
"""Most shared strings of a workbook (distinct texts of all its sheets)."""

WORKBOOK_MAX_SHARED_STRINGS_SETTING = "POSTFLOWS_WORKBOOK_MAX_SHARED_STRINGS"

WORKBOOK_MAX_SHEETS = 1000
"""Most sheets of a workbook."""

WORKBOOK_MAX_SHEETS_SETTING = "POSTFLOWS_WORKBOOK_MAX_SHEETS"

WORKBOOK_MAX_PARTS = 10_000
"""Most parts (archive members) of a workbook's package."""

WORKBOOK_MAX_PARTS_SETTING = "POSTFLOWS_WORKBOOK_MAX_PARTS"


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
    max_part_bytes: int = WORKBOOK_MAX_PART_BYTES
    max_workbook_ratio: float = WORKBOOK_MAX_RATIO
    max_shared_strings: int = WORKBOOK_MAX_SHARED_STRINGS
    max_sheets: int = WORKBOOK_MAX_SHEETS
    max_parts: int = WORKBOOK_MAX_PARTS

    def value_of(self, setting: str) -> int | None:
        """The current limit that ``setting`` names (None for a name that is no table limit; the ratio's
        whole part)."""
        return {
            TABLE_MAX_COLUMNS_SETTING: self.max_columns,
            TABLE_MAX_LINE_BYTES_SETTING: self.max_line_bytes,
            TABLE_MAX_CELLS_SETTING: self.max_cells,
            TABLE_MAX_ROWS_SETTING: self.max_rows,
            WORKBOOK_MAX_PART_BYTES_SETTING: self.max_part_bytes,
            WORKBOOK_MAX_RATIO_SETTING: int(self.max_workbook_ratio),
            WORKBOOK_MAX_SHARED_STRINGS_SETTING: self.max_shared_strings,
            WORKBOOK_MAX_SHEETS_SETTING: self.max_sheets,
            WORKBOOK_MAX_PARTS_SETTING: self.max_parts,
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
