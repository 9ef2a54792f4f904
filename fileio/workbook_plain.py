"""The plain workbook writer, xlsxwriter in constant-memory mode: it writes the workbooks the fast one cannot
(styled cells, repeated column names, object columns of mixed kinds) and is the reference the fast one is
tested against. Its worksheets look as :func:`fileio.workbooks.write_xlsx` promises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fileio.lazy import lazy_module
from fileio.workbook_charts import Chart, insert_xlsxwriter_charts
from fileio.worksheet_parts import (
    DATE_FORMAT,
    HEADER_FILL,
    WIDTH_SAMPLE_ROWS,
    SheetPart,
    column_width,
    cut_text,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import xlsxwriter
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    xlsxwriter = lazy_module("xlsxwriter")

_CHUNK_ROWS = 50_000

AfterRow = Callable[[Any, int, list[Any]], None]
"""Called with the worksheet, a row number and the row's values (the header's too, as row 0) right after
the row is written, while constant-memory mode still holds it."""


def write_plain_parts(
    path: Path,
    parts: Sequence[SheetPart],
    formats: Mapping[str, Mapping[str, Any]],
    charts: Mapping[str, Sequence[Chart]],
) -> None:
    """Write the parts with xlsxwriter, their styled cells in ``formats`` (by name), ``charts`` (by sheet
    title) beside their tables."""
    with PlainWorkbook(path) as book:
        cell_formats = {name: book.workbook.add_format(dict(props)) for name, props in formats.items()}
        for part in parts:
            book.add_part(part, cell_formats=cell_formats, charts=charts.get(part.title, ()))


class PlainWorkbook:
    """An xlsxwriter workbook (constant-memory mode) whose worksheets are written as
    :func:`~fileio.workbooks.write_xlsx` promises; closed when its ``with`` block ends."""

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
            {"bold": True, "bg_color": HEADER_FILL, "bottom": 1, "text_wrap": False}
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
        frame = _infinities_as_text(_cut_frame(part.frame))
        self._write_header(worksheet, frame, widths, after_row)
        _write_rows(worksheet, frame, _CellStyles(part.style, cell_formats or {}), after_row)
        columns = [str(column) for column in frame.columns]
        insert_xlsxwriter_charts(self.workbook, worksheet, charts, columns, len(frame))
        return worksheet

    def _write_header(
        self,
        worksheet: Any,
        frame: pd.DataFrame,
        widths: Sequence[float] | None,
        after_row: AfterRow | None,
    ) -> None:
        """The columns' widths and formats, the header row, the frozen pane and the autofilter."""
        columns = [str(column) for column in frame.columns]
        # One conversion of the sampled rows for every column: per-column pandas calls cost more than the
        # writing itself on the small, wide frames most runs produce.
        sample = frame.iloc[:WIDTH_SAMPLE_ROWS].to_numpy(dtype=object)
        dates = date_columns(frame)
        for position, column in enumerate(columns):
            cell_format = self.date_format if position in dates else None
            width = column_width(column, sample[:, position].tolist()) if widths is None else widths[position]
            worksheet.set_column(position, position, width, cell_format)
        worksheet.write_row(0, 0, columns, self.header_format)
        if after_row is not None:
            after_row(worksheet, 0, columns)
        worksheet.freeze_panes(1, 0)
        if columns:  # over the header alone when there are no rows, as the fast writer sets it
            worksheet.autofilter(0, 0, len(frame), len(columns) - 1)


@dataclass(frozen=True)
class _CellStyles:
    """The styled cells of a sheet: per cell the name of a format (or None), and the formats by name."""

    style: pd.DataFrame | None
    cell_formats: Mapping[str, Any]

    def in_chunk(self, start: int, rows: int) -> dict[int, list[tuple[int, Any]]]:
        """Per row offset of a chunk, the (column position, format) of its styled cells."""
        if self.style is None:
            return {}
        block = self.style.iloc[start : start + rows].to_numpy(dtype=object)
        cells: dict[int, list[tuple[int, Any]]] = {}
        for offset, position in zip(*pd.notna(block).nonzero(), strict=True):
            name = str(block[offset, position])
            cells.setdefault(int(offset), []).append((int(position), self.cell_formats[name]))
        return cells


def _write_rows(worksheet: Any, frame: pd.DataFrame, styles: _CellStyles, after_row: AfterRow | None) -> None:
    """The frame's rows below the header, in chunks, each styled cell written again with its format."""
    row_number = 1
    for start in range(0, len(frame), _CHUNK_ROWS):
        chunk = frame.iloc[start : start + _CHUNK_ROWS].astype(object)
        styled = styles.in_chunk(start, len(chunk))
        for offset, values in enumerate(chunk.where(chunk.notna(), None).to_numpy().tolist()):
            worksheet.write_row(row_number, 0, values)
            # Same row again, so constant-memory mode still holds it: the styled cells with their format.
            for position, cell_format in styled.get(offset, ()):
                value = values[position]
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


def _cut_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every text cut to what a cell holds (xlsxwriter would leave such a cell out)."""
    prepared = frame
    for position in range(frame.shape[1]):
        values = frame.iloc[:, position]
        if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_datetime64_any_dtype(values.dtype):
            continue
        cut = cut_text(values.astype(object) if isinstance(values.dtype, pd.CategoricalDtype) else values)
        if cut is not None:
            prepared = prepared.copy(deep=False) if prepared is frame else prepared
            prepared.isetitem(position, cut)  # type: ignore[arg-type]
    return prepared


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
