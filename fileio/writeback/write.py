"""The write-back of a user's table file (:func:`write_back`): the file read again as it was read before,
checked to be unchanged, and written to a copy with some cells replaced, by its kind (text:
:mod:`fileio.writeback.text_file`; workbook: :mod:`fileio.writeback.workbook`).
"""

from __future__ import annotations

from pathlib import Path

from fileio.errors import InputError
from fileio.files import write_bytes
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.source_layout import SourceLayout
from fileio.table_frame import Table
from fileio.tables import read_table
from fileio.writeback.delimited import DelimitedFormat
from fileio.writeback.fixed_width import FixedWidthFormat
from fileio.writeback.outcome import EditLedger, Edits, WriteBackOutcome
from fileio.writeback.text_file import TextFormat, TextRewrite, decode_file
from fileio.writeback.workbook import write_workbook


def write_back(
    source: Path,
    target: Path,
    layout: SourceLayout,
    edits: Edits,
    *,
    limits: TableLimits = TABLE_LIMITS,
) -> WriteBackOutcome:
    """Write a copy of ``source`` to ``target`` with the cells of ``edits`` replaced, everything else kept.

    ``edits``: data row (1-based, as :func:`fileio.tables.read_table` numbers them, blank rows included) →
    {source column header: new text}. The copy has every row of ``source`` in its order. A text file keeps
    its encoding (a byte-order mark too), delimiter, line endings and the bytes of every field not changed;
    a changed field is quoted when it was or when its value needs quotes; a fixed-width value is
    left-aligned in its column. A workbook keeps its sheets, formats and formulas (see
    :mod:`fileio.writeback.workbook`). When no cell changes, the copy is the file byte for byte. The copy is
    written atomically.

    An edit is skipped, its cell left as it was, and listed in the outcome with the reason, when its row is
    not in the file or could not be read, the row's text no longer holds what the reader read
    (``row could not be matched to its line``), its column is not in the file, the value cannot be written
    in the file's encoding or format (a line break or too long a value in a fixed-width column, a formula
    cell), or the line would pass ``limits``.

    Args:
        source: the user's file, as it was read.
        target: where the copy is written.
        layout: how ``source`` was read (``Table.layout``, ``AddressInput.layout``).
        edits: the cells to replace.
        limits: the limits on the file's shape, judged again before it is read.

    Raises:
        InputError: ``source`` is gone, unreadable, over a limit, or has changed since it was read (its
            size or time differ from ``layout``'s, or it reads differently); nothing is written.
    """
    layout.check_same_file(source)
    table = read_table(
        source,
        delimiter=layout.delimiter,
        encoding=None if layout.encoding_detected else layout.encoding,
        fixed_widths=layout.fixed_widths,
        sheet=layout.sheet,
        limits=limits,
    )
    if table.layout is None or not table.layout.same_reading(layout):
        raise InputError(
            "has changed since it was read (it reads differently now); nothing is written back", path=source
        )
    ledger = EditLedger()
    edits = {int(row): cells for row, cells in edits.items()}
    if table.layout.kind == "xlsx":
        write_workbook(source, target, table, edits, ledger)
    else:
        _write_text(source, target, table, edits, ledger, limits)
    return ledger.outcome(target, len(table.frame))


def _write_text(
    source: Path, target: Path, table: Table, edits: Edits, ledger: EditLedger, limits: TableLimits
) -> None:
    """Write a text table back (see :func:`write_back`), the file's bytes read as far as its size when it
    was read.

    Raises:
        InputError: the file has changed since it was read.
    """
    layout = table.layout
    assert layout is not None and layout.encoding is not None and layout.size is not None  # read_table's
    with source.open("rb") as handle:
        data = handle.read(layout.size + 1)
    layout.check_same_file(source)
    if len(data) != layout.size:
        raise InputError("has changed while it was read; nothing is written back", path=source)
    file = decode_file(data, layout.encoding)
    if file is None:
        ledger.skip_all(edits, f"the file cannot be written back byte for byte in {layout.encoding}")
        write_bytes(target, data)
        return
    text = TextRewrite(file, table, _positions(layout), _text_format(table), limits, ledger).run(edits)
    write_bytes(target, data if text is None else file.encode(text))


def _positions(layout: SourceLayout) -> dict[str, int]:
    return {name: position for position, name in enumerate(layout.columns)}


def _text_format(table: Table) -> TextFormat:
    """How the records of a text table are cut into cells: by its widths or by its delimiter."""
    layout = table.layout
    assert layout is not None and table.lines is not None
    if layout.fixed_widths is not None:
        return FixedWidthFormat(
            layout.fixed_widths, header_line=bool(len(table.lines) and table.lines[0] > 1)
        )
    assert layout.delimiter is not None
    return DelimitedFormat(layout.delimiter, len(layout.columns))
