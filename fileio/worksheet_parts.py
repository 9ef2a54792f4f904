"""What every workbook writer shares: Excel's limits, the worksheets a set of frames becomes (cut to fit a
sheet, titled validly and uniquely), column widths from the header and the first rows, text cut to a cell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    # Imported on first use: modules that import a writer for later (the CLI's checks) pay nothing.
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

EXCEL_MAX_ROWS = 1_048_576
EXCEL_SHEET_NAME_LENGTH = 31
EXCEL_MAX_TEXT = 32_767  # characters in a cell
DATE_FORMAT = "yyyy-mm-dd hh:mm:ss"
HEADER_FILL = "#DDEBF7"
WIDTH_SAMPLE_ROWS = 100
_SHEET_NAME_FORBIDDEN = re.compile(r"[\[\]:*?/\\]")
_MIN_WIDTH, _MAX_WIDTH = 6, 60


@dataclass(frozen=True)
class SheetPart:
    """One worksheet to write: its valid title, its rows, the styles of its cells (or None) and the name of
    the frame it is (a part of)."""

    title: str
    frame: pd.DataFrame
    style: pd.DataFrame | None
    name: str = ""


def first_titles(parts: Sequence[SheetPart]) -> dict[str, str]:
    """The title of each frame's first worksheet, by the frame's name."""
    titles: dict[str, str] = {}
    for part in parts:
        titles.setdefault(part.name, part.title)
    return titles


def sheet_parts(sheets: Mapping[str, pd.DataFrame], styles: Mapping[str, pd.DataFrame]) -> list[SheetPart]:
    """The worksheets for ``sheets``: each frame cut into parts that fit a sheet, titled validly."""
    used: set[str] = set()
    result: list[SheetPart] = []
    for name, frame in sheets.items():
        parts = [
            frame.iloc[start : start + EXCEL_MAX_ROWS - 1]
            for start in range(0, len(frame), EXCEL_MAX_ROWS - 1)
        ]
        style = styles.get(name)
        for number, part in enumerate(parts or [frame], start=1):
            title = sanitize_sheet_name(name if number == 1 else f"{name} ({number})", used)
            used.add(title.casefold())
            start = (number - 1) * (EXCEL_MAX_ROWS - 1)
            result.append(
                SheetPart(title, part, None if style is None else style.iloc[start : start + len(part)], name)
            )
    return result


def sanitize_sheet_name(name: str, used: set[str] | None = None) -> str:
    """A valid, unused (case-insensitively) Excel sheet name for ``name``."""
    base = _SHEET_NAME_FORBIDDEN.sub("_", name).strip().strip("'") or "Sheet"
    base = base[:EXCEL_SHEET_NAME_LENGTH]
    taken = used or set()
    candidate, counter = base, 1
    while candidate.casefold() in taken:
        counter += 1
        suffix = f" ({counter})"
        candidate = base[: EXCEL_SHEET_NAME_LENGTH - len(suffix)] + suffix
    return candidate


def column_widths(frame: pd.DataFrame) -> list[float]:
    """The width of each column: its header's or its longest cell's among the first rows, within bounds."""
    return [
        column_width(str(column), frame.iloc[:WIDTH_SAMPLE_ROWS, position].tolist())
        for position, column in enumerate(frame.columns)
    ]


def column_width(header: str, sample: list[Any]) -> float:
    """The width of a column with this header and these sampled cells."""
    longest = max([len(header), *(len(str(value)) for value in sample if not _missing(value))])
    return float(min(max(longest + 2, _MIN_WIDTH), _MAX_WIDTH))


def _missing(value: Any) -> bool:
    return bool(pd.api.types.is_scalar(value) and pd.isna(value))


def cut_text(values: pd.Series) -> pd.Series | None:
    """A column of text (or of anything) with every text cut to what a cell holds, or None when no text
    is longer."""
    texts = values.to_numpy(dtype=object)
    if _longest_text(texts) <= EXCEL_MAX_TEXT:
        return None
    cut = [text[:EXCEL_MAX_TEXT] if isinstance(text, str) else text for text in texts]
    return pd.Series(cut, index=values.index, dtype=object)


def _longest_text(values: np.ndarray) -> int:
    texts = (
        values
        if pd.api.types.infer_dtype(values, skipna=False) == "string"
        else [value for value in values if isinstance(value, str)]
    )
    return max(map(len, texts), default=0)
