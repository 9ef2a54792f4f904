"""Report files shared by every pipeline: CSV (UTF-8), styled Excel workbooks written row by row, markdown
tables; each file is written under a temporary name and moved into place, so no reader sees half of it.

CSV injection: a spreadsheet opening a CSV file runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a
formula (and a leading tab or carriage return hides such a start). Text that comes from a customer's file or
from a service's free text is written with a leading ``'`` (the OWASP advice) when ``formula_guard`` is
set; columns that hold a service's codes are named by the caller and left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Hashable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tasks.files import atomic_path
from tasks.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import xlsxwriter
else:
    # Imported on first use: modules that import a writer for later (the CLI's checks) pay nothing.
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    xlsxwriter = lazy_module("xlsxwriter")

EXCEL_MAX_ROWS = 1_048_576
EXCEL_SHEET_NAME_LENGTH = 31
_SHEET_NAME_FORBIDDEN = re.compile(r"[\[\]:*?/\\]")
_WIDTH_SAMPLE_ROWS = 100
_MIN_WIDTH, _MAX_WIDTH = 6, 60
_CHUNK_ROWS = 50_000
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_GUARD = "'"


def write_csv(
    frame: pd.DataFrame, path: Path, *, formula_guard: bool = False, code_columns: Collection[Hashable] = ()
) -> Path:
    """Write a frame as UTF-8 CSV (comma, header, no index), atomically.

    Args:
        frame: what to write.
        path: the file.
        formula_guard: neutralise text that a spreadsheet would run as a formula (see
            :func:`neutralise_formulas`) in the column names and in every column but ``code_columns``.
        code_columns: columns holding codes of a service (QSTAT, a ShortReport label such as
            ``"- no statement"``), written as they are.
    """
    header: list[str] | bool = True
    if formula_guard:
        frame = neutralise_formulas(frame, [column for column in frame.columns if column not in code_columns])
        # A customer's column name is a cell too.
        header = [_guard_text(str(column)) for column in frame.columns]
    with atomic_path(path) as temporary:
        frame.to_csv(temporary, index=False, encoding="utf-8", header=header)
    return path


def neutralise_formulas(frame: pd.DataFrame, columns: Iterable[Hashable] | None = None) -> pd.DataFrame:
    """The frame with a ``'`` before every text value of ``columns`` (all columns when None) that starts with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, so that a spreadsheet shows it as text.

    Numbers, booleans and missing values are left alone (``-5`` as a number is no formula), as are other
    columns. Vectorised: one ``str.startswith`` per text column; the caller's frame is never modified, and
    it is returned itself when nothing needs changing.
    """
    changed: dict[Hashable, pd.Series] = {}
    for column in frame.columns if columns is None else columns:
        values = frame[column]
        guarded = _guard_series(values)
        if guarded is not None:
            changed[column] = guarded
    if not changed:
        return frame
    result = frame.copy(deep=False)
    for column, values in changed.items():
        result[column] = values
    return result


def _guard_text(text: str) -> str:
    return FORMULA_GUARD + text if text.startswith(FORMULA_STARTS) else text


def _guard_series(values: pd.Series) -> pd.Series | None:
    """The guarded column, or None when no value needs the guard."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = values.cat.categories
        if not (pd.api.types.is_string_dtype(categories) or categories.dtype == object):
            return None
        guarded = _guard_series(pd.Series(categories, dtype=object))
        if guarded is None:
            return None
        if guarded.duplicated().any():  # "=x" beside "'=x": the categories would collide
            return _guard_series(values.astype(object))
        return values.cat.rename_categories(guarded.tolist())
    if not (pd.api.types.is_string_dtype(values) or values.dtype == object):
        return None
    hits = values.str.startswith(FORMULA_STARTS, na=False).astype(bool)
    if not hits.any():
        return None
    result = values.copy()
    result[hits] = FORMULA_GUARD + values[hits].astype(str)
    return result


def write_xlsx(
    path: Path,
    sheets: Mapping[str, pd.DataFrame],
    *,
    styles: Mapping[str, pd.DataFrame] | None = None,
    formats: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Write one worksheet per frame, atomically, streaming rows (xlsxwriter constant-memory mode).

    Each sheet has a bold, filled header row, a frozen header pane, an autofilter over the data and column
    widths taken from the header and the first rows. Numbers stay numbers, text stays text (``"0123"`` keeps
    its zero), missing values are empty cells, and text is never turned into formulas or links. Sheet names
    are made valid (no ``[]:*?/\\``, at most 31 characters, unique); a frame longer than a sheet continues on
    ``"<name> (2)"``.

    Cells can be styled: ``styles[name]`` is a frame of the sheet's shape (matched by position) holding, per
    cell, the name of one of ``formats`` (xlsxwriter format properties, e.g. ``{"bg_color": "#C6EFCE"}``)
    or None for a plain cell.
    """
    with atomic_path(path) as temporary:
        workbook = xlsxwriter.Workbook(
            str(temporary),
            {
                "constant_memory": True,
                "strings_to_formulas": False,
                "strings_to_urls": False,
                "strings_to_numbers": False,
                "remove_timezone": True,
            },
        )
        header_format = workbook.add_format(
            {"bold": True, "bg_color": "#DDEBF7", "bottom": 1, "text_wrap": False}
        )
        date_format = workbook.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
        cell_formats = {name: workbook.add_format(dict(props)) for name, props in (formats or {}).items()}
        used: set[str] = set()
        try:
            for name, frame in sheets.items():
                parts = [
                    frame.iloc[start : start + EXCEL_MAX_ROWS - 1]
                    for start in range(0, len(frame), EXCEL_MAX_ROWS - 1)
                ]
                style = (styles or {}).get(name)
                for number, part in enumerate(parts or [frame], start=1):
                    title = sanitize_sheet_name(name if number == 1 else f"{name} ({number})", used)
                    used.add(title.casefold())
                    worksheet = workbook.add_worksheet(title)
                    start = (number - 1) * (EXCEL_MAX_ROWS - 1)
                    part_style = None if style is None else style.iloc[start : start + len(part)]
                    _write_sheet(worksheet, part, header_format, date_format, part_style, cell_formats)
        finally:
            workbook.close()
    return path


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


def _write_sheet(
    worksheet: Any,
    frame: pd.DataFrame,
    header_format: Any,
    date_format: Any,
    style: pd.DataFrame | None = None,
    cell_formats: Mapping[str, Any] | None = None,
) -> None:
    frame = _infinities_as_text(frame)
    columns = [str(column) for column in frame.columns]
    # One conversion of the sampled rows for every column: per-column pandas calls cost more than the
    # writing itself on the small, wide frames most runs produce.
    sample = frame.iloc[:_WIDTH_SAMPLE_ROWS].to_numpy(dtype=object)
    for position, (column, dtype) in enumerate(zip(columns, frame.dtypes, strict=True)):
        cell_format = date_format if pd.api.types.is_datetime64_any_dtype(dtype) else None
        width = _column_width(column, sample[:, position].tolist())
        worksheet.set_column(position, position, width, cell_format)
    worksheet.write_row(0, 0, columns, header_format)
    worksheet.freeze_panes(1, 0)
    if columns:
        worksheet.autofilter(0, 0, max(len(frame), 1), len(columns) - 1)
    row_number = 1
    for start in range(0, len(frame), _CHUNK_ROWS):
        chunk = frame.iloc[start : start + _CHUNK_ROWS].astype(object)
        styled = _styled_cells(style, start, len(chunk))
        for offset, values in enumerate(chunk.where(chunk.notna(), None).to_numpy().tolist()):
            worksheet.write_row(row_number, 0, values)
            # Same row again, so constant-memory mode still holds it: the styled cells with their format.
            for position, name in styled.get(offset, ()):
                value = values[position]
                cell_format = (cell_formats or {})[name]
                if value is None:
                    worksheet.write_blank(row_number, position, None, cell_format)
                else:
                    worksheet.write(row_number, position, value, cell_format)
            row_number += 1


def _infinities_as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with an infinite number written ``inf`` or ``-inf``: a cell cannot hold one as a number
    (and none of our columns should hold one)."""
    infinite = [
        position
        for position in range(frame.shape[1])
        if pd.api.types.is_float_dtype(frame.iloc[:, position]) and np.isinf(frame.iloc[:, position]).any()
    ]
    if not infinite:
        return frame
    frame = frame.copy()
    for position in infinite:
        values = frame.iloc[:, position]
        frame[frame.columns[position]] = values.astype(object).where(~np.isinf(values), values.map(str))
    return frame


def _styled_cells(style: pd.DataFrame | None, start: int, rows: int) -> dict[int, list[tuple[int, str]]]:
    """Per row offset of a chunk, the (column position, format name) of its styled cells."""
    if style is None:
        return {}
    block = style.iloc[start : start + rows].to_numpy(dtype=object)
    cells: dict[int, list[tuple[int, str]]] = {}
    for offset, position in zip(*pd.notna(block).nonzero(), strict=True):
        cells.setdefault(int(offset), []).append((int(position), str(block[offset, position])))
    return cells


def _column_width(header: str, sample: list[Any]) -> float:
    longest = max([len(header), *(len(str(value)) for value in sample if not _missing(value))])
    return float(min(max(longest + 2, _MIN_WIDTH), _MAX_WIDTH))


def _missing(value: Any) -> bool:
    return bool(pd.api.types.is_scalar(value) and pd.isna(value))


def markdown_table(frame: pd.DataFrame, *, max_rows: int = 50) -> str:
    """A GitHub-flavoured markdown table of the first ``max_rows`` rows; a note counts the rows left out."""
    if frame.columns.empty:
        return "_(no columns)_"
    header = "| " + " | ".join(_markdown_cell(column) for column in frame.columns) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    shown = frame.iloc[:max_rows].astype(object)
    body = [
        "| " + " | ".join(_markdown_cell(value) for value in row) + " |"
        for row in shown.where(shown.notna(), None).to_numpy().tolist()
    ]
    lines = [header, rule, *body]
    if len(frame) > max_rows:
        lines.append("")
        lines.append(f"_… {len(frame) - max_rows} more rows_")
    return "\n".join(lines)


def _markdown_cell(value: object) -> str:
    if value is None:
        return ""
    text = format(value, ".15g") if isinstance(value, float) else str(value)
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")
