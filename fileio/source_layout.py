"""How a table file was read (:class:`SourceLayout`): its kind, encoding, delimiter, worksheet, fixed widths,
column names and the size and time of the file as it was when read, so that a copy of it can be written
back in the same form (:mod:`fileio.writeback`) and a file changed since can be told apart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fileio.errors import InputError

LayoutKind = Literal["delimited", "fixed_width", "xlsx"]


@dataclass(frozen=True)
class SourceLayout:
    """How :func:`fileio.tables.read_table` read a file.

    Attributes:
        kind: delimited text, fixed-width text, or a workbook (``xlsx``, also for ``.xlsm``).
        columns: every column of the header in file order, named as the reader names them (repeats refused,
            blanks ``Unnamed: <n>``), the empty unnamed columns it dropped from the frame included: a
            column's position in the file is its position here.
        encoding: the encoding a text file was decoded in (``utf-8-sig`` for UTF-8 with a byte-order mark);
            None for a workbook.
        encoding_detected: the encoding was detected, not given: reading the file again detects it again
            (a file mixing UTF-8 and Windows-1252 lines reads differently when the encoding is named).
        delimiter: the field separator of a delimited file (given or sniffed).
        fixed_widths: (name, width) per column of a fixed-width file.
        sheet: the name of the worksheet read.
        size: the file's size in bytes when it was read (None: not known).
        modified_ns: the file's modification time in nanoseconds when it was read (None: not known).
    """

    kind: LayoutKind
    columns: tuple[str, ...] = ()
    encoding: str | None = None
    encoding_detected: bool = False
    delimiter: str | None = None
    fixed_widths: tuple[tuple[str, int], ...] | None = None
    sheet: str | None = None
    size: int | None = None
    modified_ns: int | None = None

    def same_file(self, info: os.stat_result) -> bool:
        """Whether a file's ``stat`` shows it as it was when read (true when the layout knows neither)."""
        return (self.size is None or self.size == info.st_size) and (
            self.modified_ns is None or self.modified_ns == info.st_mtime_ns
        )

    def check_same_file(self, path: Path) -> None:
        """Check that the file at ``path`` is as it was when read.

        Raises:
            InputError: it is gone, or its size or modification time differ from the layout's.
        """
        try:
            info = path.stat()
        except OSError as exc:
            raise InputError(f"cannot be read again: {exc.strerror}", path=path) from exc
        if not self.same_file(info):
            raise InputError(
                "has changed since it was read (its size or modification time differ); nothing is written "
                "back",
                path=path,
            )

    def same_reading(self, other: SourceLayout) -> bool:
        """Whether ``other`` read a file the same way (kind, columns, encoding, delimiter, widths, sheet)."""
        return (self.kind, self.columns, self.encoding, self.delimiter, self.fixed_widths, self.sheet) == (
            other.kind,
            other.columns,
            other.encoding,
            other.delimiter,
            other.fixed_widths,
            other.sheet,
        )
