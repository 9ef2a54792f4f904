"""Writing a workbook back with openpyxl: the workbook loaded whole (every worksheet measured against the
limits first), the cells of the worksheet that was read set to their new text, and the workbook saved; the
other cells, their formats, formulas, the other sheets and the column widths stay as openpyxl keeps them.

A new value is written as text (a postcode ``0123`` stays ``0123``; a value starting ``=`` is no formula)
into the cell, whose number format and style stay. A cell holding a formula is not written; a row whose
cells (but its formulas, whose results openpyxl does not compute) are not what the reader read is not
matched and left as it is. What openpyxl does not read is not in the copy: shapes, and pictures unless
Pillow is installed; a workbook in which nothing changes is copied byte for byte instead.
"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from python_calamine import CalamineError, CalamineWorkbook

from fileio.cell_text import cell_text
from fileio.errors import InputError
from fileio.files import atomic_path
from fileio.lazy import lazy_module
from fileio.limits import TableLimits
from fileio.sheet_extent import worksheet_overrun
from fileio.table_frame import Table
from fileio.worksheets import worksheet_names
from fileio.writeback.outcome import ROW_NOT_MATCHED, EditLedger, Edits
from fileio.writeback.rows import edited_rows, planned_cells

openpyxl = lazy_module("openpyxl")

MAX_CELL_CHARACTERS = 32_767
"""The most characters a cell of a workbook holds."""


def write_workbook(
    source: Path, target: Path, table: Table, edits: Edits, ledger: EditLedger, limits: TableLimits
) -> None:
    """Write ``source`` to ``target`` with the edits made in the worksheet that ``table`` was read from.

    Raises:
        InputError: a worksheet is over the limits, the workbook cannot be loaded, or it has changed since
            ``table`` was read.
    """
    layout = table.layout
    assert layout is not None  # read_table's
    workbook = _load(source, limits)
    layout.check_same_file(source)
    sheet = workbook[layout.sheet]
    positions = {name: position for position, name in enumerate(layout.columns, start=1)}
    for row, current, row_edits in edited_rows(table, edits, ledger):
        cells = {column: _existing_cell(sheet, row + 1, positions[column]) for column in current}
        if any(_text(cells[column]) not in (None, value) for column, value in current.items()):
            ledger.skip(row, row_edits, ROW_NOT_MATCHED)
            continue
        planned = planned_cells(row, current, row_edits, ledger, partial(_refusal, cells))
        for column, value in planned.items():
            cell = sheet.cell(row=row + 1, column=positions[column])
            cell.value = value or None
            if value:
                cell.data_type = "s"  # text, even when it starts with "="
        ledger.changed(row, len(planned))
    with atomic_path(target) as temporary:
        if ledger.cells_changed:
            workbook.save(temporary)
        else:
            shutil.copyfile(source, temporary)


def _existing_cell(sheet: Any, row: int, column: int) -> Any:
    """The cell at ``row`` and ``column`` (1-based), or None when the sheet has none there: looking a cell
    up through openpyxl's API would add an empty one to the sheet."""
    return sheet._cells.get((row, column))  # pylint: disable=protected-access


def _load(source: Path, limits: TableLimits) -> Any:
    """The workbook, loaded whole once each of its worksheets has been measured against ``limits``.

    Raises:
        InputError: a worksheet is over a limit, or the workbook cannot be read.
    """
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        with CalamineWorkbook.from_path(source) as workbook:
            names = worksheet_names(workbook)
        for name in names:
            overrun = worksheet_overrun(source, name, limits)
            if overrun is not None:
                raise InputError(overrun.problem, path=source)
        return openpyxl.load_workbook(source, rich_text=True, keep_vba=source.suffix.lower() == ".xlsm")
    except (
        CalamineError,
        InvalidFileException,
        OSError,
        ValueError,
        KeyError,
        TypeError,
        zipfile.BadZipFile,
    ) as exc:
        raise InputError(
            f"cannot be loaded as an Excel workbook to write it back: {exc}", path=source
        ) from exc


def _text(cell: Any) -> str | None:
    """A cell's value as the table reader reads it; None for a formula, whose result openpyxl does not
    know."""
    if cell is None:
        return ""
    value = cell.value
    if cell.data_type == "f" or isinstance(value, _formulas()):
        return None
    if value is None or cell.data_type == "e":  # the reader reads an error value as empty
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, _rich_text()):
        return str(value)
    return cell_text(value)


def _formulas() -> tuple[type, ...]:
    from openpyxl.worksheet.formula import ArrayFormula, DataTableFormula

    return ArrayFormula, DataTableFormula


def _rich_text() -> tuple[type, ...]:
    from openpyxl.cell.rich_text import CellRichText

    return (CellRichText,)


def _refusal(cells: Mapping[str, Any], column: str, value: str) -> str | None:
    """Why ``value`` cannot be written into the cell of ``column`` (in ``cells``); None when it can."""
    cell = cells[column]
    if cell is not None and _text(cell) is None:
        return "the cell holds a formula"
    if len(value) > MAX_CELL_CHARACTERS:
        return f"the value has {len(value):,} characters, more than the {MAX_CELL_CHARACTERS:,} a cell holds"
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    illegal = ILLEGAL_CHARACTERS_RE.search(value)
    if illegal is not None:
        return f"character U+{ord(illegal.group()):04X} cannot be written in a workbook"
    return None
