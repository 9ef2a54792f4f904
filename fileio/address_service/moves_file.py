"""The moves file of a maintenance run (its layout not given by the spec) read as strings, its encoding,
delimiter and header detected, its lines measured against the limits before it is read.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.address_service.result_file import refuse_unreadable
from fileio.lazy import lazy_module
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.linescan import scan_lines
from fileio.textfiles import detect_encoding, read_rows, sniff_delimiter

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

_LINE_END = re.compile(r"\r\n|\r|\n")


def read_moves_file(
    path: Path, *, header: bool | None = None, limits: TableLimits = TABLE_LIMITS
) -> pd.DataFrame:
    """Read a moves file (layout not given by the spec) as strings, detecting encoding and delimiter.

    ``header=None`` decides from the first row: it is a header unless a cell is all digits (a postcode, a
    date) — data rows of a moves file always carry those. Without a header the columns are
    ``Column1`` … ``ColumnN``. Ragged rows are padded with ``""``, once the lines are known to be within
    ``limits`` (their bytes and number measured before the file is read, their fields before it is split).

    Raises:
        ResultUnreadable: the file is over a limit.
    """
    encoding = detect_encoding(path)
    refuse_unreadable(
        path,
        scan_lines(path, encoding=encoding, stop_above=limits.max_line_bytes).overrun(
            limits, exact_fields=True
        ),
    )
    text = path.read_text(encoding=encoding, errors="replace")
    # Lines end at a line feed or carriage return only: str.splitlines would also split at a form feed,
    # a NEL or a line separator inside a value, making two rows of one.
    lines = [line for line in _LINE_END.split(text) if line.strip()]
    if not lines:
        return pd.DataFrame()
    delimiter = sniff_delimiter(lines[0]) or "\t"
    widest = max(range(len(lines)), key=lambda number: lines[number].count(delimiter))
    refuse_unreadable(
        path, limits.columns(lines[widest].count(delimiter) + 1, f"non-empty line {widest + 1:,}")
    )
    rows = [row for row in read_rows("\n".join(lines), delimiter, quoting=csv.QUOTE_NONE) if row]
    if header is None:
        header = not any(cell.strip().isdigit() for cell in rows[0])
    width = max(len(row) for row in rows)
    if header:
        first = [cell.strip() for cell in rows[0]]
        names = [name or f"Column{n}" for n, name in enumerate(first + [""] * (width - len(first)), start=1)]
        rows = rows[1:]
    else:
        names = [f"Column{n}" for n in range(1, width + 1)]
    return pd.DataFrame([row + [""] * (width - len(row)) for row in rows], columns=names, dtype=str)
