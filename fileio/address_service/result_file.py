"""The address service's result file read into a frame of strings (UTF-8 with or without BOM, else
Windows-1252; tab-separated; ragged rows; refused as ``ResultUnreadable`` when over a limit on its shape,
measured before it is read), its headers folded onto the §2.3 spelling.

The result file repeats the uploaded columns first, then the §2.3 fields, so the address fields occur twice.
Header names are folded onto the §2.3 spelling (``StreetName`` → ``Streetname``, ``POBoxTerm`` →
``PoBoxTerm``); address fields before the first status field (QSTAT …) are the uploaded copies and become
``<Field>_uploaded``, as does any earlier occurrence of a name that repeats.

Two readers give the same frame: the fast one, Arrow's multi-threaded CSV reader on bytes made regular
(:mod:`fileio.address_service.result_arrow`), and the plain one, pandas' C parser and the csv module
(:func:`read_with_pandas`), which reads what the fast one leaves and is the reference it is tested against.
"""

from __future__ import annotations

import csv
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from connectors.address_service.codes import (
    ADDRESS_FIELD_NAMES,
    STATUS_FIELD_NAMES,
    canonical_output_field,
)
from fileio.address_service.result_arrow import read_with_arrow
from fileio.errors import ResultFileError, ResultUnreadable
from fileio.lazy import lazy_module
from fileio.limits import TABLE_LIMITS, Overrun, TableLimits
from fileio.linescan import scan_lines
from fileio.table_frame import call_with_collector_paused, unique_names
from fileio.textfiles import detect_encoding, read_rows, sniff_delimiter

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

UPLOADED_SUFFIX = "_uploaded"


def read_result_file(path: Path, *, limits: TableLimits = TABLE_LIMITS) -> pd.DataFrame:
    """Read a result file into a frame of strings (``""`` for empty and for missing trailing fields).

    §2.3 headers are folded onto their canonical spelling case-insensitively; other columns keep their names;
    uploaded copies of address fields become ``<Field>_uploaded`` (see the module docstring). A row with
    more fields than the header keeps the surplus in extra ``Unnamed: <n>`` columns.

    Before anything is parsed, the file's lines are measured as they stream by (:func:`scan_lines`): a
    line longer than ``limits`` allow, one with more fields, or more lines than rows allowed, and the file
    is refused, never padded to its widest line.

    The columns are the pandas ``str`` dtype held by Arrow. Files are parsed by Arrow's multi-threaded CSV
    reader (:func:`read_with_arrow`); a file it cannot take as it is (a line ended by a lone CR, UTF-16, a
    NUL byte) is read by pandas' C parser, and one whose rows the C parser refuses by the csv module.

    Raises:
        ResultFileError: the file is empty.
        ResultUnreadable: the file is over a limit.
    """
    encoding, delimiter, names = _result_layout(path, limits)
    frame = read_with_arrow(path, encoding, delimiter, names)
    if frame is None:
        frame = read_with_pandas(path, encoding, delimiter, names).astype(_string_dtype())
    return frame


def read_result_file_plain(path: Path, *, limits: TableLimits = TABLE_LIMITS) -> pd.DataFrame:
    """:func:`read_result_file` by the plain reader alone (:func:`read_with_pandas`): the reference the
    fast reader's frames are tested against, cell for cell (its columns hold Python strings).

    Raises:
        ResultFileError: the file is empty.
        ResultUnreadable: the file is over a limit.
    """
    encoding, delimiter, names = _result_layout(path, limits)
    return read_with_pandas(path, encoding, delimiter, names)


def _result_layout(path: Path, limits: TableLimits) -> tuple[str, str, list[str]]:
    """A result file's encoding, delimiter and column names, once its lines are known to be within
    ``limits``."""
    encoding = detect_encoding(path)
    with path.open(encoding=encoding, errors="replace", newline="") as handle:
        header_line = handle.readline(limits.max_line_bytes + 2).rstrip("\r\n")
    if not header_line.strip():
        raise ResultFileError("result file is empty: no header row", path=path)
    delimiter = "\t" if "\t" in header_line else sniff_delimiter(header_line) or "\t"
    scan = scan_lines(
        path,
        encoding=encoding,
        delimiter=delimiter,
        stop_above=limits.max_line_bytes,
        fields_from=limits.max_columns,
    )
    refuse_unreadable(path, scan.overrun(limits, exact_fields=True))
    return encoding, delimiter, result_headers(header_line.split(delimiter))


def refuse_unreadable(path: Path, overrun: Overrun | None) -> None:
    if overrun is not None:
        raise ResultUnreadable(overrun.problem, path=path, setting=overrun.setting, limit=overrun.limit)


def read_with_pandas(path: Path, encoding: str, delimiter: str, names: list[str]) -> pd.DataFrame:
    """The data rows of a result file as pandas' C parser reads them, the csv module those it refuses (rows
    wider than the header): the plain reader, for the files the Arrow reader leaves, and the reference its
    frames are tested against."""
    try:
        with warnings.catch_warnings():
            # pandas only warns when a row is longer than the header and drops the surplus; we keep it.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                path,
                sep=delimiter,
                header=None,
                skiprows=1,
                names=names,
                index_col=False,
                dtype=object,
                keep_default_na=False,
                na_values=[],
                quoting=csv.QUOTE_NONE,
                encoding=encoding,
                encoding_errors="replace",
                engine="c",
            )
    except (pd.errors.ParserWarning, pd.errors.ParserError):
        frame = _read_ragged(path, encoding, delimiter, names)
    # Without NA parsing the C parser already yields "" for empty and missing trailing fields.
    return frame


def result_headers(raw: Sequence[str]) -> list[str]:
    """Result file headers folded onto §2.3 spelling; address fields before the first status field (the
    uploaded copies) and earlier repeats of a name get ``_uploaded``."""
    names = [canonical_output_field(name) or name.strip() for name in raw]
    status_positions = [position for position, name in enumerate(names) if name in STATUS_FIELD_NAMES]
    output_start = status_positions[0] if status_positions else 0
    last = {name: position for position, name in enumerate(names)}
    renamed = [
        name + UPLOADED_SUFFIX
        if last[name] != position or (position < output_start and name in ADDRESS_FIELD_NAMES)
        else name
        for position, name in enumerate(names)
    ]
    return unique_names([name or f"Unnamed: {position}" for position, name in enumerate(renamed, start=1)])


def _read_ragged(path: Path, encoding: str, delimiter: str, names: list[str]) -> pd.DataFrame:
    text = path.read_text(encoding=encoding, errors="replace")
    rows = call_with_collector_paused(read_rows, text, delimiter, quoting=csv.QUOTE_NONE)[1:]
    rows = [row for row in rows if row]
    width = max([len(names), *(len(row) for row in rows)])
    columns = names + [f"Unnamed: {position}" for position in range(len(names) + 1, width + 1)]
    return pd.DataFrame([row + [""] * (width - len(row)) for row in rows], columns=columns, dtype=object)


def _string_dtype() -> pd.StringDtype[Literal["pyarrow"]]:
    """The result file's columns: pandas' str dtype held by Arrow, so Arrow's parsed strings are used as they
    are."""
    return pd.StringDtype("pyarrow", na_value=np.nan)
