"""Reading a customer's table file (.csv, .txt delimited or fixed width, .xlsx) into an all-string DataFrame
that keeps leading zeros, numbers its data rows from 1, and reports rows it cannot split instead of losing
them.
"""

from __future__ import annotations

import csv
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path

import pandas as pd

from tasks.errors import InputError
from tasks.textfiles import detect_encoding, first_line, read_rows, sniff_delimiter

EXCEL_SUFFIXES = (".xlsx", ".xlsm")


@dataclass
class Table:
    """A file's rows as strings and the rows that could not be split.

    ``frame`` has the source headers, empty cells as ``""`` or NaN, and the 1-based data row number as index
    (blank rows included); ``malformed`` lists (row, problem).
    """

    frame: pd.DataFrame
    malformed: list[tuple[int, str]] = field(default_factory=list)
    encoding: str | None = None
    delimiter: str | None = None


def read_table(
    path: Path,
    *,
    delimiter: str | None = None,
    encoding: str | None = None,
    fixed_widths: Sequence[tuple[str, int]] | None = None,
    sheet: str | int | None = None,
) -> Table:
    """Read a .csv, .txt or .xlsx file with a header row; fixed-width text is named by ``fixed_widths``.

    Text files: the encoding is the given one, else detected (BOM, UTF-8, else Windows-1252); the delimiter is
    the given one, else sniffed from the header line among tab ``;`` ``,`` ``|``. A fixed-width file may start
    with a header line repeating the names; it is recognised and skipped.

    Raises:
        InputError: the file is missing, empty, cannot be decoded or parsed, or the sheet does not exist.
    """
    if not path.is_file():
        raise InputError("file not found", path=path)
    if path.stat().st_size == 0:
        raise InputError("file is empty: no header row", path=path)
    if path.suffix.lower() in EXCEL_SUFFIXES:
        return _read_excel(path, sheet)
    encoding = encoding or detect_encoding(path)
    try:
        text = path.read_text(encoding=encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"cannot be decoded as {encoding}: {exc.reason} at byte {exc.start}", path=path
        ) from exc
    if not text.strip():
        raise InputError("file is empty: no header row", path=path)
    if fixed_widths:
        return _read_fixed_width(path, text, fixed_widths, encoding)
    delimiter = delimiter or sniff_delimiter(first_line(text)) or ","
    return _read_delimited(path, text, delimiter, encoding)


def _read_delimited(path: Path, text: str, delimiter: str, encoding: str) -> Table:
    try:
        # header=None makes the C parser refuse rows longer than the header instead of silently
        # shifting them into an index.
        raw = pd.read_csv(
            StringIO(text),
            sep=delimiter,
            header=None,
            dtype=str,
            keep_default_na=False,
            na_values=[],
            skip_blank_lines=False,
            engine="c",
        )
    except pd.errors.ParserError:
        return _read_delimited_tolerant(path, text, delimiter, encoding)
    except (ValueError, csv.Error) as exc:
        raise InputError(f"cannot be parsed with delimiter {delimiter!r}: {exc}", path=path) from exc
    header = [str(value) if isinstance(value, str) else "" for value in raw.iloc[0].tolist()]
    frame = raw.iloc[1:].set_axis(_unique_headers(header), axis=1)
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return Table(_drop_unnamed_empty(frame), [], encoding, delimiter)


def _read_delimited_tolerant(path: Path, text: str, delimiter: str, encoding: str) -> Table:
    """Slow path for files with over-long rows: such rows are reported unless their extra fields are empty."""
    rows = read_rows(text, delimiter)
    header = rows[0]
    width = len(header)
    malformed: list[tuple[int, str]] = []
    data: list[list[str]] = []
    for number, row in enumerate(rows[1:], start=1):
        if len(row) > width and any(value.strip() for value in row[width:]):
            malformed.append((number, f"row has {len(row)} fields, the header has {width}"))
            row = []
        data.append((row + [""] * width)[:width])
    frame = pd.DataFrame(
        data, columns=_unique_headers(header), index=pd.RangeIndex(1, len(data) + 1), dtype=str
    )
    return Table(_drop_unnamed_empty(frame), malformed, encoding, delimiter)


def _read_fixed_width(path: Path, text: str, widths: Sequence[tuple[str, int]], encoding: str) -> Table:
    names = [name for name, _ in widths]
    try:
        frame = pd.read_fwf(
            StringIO(text),
            widths=[width for _, width in widths],
            names=names,
            header=None,
            dtype=str,
            keep_default_na=False,
            na_values=[],
            skip_blank_lines=False,
        )
    except (ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot be read as fixed width {list(widths)}: {exc}", path=path) from exc
    if len(frame) and [str(v).strip().casefold() for v in frame.iloc[0]] == [n.casefold() for n in names]:
        frame = frame.iloc[1:]
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return Table(frame, [], encoding, None)


def _read_excel(path: Path, sheet: str | int | None) -> Table:
    try:
        raw = pd.read_excel(
            path,
            sheet_name=0 if sheet is None else sheet,
            header=None,
            dtype=str,
            keep_default_na=False,
            na_values=[],
            engine="openpyxl",
        )
    except (ValueError, KeyError, OSError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot be read as an Excel workbook (sheet {sheet!r}): {exc}", path=path) from exc
    if raw.empty:
        raise InputError(f"sheet {sheet if sheet is not None else 0!r} is empty: no header row", path=path)
    header = [str(value) if isinstance(value, str) else "" for value in raw.iloc[0].tolist()]
    frame = raw.iloc[1:].set_axis(_unique_headers(header), axis=1)
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return Table(_drop_unnamed_empty(frame))


def _unique_headers(header: Sequence[str]) -> list[str]:
    """Headers stripped; blanks named ``Unnamed: <n>``; repeats suffixed ``.1``, ``.2`` as pandas does."""
    seen: dict[str, int] = {}
    names: list[str] = []
    for position, raw in enumerate(header, start=1):
        name = raw.strip() or f"Unnamed: {position}"
        if name in seen:
            seen[name] += 1
            name = f"{name}.{seen[name]}"
        seen.setdefault(name, 0)
        names.append(name)
    return names


def _drop_unnamed_empty(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop columns with a blank header and no values: the trail of separators spreadsheets export."""
    unnamed = [
        column
        for column in frame.columns
        if column.startswith("Unnamed: ") and frame[column].fillna("").str.strip().eq("").all()
    ]
    return frame.drop(columns=unnamed) if unnamed else frame
