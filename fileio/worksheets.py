"""Reading a workbook's worksheet (.xlsx, by calamine through python-calamine) as a header and a frame of
text: the sheet named or at a position, measured against the limits before its grid is built, an encrypted
or damaged workbook refused.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from python_calamine import CalamineError, CalamineSheet, CalamineWorkbook, SheetTypeEnum

from fileio.cell_text import sheet_text
from fileio.errors import InputError
from fileio.lazy import lazy_module
from fileio.limits import TableLimits
from fileio.sheet_extent import worksheet_overrun
from fileio.table_frame import call_with_collector_paused, text_frame
from fileio.workbook_parts import WorkbookRefused, check_workbook_parts

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    pa = lazy_module("pyarrow")


class Worksheet(NamedTuple):
    """A worksheet as read: its name, its header and its data rows as text."""

    name: str
    header: list[str]
    rows: pd.DataFrame


def read_worksheet(
    path: Path, sheet: str | int | None, limits: TableLimits, *, nrows: int | None = None
) -> Worksheet:
    """The name, the header and the data rows (all, or the first ``nrows`` lines) of a worksheet, every
    cell as text (see :func:`fileio.cell_text.cell_text`); blank rows and columns after the last value are
    no part of the sheet.

    The workbook's package is measured against ``limits`` first
    (:func:`fileio.workbook_parts.check_workbook_parts`: the reader takes its shared strings whole), then the
    sheet (:func:`fileio.sheet_extent.worksheet_overrun`): the reader builds its whole grid, however few rows
    are asked for.

    The workbook is read by calamine (a compiled reader, through python-calamine), as Excel shows it: text
    that the XML does not mark as spaced keeps no spaces at its ends, ``_x0041_`` escapes are decoded, and
    a cell holding an error (``#DIV/0!``) or a formula without a saved result reads as empty.
    """
    shown = sheet if sheet is not None else 0
    try:
        check_workbook_parts(path, limits)
    except WorkbookRefused as exc:
        problem = str(exc) if exc.overrun else f"cannot be read as an Excel workbook: {exc}"
        raise InputError(problem, path=path) from exc
    except OSError as exc:
        raise InputError(f"cannot be read as an Excel workbook: {exc.strerror}", path=path) from exc
    try:
        with CalamineWorkbook.from_path(path) as workbook:
            name = _worksheet_name(workbook, sheet)
            overrun = worksheet_overrun(path, name, limits)
            if overrun is not None:
                raise InputError(overrun.problem, path=path)
            worksheet = workbook.get_sheet_by_name(name)
            cells = call_with_collector_paused(_worksheet_cells, worksheet, nrows)
    except (_SheetMissing, CalamineError, OSError, ValueError, OverflowError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot be read as an Excel workbook (sheet {sheet!r}): {exc}", path=path) from exc
    except BaseException as exc:  # a panic of the compiled reader on a damaged file
        if type(exc).__name__ != "PanicException":
            raise
        raise InputError(
            f"cannot be read as an Excel workbook (sheet {sheet!r}): the file is damaged ({exc})", path=path
        ) from exc
    text = sheet_text(cells)
    if text is None:
        raise InputError(f"sheet {shown!r} is empty: no header row", path=path)
    return Worksheet(name, text.header, _text_frame(text.columns))


def _worksheet_cells(worksheet: CalamineSheet, nrows: int | None) -> np.ndarray:
    """A worksheet's cells (all rows, or the first ``nrows``) as a 2-D array of objects (see
    :data:`fileio.cell_text.CellValue`). The reader gives a list per row; they are gone when this returns,
    so the garbage collector never walks them."""
    return np.array(worksheet.to_python(skip_empty_area=False, nrows=nrows), dtype=object)


def _text_frame(columns: list[pa.LargeStringArray]) -> pd.DataFrame:
    """Columns of text as a frame of pandas' ``str`` dtype, its columns numbered from 0."""
    table = pa.table(columns, names=[str(position) for position in range(len(columns))])
    return text_frame(table).set_axis(pd.RangeIndex(len(columns)), axis=1)


class _SheetMissing(LookupError):
    """The workbook has no worksheet of that name or position."""


def _worksheet_name(workbook: CalamineWorkbook, sheet: str | int | None) -> str:
    """A worksheet's name, by name (in any case; a number written as text is the sheet at that 1-based
    position when no sheet has that name) or by 0-based position among the worksheets (chart sheets do not
    count)."""
    names = worksheet_names(workbook)
    listed = ", ".join(repr(name) for name in names)
    if isinstance(sheet, str):
        exact = [name for name in names if name == sheet.strip()]
        folded = [name for name in names if name.casefold() == sheet.strip().casefold()]
        if exact or len(folded) == 1:
            return (exact or folded)[0]
        if sheet.strip().isdigit() and 1 <= int(sheet) <= len(names):
            return names[int(sheet) - 1]
        raise _SheetMissing(f"no worksheet {sheet!r}; the workbook's worksheets are {listed}")
    index = sheet or 0
    if not -len(names) <= index < len(names):
        raise _SheetMissing(f"no worksheet at position {index + 1}; the workbook's worksheets are {listed}")
    return names[index]


def worksheet_names(workbook: CalamineWorkbook) -> list[str]:
    return [meta.name for meta in workbook.sheets_metadata if meta.typ == SheetTypeEnum.WorkSheet]
