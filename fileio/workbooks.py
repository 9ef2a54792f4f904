"""Results workbooks (.xlsx) written atomically: one worksheet per frame with a styled header, frozen pane,
filter and column widths; numbers stay numbers, text stays text, never a formula.

Two writers give the same workbook: the fast one, rustpy-xlsxwriter (Rust's rust_xlsxwriter,
:mod:`fileio.workbook_fast`), for every workbook it writes as promised, and the plain one, xlsxwriter
(:mod:`fileio.workbook_plain`, :func:`write_xlsx_plain`), for the rest (styled cells, repeated column names,
object columns of mixed kinds) and as the reference the fast one is tested against. What both share
(Excel's limits, the worksheets, the widths) is :mod:`fileio.worksheet_parts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fileio.files import atomic_path
from fileio.workbook_charts import Chart, charts_by_title
from fileio.workbook_fast import rust_options, rust_writable, write_rust_parts
from fileio.workbook_plain import write_plain_parts
from fileio.worksheet_parts import EXCEL_MAX_TEXT, first_titles, sanitize_sheet_name, sheet_parts

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EXCEL_MAX_TEXT", "sanitize_sheet_name", "write_xlsx", "write_xlsx_plain"]


def write_xlsx(
    path: Path,
    sheets: Mapping[str, pd.DataFrame],
    *,
    styles: Mapping[str, pd.DataFrame] | None = None,
    formats: Mapping[str, Mapping[str, Any]] | None = None,
    charts: Mapping[str, Sequence[Chart]] | None = None,
) -> Path:
    """Write one worksheet per frame, atomically, streaming rows (constant-memory mode).

    Each sheet has a bold, filled header row, a frozen header pane, an autofilter over the data and column
    widths taken from the header and the first rows. Numbers stay numbers, text stays text (``"0123"`` keeps
    its zero), dates are dates, missing values are empty cells, an infinite number is the text ``inf``, and
    text is never turned into formulas or links. Text longer than a cell holds (32,767 characters) is cut
    to that length. Sheet names are made valid (no ``[]:*?/\\``, at most 31 characters, unique); a frame
    longer than a sheet continues on ``"<name> (2)"``.

    Cells can be styled: ``styles[name]`` is a frame of the sheet's shape (matched by position) holding, per
    cell, the name of one of ``formats`` (xlsxwriter format properties, e.g. ``{"bg_color": "#C6EFCE"}``)
    or None for a plain cell.

    Sheets can hold native charts of their own table: ``charts[name]`` are drawn beside the table of sheet
    ``name`` (see :class:`~fileio.workbook_charts.Chart`), one below the other.

    Workbooks are written by rustpy-xlsxwriter (Rust's rust_xlsxwriter), several times faster than
    xlsxwriter; a workbook with styled cells or with a sheet whose column names repeat, which it cannot
    write, is written by xlsxwriter as before (:func:`write_xlsx_plain`).
    """
    parts = sheet_parts(sheets, styles or {})
    drawn = charts_by_title(charts, first_titles(parts))
    with atomic_path(path) as temporary:
        if parts and all(rust_writable(part) for part in parts):
            write_rust_parts(temporary, parts, rust_options(parts, drawn))
        else:
            write_plain_parts(temporary, parts, formats or {}, drawn)
    return path


def write_xlsx_plain(
    path: Path,
    sheets: Mapping[str, pd.DataFrame],
    *,
    styles: Mapping[str, pd.DataFrame] | None = None,
    formats: Mapping[str, Mapping[str, Any]] | None = None,
    charts: Mapping[str, Sequence[Chart]] | None = None,
) -> Path:
    """:func:`write_xlsx` by xlsxwriter alone: the plain writer, which writes the workbooks the fast one
    cannot, and the reference the fast one's workbooks are tested against, cell for cell."""
    parts = sheet_parts(sheets, styles or {})
    with atomic_path(path) as temporary:
        write_plain_parts(temporary, parts, formats or {}, charts_by_title(charts, first_titles(parts)))
    return path
