"""Which worksheet of a workbook to read when none was named: the first when its header fits, else the only
one that does, said in a note; several that fit, or none, are refused naming the sheets.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fileio.errors import InputError
from fileio.filetypes import EXCEL_SUFFIXES
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.tables import read_head


@dataclass(frozen=True)
class SheetChoice:
    """Which worksheet of a file to read: ``sheet`` as :func:`fileio.tables.read_table` takes it, and
    ``note``, a line saying why when it was chosen for the caller."""

    sheet: str | int | None
    note: str | None = None


def choose_sheet(
    path: Path,
    sheet: str | None,
    fits: Callable[[list[str]], bool],
    *,
    what: str,
    limits: TableLimits = TABLE_LIMITS,
) -> SheetChoice:
    """The worksheet to read of a workbook whose sheet was not named: the first when it ``fits`` (its header
    has ``what``) or it is the only one, else the only sheet that fits, said in ``note``. A named sheet, and
    any file that is no workbook, is read as given.

    Raises:
        InputError: no sheet fits, or several do but the first: naming the sheets and ``--sheet``.
    """
    if sheet is not None or path.suffix.lower() not in EXCEL_SUFFIXES or not path.is_file():
        return SheetChoice(sheet)
    # A workbook's readers, loaded here: a run reading a text file never needs them.
    from python_calamine import CalamineError, CalamineWorkbook

    from fileio.workbook_parts import check_workbook_parts
    from fileio.worksheets import worksheet_names

    try:
        check_workbook_parts(path, limits)
        with CalamineWorkbook.from_path(path) as workbook:
            names = worksheet_names(workbook)
    except (CalamineError, OSError, ValueError, zipfile.BadZipFile):  # WorkbookRefused too
        return SheetChoice(None)  # read_table says what is wrong with the file
    if len(names) <= 1:
        return SheetChoice(None)
    fitting = [name for name in names if fits(read_head(path, sheet=name, limits=limits).headers)]
    if fitting[:1] == names[:1]:
        return SheetChoice(None)
    listed = ", ".join(repr(name) for name in names)
    if len(fitting) == 1:
        return SheetChoice(fitting[0], f"read worksheet {fitting[0]!r}, the only one of {listed} with {what}")
    found = "none has" if not fitting else f"{', '.join(repr(name) for name in fitting)} have"
    raise InputError(
        f"the workbook's worksheets are {listed}: the first has no {what} and {found} them; name the one "
        "to read with --sheet NAME (form: Worksheet)",
        path=path,
    )
