"""Writing a workbook back as a stream: every part of the archive but the worksheet that was read is copied
as it is, in its place (its bytes decompressed and compressed again, never parsed), and the worksheet's
part is rewritten a chunk at a time (:mod:`fileio.writeback.sheet_stream`), so the memory it takes does not
grow with the workbook's other sheets or with the worksheet itself.

A new value is written as an inline string (a postcode ``0123`` stays ``0123``; a value starting ``=`` is
no formula) into the cell, which keeps its reference and style (its number format, font, fill); a cell or
row the sheet lacks is inserted where it belongs. A cell holding a formula is not written. Shared strings,
other sheets, formats, formulas, column widths, pictures and shapes stay as they are; a workbook in which
nothing changes is copied byte for byte.

The rows and cells are placed by their references, as every common writer writes them; a worksheet whose
rows (or the cells of an edited row) lack them or stand out of order is not written back. A row whose cells
that the reader read a value from hold none in the sheet is not matched and left as it is.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from fileio.errors import InputError
from fileio.files import atomic_path
from fileio.sheet_extent import ARCHIVE_ERRORS, tag_chunks, worksheet_parts
from fileio.table_frame import Table
from fileio.writeback.outcome import ROW_NOT_MATCHED, EditLedger, Edits
from fileio.writeback.rows import edited_rows, planned_cells
from fileio.writeback.sheet_stream import CellSeen, SheetShapeError, rewrite_sheet, survey_sheet

MAX_CELL_CHARACTERS = 32_767
"""The most characters a cell of a workbook holds."""

# Characters XML 1.0 cannot hold (the control characters but tab, line feed and carriage return; lone
# surrogates; U+FFFE and U+FFFF).
_ILLEGAL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_COPY_CHUNK = 1 << 20
_ZIP64_OVER = 1 << 30  # a rewritten part this large (before the changes) is written with ZIP64 sizes


def write_workbook(source: Path, target: Path, table: Table, edits: Edits, ledger: EditLedger) -> None:
    """Write ``source`` to ``target`` with the edits made in the worksheet that ``table`` was read from.

    Raises:
        InputError: the workbook cannot be read, its worksheet's part cannot be found or placed by its
            references, or it has changed since ``table`` was read.
    """
    layout = table.layout
    assert layout is not None and layout.sheet is not None  # read_table's
    rows = {row + 1 for row, cells in edits.items() if cells}  # the header is the sheet's first row
    try:
        with zipfile.ZipFile(source) as archive:
            part = _worksheet_part(archive, layout.sheet, source)
            seen = survey_sheet(tag_chunks(archive, part), rows)
    except SheetShapeError as exc:
        raise _unplaceable(source, layout.sheet, exc) from exc
    except ARCHIVE_ERRORS as exc:
        raise InputError(f"cannot be read as an Excel workbook to write it back: {exc}", path=source) from exc
    positions = {name: position for position, name in enumerate(layout.columns, start=1)}
    changes: dict[int, dict[int, str]] = {}
    for row, current, row_edits in edited_rows(table, edits, ledger):
        cells = seen.get(row + 1, {})
        if any(value and not _valued(cells, positions[column]) for column, value in current.items()):
            ledger.skip(row, row_edits, ROW_NOT_MATCHED)
            continue
        planned = planned_cells(row, current, row_edits, ledger, partial(_refusal, cells, positions))
        if planned:
            changes[row + 1] = {positions[column]: value for column, value in planned.items()}
        ledger.changed(row, len(planned))
    with atomic_path(target) as temporary:
        if changes:
            _write_package(source, temporary, part, changes, layout.sheet)
        else:
            shutil.copyfile(source, temporary)
        layout.check_same_file(source)


def _worksheet_part(archive: zipfile.ZipFile, sheet: str, source: Path) -> str:
    """The one member of ``archive`` holding the worksheet ``sheet``.

    Raises:
        InputError: none or several.
    """
    parts = worksheet_parts(archive, sheet)
    if len(parts) != 1:
        found = "no part" if not parts else f"{len(parts)} parts whose names differ in case alone"
        raise InputError(
            f"cannot be written back: the workbook has {found} for worksheet {sheet!r}", path=source
        )
    return parts[0]


def _write_package(
    source: Path, temporary: Path, part: str, changes: Mapping[int, Mapping[int, str]], sheet: str
) -> None:
    """Write the archive ``source`` to ``temporary``: its members in their order, each as it is but
    ``part``, the worksheet, rewritten with ``changes``.

    Raises:
        InputError: a member cannot be read or written, or the worksheet cannot be placed.
    """
    try:
        with zipfile.ZipFile(source) as archive, zipfile.ZipFile(temporary, "w") as copy:
            for info in archive.infolist():
                entry = zipfile.ZipInfo(info.filename, info.date_time)
                entry.compress_type = info.compress_type
                entry.external_attr, entry.create_system = info.external_attr, info.create_system
                entry.comment = info.comment
                if info.is_dir():
                    copy.writestr(entry, b"")
                    continue
                with copy.open(entry, "w", force_zip64=info.file_size > _ZIP64_OVER) as written:
                    if info.filename == part:
                        for data in rewrite_sheet(tag_chunks(archive, part), changes):
                            written.write(data)
                    else:
                        with archive.open(info) as read:
                            shutil.copyfileobj(read, written, _COPY_CHUNK)
            copy.comment = archive.comment
    except SheetShapeError as exc:
        raise _unplaceable(source, sheet, exc) from exc
    except ARCHIVE_ERRORS as exc:
        raise InputError(f"cannot be written back as an Excel workbook: {exc}", path=source) from exc


def _unplaceable(source: Path, sheet: str, exc: SheetShapeError) -> InputError:
    return InputError(
        f"cannot be written back: in worksheet {sheet!r}, {exc}; only a worksheet whose rows and cells "
        "carry their references in order (as every common writer writes them) is written back",
        path=source,
    )


def _valued(cells: Mapping[int, CellSeen], position: int) -> bool:
    found = cells.get(position)
    return found is not None and found.value


def _refusal(
    cells: Mapping[int, CellSeen], positions: Mapping[str, int], column: str, value: str
) -> str | None:
    """Why ``value`` cannot be written into the cell of ``column`` (``cells``: the row's cells by
    position); None when it can."""
    found = cells.get(positions[column])
    if found is not None and found.formula:
        return "the cell holds a formula"
    if len(value) > MAX_CELL_CHARACTERS:
        return f"the value has {len(value):,} characters, more than the {MAX_CELL_CHARACTERS:,} a cell holds"
    illegal = _ILLEGAL_CHARACTERS.search(value)
    if illegal is not None:
        return f"character U+{ord(illegal.group()):04X} cannot be written in a workbook"
    return None
