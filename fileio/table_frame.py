"""What the table readers give: :class:`Table`, an all-string frame with its unreadable rows and the lines
where its rows start, and the rules its column names follow (repeats refused, blank names numbered, the
empty unnamed columns spreadsheets export dropped, pandas' repeat suffixes).

Also how such frames are built cheaply: Arrow text columns handed to pandas on their own buffers, and the
cyclic garbage collector paused while millions of cells are made.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from fileio.errors import InputError
from fileio.lazy import lazy_module
from fileio.source_layout import SourceLayout

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    pa = lazy_module("pyarrow")


@dataclass
class Table:
    """A file's rows as strings and the rows that could not be read.

    ``frame`` has the source headers, empty cells as ``""`` or NaN, and the 1-based data row number as index
    (blank rows included); ``malformed`` lists (row, problem), and a malformed row's cells are empty.
    ``lines`` holds, per row, the physical line of the file where it starts (the header is line 1); None
    for a workbook. ``control_characters`` is False when the file is known to hold no control character
    (C0 but tab, line feed and carriage return; DEL), so that callers need not look for them cell by cell.
    ``layout`` says how the file was read (:class:`fileio.source_layout.SourceLayout`), so that it can be
    written back in the same form.
    """

    frame: pd.DataFrame
    malformed: list[tuple[int, str]] = field(default_factory=list)
    encoding: str | None = None
    delimiter: str | None = None
    lines: np.ndarray | None = None
    control_characters: bool = True
    layout: SourceLayout | None = None


def unique_headers(header: Sequence[str], path: Path) -> list[str]:
    """Headers stripped; blanks named ``Unnamed: <n>``.

    Raises:
        InputError: a header repeats (``Ort;Ort``): which column is meant would be a guess, so the file is
            refused naming the header and its columns.
    """
    names = [raw.strip() or f"Unnamed: {position}" for position, raw in enumerate(header, start=1)]
    columns: dict[str, list[int]] = {}
    for position, name in enumerate(names, start=1):
        columns.setdefault(name, []).append(position)
    repeated = [(name, positions) for name, positions in columns.items() if len(positions) > 1]
    if repeated:
        name, positions = repeated[0]
        listed = ", ".join(map(str, positions[:-1])) + f" and {positions[-1]}"
        more = f" (and {len(repeated) - 1} more headers repeat)" if len(repeated) > 1 else ""
        raise InputError(
            f"header {name!r} names columns {listed}{more}; give each column its own name", path=path
        )
    return names


def unique_names(names: Sequence[str]) -> list[str]:
    """``names`` with each repeat suffixed ``.1``, ``.2`` as pandas does, skipping suffixes that another
    column already has as its own name: ``x.1, x, x`` becomes ``x.1, x, x.2``."""
    taken = set(names)
    seen: set[str] = set()
    counters: dict[str, int] = {}
    unique: list[str] = []
    for name in names:
        if name in seen:
            number = counters.get(name, 0)
            candidate = name
            while candidate in taken:
                number += 1
                candidate = f"{name}.{number}"
            counters[name] = number
            taken.add(candidate)
            name = candidate
        seen.add(name)
        unique.append(name)
    return unique


def drop_unnamed_empty(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop columns with a blank header and no values: the trail of separators spreadsheets export."""
    unnamed = [
        column
        for column in frame.columns
        if column.startswith("Unnamed: ") and frame[column].fillna("").str.strip().eq("").all()
    ]
    return frame.drop(columns=unnamed) if unnamed else frame


def text_frame(table: pa.Table, *, self_destruct: bool = False) -> pd.DataFrame:
    """An Arrow table of text (``large_string`` columns) as a frame of pandas' ``str`` dtype, on the same
    buffers; ``self_destruct`` frees each Arrow column as it is handed over."""
    frame: pd.DataFrame = table.to_pandas(
        types_mapper={pa.large_string(): pd.StringDtype("pyarrow", na_value=np.nan)}.get,
        self_destruct=self_destruct,
    )
    return frame


_P = ParamSpec("_P")
_R = TypeVar("_R")


def call_with_collector_paused(call: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """``call(*args, **kwargs)`` with Python's cyclic garbage collector paused for that call alone: building a
    sheet's million cells (a list per row) would start it hundreds of times over, to find no cycle in them
    (100,000 rows: 0.24 s to 0.11 s).

    The collector's switch is the whole process's, so ``call`` must spend its time in compiled code that
    keeps the GIL until it returns (calamine's ``to_python`` and numpy taking its rows, ``list()`` of a csv
    reader): no other thread runs Python code meanwhile, so the pause holds up no other thread's
    collection (fan-out threads reading files side by side). A caller that paused the collector itself
    finds it paused afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return call(*args, **kwargs)
    finally:
        if enabled:
            gc.enable()
