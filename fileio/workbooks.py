"""Results workbooks (.xlsx) written atomically: one worksheet per frame with a styled header, frozen pane,
filter and column widths; numbers stay numbers, text stays text, never a formula.

Two writers give the same workbook: the fast one, rustpy-xlsxwriter (Rust's rust_xlsxwriter), for every
workbook it writes as promised, and the plain one, xlsxwriter (:func:`write_xlsx_plain`), for the rest
(styled cells, repeated column names, object columns of mixed kinds) and as the reference the fast one is
tested against.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from fileio.files import atomic_path
from fileio.lazy import lazy_module
from fileio.workbook_charts import Chart, charts_by_title, insert_xlsxwriter_charts, rust_charts

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import rustpy_xlsxwriter
    import xlsxwriter
else:
    # Imported on first use: modules that import a writer for later (the CLI's checks) pay nothing.
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    rustpy_xlsxwriter = lazy_module("rustpy_xlsxwriter")
    xlsxwriter = lazy_module("xlsxwriter")

EXCEL_MAX_ROWS = 1_048_576
EXCEL_SHEET_NAME_LENGTH = 31
EXCEL_MAX_TEXT = 32_767  # characters in a cell
DATE_FORMAT = "yyyy-mm-dd hh:mm:ss"
_HEADER_FILL = "#DDEBF7"
_SHEET_NAME_FORBIDDEN = re.compile(r"[\[\]:*?/\\]")
_WIDTH_SAMPLE_ROWS = 100
_MIN_WIDTH, _MAX_WIDTH = 6, 60
_CHUNK_ROWS = 50_000


def write_xlsx(
    path: Path,
    sheets: Mapping[str, pd.DataFrame],
    *,
    styles: Mapping[str, pd.DataFrame] | None = None,
    formats: Mapping[str, Mapping[str, Any]] | None = None,
    charts: Mapping[str, Sequence[Chart]] | None = None,
) -> Path:
    """Write one worksheet per frame, atomically, streaming rows (constant-memory mode).

    Each sheet has a bold, filled header row, a frozen header pane, an autofilter over the data and column
    widths taken from the header and the first rows. Numbers stay numbers, text stays text (``"0123"`` keeps
    its zero), dates are dates, missing values are empty cells, an infinite number is the text ``inf``, and
    text is never turned into formulas or links. Text longer than a cell holds (32,767 characters) is cut
    to that length. Sheet names are made valid (no ``[]:*?/\\``, at most 31 characters, unique); a frame
    longer than a sheet continues on ``"<name> (2)"``.

    Cells can be styled: ``styles[name]`` is a frame of the sheet's shape (matched by position) holding, per
    cell, the name of one of ``formats`` (xlsxwriter format properties, e.g. ``{"bg_color": "#C6EFCE"}``)
    or None for a plain cell.

    Sheets can hold native charts of their own table: ``charts[name]`` are drawn beside the table of sheet
    ``name`` (see :class:`~fileio.workbook_charts.Chart`), one below the other.

    Workbooks are written by rustpy-xlsxwriter (Rust's rust_xlsxwriter), several times faster than
    xlsxwriter; a workbook with styled cells or with a sheet whose column names repeat, which it cannot
    write, is written by xlsxwriter as before (:func:`write_xlsx_plain`).
    """
    parts = sheet_parts(sheets, styles or {})
    drawn = charts_by_title(charts, first_titles(parts))
    with atomic_path(path) as temporary:
        if parts and all(rust_writable(part) for part in parts):
            write_rust_parts(temporary, parts, rust_options(parts, drawn))
        else:
            _write_xlsxwriter(temporary, parts, formats or {}, drawn)
    return path


def write_xlsx_plain(
    path: Path,
    sheets: Mapping[str, pd.DataFrame],
    *,
    styles: Mapping[str, pd.DataFrame] | None = None,
    formats: Mapping[str, Mapping[str, Any]] | None = None,
    charts: Mapping[str, Sequence[Chart]] | None = None,
) -> Path:
    """:func:`write_xlsx` by xlsxwriter alone: the plain writer, which writes the workbooks the fast one
    cannot, and the reference the fast one's workbooks are tested against, cell for cell."""
    parts = sheet_parts(sheets, styles or {})
    with atomic_path(path) as temporary:
        _write_xlsxwriter(temporary, parts, formats or {}, charts_by_title(charts, first_titles(parts)))
    return path


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


def rust_writable(part: SheetPart) -> bool:
    """Whether rustpy-xlsxwriter writes the part as :func:`write_xlsx` promises: no styled cells (it styles
    whole columns only) and no repeated column name (it takes the header from unique names)."""
    names = [str(column) for column in part.frame.columns]
    if part.style is not None or len(set(names)) != len(names):
        return False
    frame = part.frame
    return all(
        _cells_keep_their_types(frame.iloc[:, position])
        for position, dtype in enumerate(frame.dtypes)
        if pd.api.types.is_object_dtype(dtype)
    )


def _cells_keep_their_types(values: pd.Series) -> bool:
    """Whether rustpy-xlsxwriter writes each cell of an object column as a cell of its own type. It does
    for text among numbers or booleans, but it types a column of mixed values by its first one as well: a
    boolean after a float is written as the number 1, a float beside a date as a date. Such a column (rare:
    our frames hold text, or values of one kind) is left to xlsxwriter."""
    if not pd.api.types.infer_dtype(values, skipna=True).startswith("mixed"):
        return True
    kinds = {
        "date" if isinstance(value, dt.date | dt.time) else "bool" if isinstance(value, bool | np.bool_)
        else "number" if isinstance(value, int | float | np.number) else "other"
        for value in values.dropna().tolist()
    }  # fmt: skip
    return not ("bool" in kinds and "number" in kinds) and not ("date" in kinds and len(kinds) > 1)


def rust_options(parts: Sequence[SheetPart], charts: Mapping[str, Sequence[Chart]]) -> dict[str, Any]:
    """The options of ``rustpy_xlsxwriter.write_worksheets`` that write the parts as :func:`write_xlsx`
    promises, with ``charts`` (by sheet title) drawn on their sheets."""
    header = (
        rustpy_xlsxwriter.Format().set_bold().set_background_color(_HEADER_FILL).set_border_bottom("thin")
    )
    columns = {part.title: [str(column) for column in part.frame.columns] for part in parts}
    return {
        "freeze_panes": {"general": {"row": 1, "col": 0}},
        "datetime_format": DATE_FORMAT,
        "header_format": {part.title: header for part in parts},
        "column_widths": {part.title: column_widths(part.frame) for part in parts},
        "autofilter": {title: True for title, names in columns.items() if names},
        "inf_value": "inf",
        "charts": {title: rust_charts(drawn, columns[title]) for title, drawn in charts.items()},
    }


def write_rust_parts(path: Path | BinaryIO, parts: Sequence[SheetPart], options: Mapping[str, Any]) -> None:
    """Write the parts with rustpy-xlsxwriter, each as its frame prepared by :func:`_rust_frame`."""
    rustpy_xlsxwriter.write_worksheets(
        [(part.title, _rust_frame(part.frame)) for part in parts], path, **options
    )


def _rust_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as rustpy-xlsxwriter writes it as promised: column names as text, every missing value
    (NaN, None, NaT, ``pd.NA``) a None it leaves empty, dates without a time zone (their local time, as
    xlsxwriter's ``remove_timezone``), text cut to what a cell holds. Columns that need none of this are
    passed as they are, without a copy."""
    prepared = frame.copy(deep=False)
    prepared.columns = pd.Index([str(column) for column in frame.columns], dtype=object)
    for position in range(frame.shape[1]):
        values = _rust_column(frame.iloc[:, position])
        if values is not None:
            # A Series, as pandas takes it (its stubs say otherwise): an array of objects would be inferred
            # back into the dates with NaT that rustpy-xlsxwriter refuses.
            prepared.isetitem(position, values)  # type: ignore[arg-type]
    return prepared


def _rust_column(values: pd.Series) -> pd.Series | None:
    """A column in a form rustpy-xlsxwriter writes as promised, or None when it is in one already."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        # As plain values: rustpy-xlsxwriter leaves a category column's cells empty when pandas keeps its
        # categories in Arrow (pandas' str dtype, with pyarrow installed).
        plain = values.astype(object)
        converted = _rust_column(plain)
        return plain if converted is None else converted
    if isinstance(dtype, pd.DatetimeTZDtype):
        local = values.dt.tz_localize(None)
        converted = _rust_column(local)
        return local if converted is None else converted
    missing = values.isna()
    has_missing = bool(missing.any())
    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        cut = _cut_text(values)
        if cut is None and not (has_missing and pd.api.types.is_object_dtype(dtype)):
            return None
        return (values if cut is None else cut).astype(object).where(~missing, None)
    if has_missing and (
        pd.api.types.is_datetime64_dtype(dtype) or isinstance(dtype, pd.api.extensions.ExtensionDtype)
    ):
        return values.astype(object).where(~missing, None)  # rustpy-xlsxwriter refuses NaT and pd.NA
    return None


def _cut_text(values: pd.Series) -> pd.Series | None:
    """A column of text (or of anything) with every text cut to what a cell holds, or None when no text
    is longer."""
    texts = values.to_numpy(dtype=object)
    if _longest_text(texts) <= EXCEL_MAX_TEXT:
        return None
    cut = [text[:EXCEL_MAX_TEXT] if isinstance(text, str) else text for text in texts]
    return pd.Series(cut, index=values.index, dtype=object)


def _cut_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every text cut to what a cell holds (xlsxwriter would leave such a cell out)."""
    prepared = frame
    for position in range(frame.shape[1]):
        values = frame.iloc[:, position]
        if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_datetime64_any_dtype(values.dtype):
            continue
        cut = _cut_text(values.astype(object) if isinstance(values.dtype, pd.CategoricalDtype) else values)
        if cut is not None:
            prepared = prepared.copy(deep=False) if prepared is frame else prepared
            prepared.isetitem(position, cut)  # type: ignore[arg-type]
    return prepared


def _longest_text(values: np.ndarray) -> int:
    texts = (
        values
        if pd.api.types.infer_dtype(values, skipna=False) == "string"
        else [value for value in values if isinstance(value, str)]
    )
    return max(map(len, texts), default=0)


def column_widths(frame: pd.DataFrame) -> list[float]:
    return [
        _column_width(str(column), frame.iloc[:_WIDTH_SAMPLE_ROWS, position].tolist())
        for position, column in enumerate(frame.columns)
    ]


def _write_xlsxwriter(
    path: Path,
    parts: list[SheetPart],
    formats: Mapping[str, Mapping[str, Any]],
    charts: Mapping[str, Sequence[Chart]],
) -> None:
    with PlainWorkbook(path) as book:
        cell_formats = {name: book.workbook.add_format(dict(props)) for name, props in formats.items()}
        for part in parts:
            book.add_part(part, cell_formats=cell_formats, charts=charts.get(part.title, ()))


AfterRow = Callable[[Any, int, list[Any]], None]
"""Called with the worksheet, a row number and the row's values (the header's too, as row 0) right after
the row is written, while constant-memory mode still holds it."""


class PlainWorkbook:
    """An xlsxwriter workbook (constant-memory mode) whose worksheets are written as :func:`write_xlsx`
    promises; closed when its ``with`` block ends."""

    def __init__(self, path: Path) -> None:
        self.workbook = xlsxwriter.Workbook(
            str(path),
            {
                "constant_memory": True,
                "strings_to_formulas": False,
                "strings_to_urls": False,
                "strings_to_numbers": False,
                "remove_timezone": True,
            },
        )
        self.header_format = self.workbook.add_format(
            {"bold": True, "bg_color": _HEADER_FILL, "bottom": 1, "text_wrap": False}
        )
        self.date_format = self.workbook.add_format({"num_format": DATE_FORMAT})

    def __enter__(self) -> PlainWorkbook:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.workbook.close()

    def add_part(
        self,
        part: SheetPart,
        *,
        cell_formats: Mapping[str, Any] | None = None,
        charts: Sequence[Chart] = (),
        widths: Sequence[float] | None = None,
        after_row: AfterRow | None = None,
    ) -> Any:
        """Write the part on a worksheet of its own, ``charts`` beside its table; returns the worksheet."""
        worksheet = self.workbook.add_worksheet(part.title)
        frame = _cut_frame(part.frame)
        _write_sheet(
            worksheet,
            frame,
            self.header_format,
            self.date_format,
            part.style,
            cell_formats,
            widths=widths,
            after_row=after_row,
        )
        columns = [str(column) for column in frame.columns]
        insert_xlsxwriter_charts(self.workbook, worksheet, charts, columns, len(frame))
        return worksheet


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
    *,
    widths: Sequence[float] | None = None,
    after_row: AfterRow | None = None,
) -> None:
    frame = _infinities_as_text(frame)
    columns = [str(column) for column in frame.columns]
    # One conversion of the sampled rows for every column: per-column pandas calls cost more than the
    # writing itself on the small, wide frames most runs produce.
    sample = frame.iloc[:_WIDTH_SAMPLE_ROWS].to_numpy(dtype=object)
    dates = date_columns(frame)
    for position, column in enumerate(columns):
        cell_format = date_format if position in dates else None
        width = _column_width(column, sample[:, position].tolist()) if widths is None else widths[position]
        worksheet.set_column(position, position, width, cell_format)
    worksheet.write_row(0, 0, columns, header_format)
    if after_row is not None:
        after_row(worksheet, 0, columns)
    worksheet.freeze_panes(1, 0)
    if columns:  # over the header alone when there are no rows, as the fast writer sets it
        worksheet.autofilter(0, 0, len(frame), len(columns) - 1)
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
            if after_row is not None:
                after_row(worksheet, row_number, values)
            row_number += 1


def date_columns(frame: pd.DataFrame) -> set[int]:
    """The positions of the columns whose cells are shown as dates."""
    return {
        position
        for position, dtype in enumerate(frame.dtypes)
        if pd.api.types.is_datetime64_any_dtype(dtype)
        or (pd.api.types.is_object_dtype(dtype) and _holds_dates(frame.iloc[:, position]))
    }


def _holds_dates(values: pd.Series) -> bool:
    """Whether a column of objects holds dates with times only (or missing values): its cells are shown
    as dates, as the fast writer shows them."""
    return pd.api.types.infer_dtype(values, skipna=True) in ("datetime", "datetime64")


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
