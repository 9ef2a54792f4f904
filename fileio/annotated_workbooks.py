"""Workbooks with an annotated data sheet: single cells filled and noted (Excel's notes), whole rows filled,
notes on header cells; beside it small sheets of tables with their native charts.

The fast writer, rustpy-xlsxwriter, writes the sheets, the row fills and the header notes;
:mod:`fileio.xlsx_annotations` then adds the cell fills and notes to its package. xlsxwriter writes the
same workbook (:func:`write_annotated_xlsx_plain`) where the fast writer cannot, and is the reference it is
tested against.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fileio.files import atomic_path
from fileio.lazy import lazy_module
from fileio.workbook_charts import Chart, charts_by_title
from fileio.workbook_fast import rust_options, rust_writable, write_rust_parts
from fileio.workbook_plain import PlainWorkbook, date_columns
from fileio.worksheet_parts import (
    DATE_FORMAT,
    EXCEL_MAX_ROWS,
    SheetPart,
    column_widths,
    first_titles,
    sheet_parts,
)
from fileio.xlsx_annotations import CellMarks, annotate_package, note_text, pixel_widths

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import rustpy_xlsxwriter
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    rustpy_xlsxwriter = lazy_module("rustpy_xlsxwriter")

NOTE_AUTHOR = "postflows"
CELL_COLUMNS = ("row", "column", "fill", "note")
ROW_COLUMNS = ("row", "fill")


@dataclass(frozen=True)
class AnnotatedSheet:
    """A data sheet with marks: written as :func:`fileio.workbooks.write_xlsx` writes a sheet (bold header,
    frozen header row, autofilter over the table, widths from the header and the first rows), with

    Attributes:
        title: the sheet's name (valid as it is: at most 31 characters, none of ``[]:*?/\\``).
        frame: the table; at most one sheet of rows.
        fills: fill name → colour (``"#RRGGBB"``), the fills ``cells`` and ``rows`` name.
        cells: the marked cells, a frame with columns ``row`` (the frame's row position, from 0),
            ``column`` (a column name of ``frame``), ``fill`` (a name of ``fills``, or None) and ``note``
            (a text, or None); a cell at most once.
        rows: the filled rows, a frame with columns ``row`` and ``fill``; a cell of a filled row that is
            filled itself shows its own fill.
        header_notes: column name → a note on its header cell (shown as ``postflows:`` and the text). A
            sheet with noted cells needs at least one.
        widths: column name → width (in characters), where the width taken from the cells will not do.
        landscape: the workbook's sheets print (and convert to PDF) on landscape pages, each sheet one page
            wide.
    """

    title: str
    frame: pd.DataFrame
    fills: Mapping[str, str] = field(default_factory=dict)
    cells: pd.DataFrame | None = None
    rows: pd.DataFrame | None = None
    header_notes: Mapping[str, str] = field(default_factory=dict)
    widths: Mapping[str, float] = field(default_factory=dict)
    landscape: bool = False


def write_annotated_xlsx(
    path: Path,
    sheet: AnnotatedSheet,
    *,
    sheets: Mapping[str, pd.DataFrame] | None = None,
    charts: Mapping[str, Sequence[Chart]] | None = None,
    lead: Mapping[str, pd.DataFrame] | None = None,
) -> Path:
    """Write ``sheet`` first (after the ``lead`` sheets, e.g. a sandbox run's banner), then the further
    ``sheets`` (small tables), atomically, ``charts[name]`` drawn beside the table of sheet ``name``
    (``sheet.title`` or a name of ``sheets``).

    The fast writer (rustpy-xlsxwriter, its package completed by :mod:`fileio.xlsx_annotations`) writes it;
    a workbook it cannot write as promised (repeated column names, object columns of mixed kinds) is
    written by xlsxwriter (:func:`write_annotated_xlsx_plain`).

    Raises:
        ValueError: a mark names a row, column or fill the sheet does not have, a cell is marked twice,
            cells are noted without a header note, or the frame is longer than a sheet.
    """
    layout = _Layout.of(sheet, sheets, charts, lead)
    with atomic_path(path) as temporary:
        if all(rust_writable(part) for part in layout.parts):
            _write_fast(temporary, sheet, layout)
        else:
            _write_plain(temporary, sheet, layout)
    return path


def write_annotated_xlsx_plain(
    path: Path,
    sheet: AnnotatedSheet,
    *,
    sheets: Mapping[str, pd.DataFrame] | None = None,
    charts: Mapping[str, Sequence[Chart]] | None = None,
    lead: Mapping[str, pd.DataFrame] | None = None,
) -> Path:
    """:func:`write_annotated_xlsx` by xlsxwriter alone (constant-memory mode): cells written with their
    fill's format, ``write_comment`` per note, ``set_row`` per filled row. The reference the fast writer
    is tested against, and the writer of the workbooks it cannot write."""
    layout = _Layout.of(sheet, sheets, charts, lead)
    with atomic_path(path) as temporary:
        _write_plain(temporary, sheet, layout)
    return path


@dataclass(frozen=True)
class _Layout:
    """The workbook's worksheets, the data sheet's marks and widths, the charts by sheet title, and the
    data sheet's position among the worksheets (after the lead sheets)."""

    parts: list[SheetPart]
    marks: CellMarks
    row_fills: dict[int, str]
    widths: list[float]
    charts: dict[str, tuple[Chart, ...]]
    data_index: int = 0

    @classmethod
    def of(
        cls,
        sheet: AnnotatedSheet,
        sheets: Mapping[str, pd.DataFrame] | None,
        charts: Mapping[str, Sequence[Chart]] | None,
        lead: Mapping[str, pd.DataFrame] | None = None,
    ) -> _Layout:
        if len(sheet.frame) >= EXCEL_MAX_ROWS:
            raise ValueError(f"sheet {sheet.title!r}: {len(sheet.frame)} rows do not fit on one sheet")
        parts = sheet_parts({**(lead or {}), sheet.title: sheet.frame, **(sheets or {})}, {})
        data_index = len(lead or {})
        if parts[data_index].title != sheet.title:
            raise ValueError(
                f"{sheet.title!r} is not a valid sheet name (it would be {parts[data_index].title!r})"
            )
        names = [str(column) for column in sheet.frame.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"sheet {sheet.title!r}: a column name more than once (marks name their column)")
        unknown = sorted(set(sheet.widths) - set(names))
        if unknown:
            raise ValueError(f"sheet {sheet.title!r}: widths for no column: {', '.join(unknown)}")
        unknown = sorted(set(sheet.header_notes) - set(names))
        if unknown:
            raise ValueError(f"sheet {sheet.title!r}: header notes for no column: {', '.join(unknown)}")
        computed = column_widths(sheet.frame)
        widths = [sheet.widths.get(name, width) for name, width in zip(names, computed, strict=True)]
        return cls(
            parts=parts,
            marks=_cell_marks(sheet, names),
            row_fills=_row_fills(sheet),
            widths=widths,
            charts=charts_by_title(charts, first_titles(parts)),
            data_index=data_index,
        )


def _cell_marks(sheet: AnnotatedSheet, names: list[str]) -> CellMarks:
    """The sheet's marked cells in sheet coordinates (the header is row 0), sorted, checked."""
    cells = sheet.cells if sheet.cells is not None else pd.DataFrame(columns=list(CELL_COLUMNS))
    _check_columns("cells", cells, CELL_COLUMNS)
    rows = _data_rows("cells", cells["row"], len(sheet.frame))
    columns = pd.Index(names).get_indexer(pd.Index(cells["column"].astype(str)))
    if (columns < 0).any():
        raise ValueError(f"cells: no column {sorted(set(cells['column'][columns < 0].astype(str)))}")
    colors = list(sheet.fills.values())
    fills = _fill_codes("cells", cells["fill"], sheet.fills)
    notes = cells["note"].astype(object)
    noted = notes.notna().to_numpy()
    if noted.any() and not sheet.header_notes:
        raise ValueError(f"sheet {sheet.title!r}: cells with notes need a note on a header cell too")
    order = np.lexsort((columns, rows))
    rows, columns = rows[order] + 1, columns[order]
    if len(rows) > 1 and ((rows[1:] == rows[:-1]) & (columns[1:] == columns[:-1])).any():
        raise ValueError(f"sheet {sheet.title!r}: a cell is marked more than once")
    texts = [note_text(str(note)) if keep else None for note, keep in zip(notes, noted, strict=True)]
    return CellMarks(rows, columns, fills[order], [texts[index] for index in order.tolist()], colors)


def _row_fills(sheet: AnnotatedSheet) -> dict[int, str]:
    """The filled rows: sheet row (the header is row 0) → colour."""
    if sheet.rows is None or sheet.rows.empty:
        return {}
    _check_columns("rows", sheet.rows, ROW_COLUMNS)
    rows = _data_rows("rows", sheet.rows["row"], len(sheet.frame)) + 1
    codes = _fill_codes("rows", sheet.rows["fill"], sheet.fills)
    colors = list(sheet.fills.values())
    return {row: colors[code] for row, code in zip(rows.tolist(), codes.tolist(), strict=True) if code >= 0}


def _check_columns(what: str, frame: pd.DataFrame, expected: Sequence[str]) -> None:
    missing = [name for name in expected if name not in frame.columns]
    if missing:
        raise ValueError(f"{what}: no column {', '.join(missing)}")


def _data_rows(what: str, values: pd.Series, length: int) -> np.ndarray:
    rows = values.to_numpy(dtype=np.int64)
    if len(rows) and (rows.min() < 0 or rows.max() >= length):
        raise ValueError(f"{what}: a row outside the sheet's {length} rows")
    return rows


def _fill_codes(what: str, values: pd.Series, fills: Mapping[str, str]) -> np.ndarray:
    """Per mark, the position of its fill in ``fills`` (-1: none)."""
    present = values.notna().to_numpy()
    codes = np.full(len(values), -1, dtype=np.int64)
    codes[present] = pd.Index(list(fills)).get_indexer(pd.Index(values[present].astype(str)))
    if (codes[present] < 0).any():
        raise ValueError(f"{what}: a fill that is not one of {sorted(fills)}")
    return codes


def _write_fast(path: Path, sheet: AnnotatedSheet, layout: _Layout) -> None:
    options = rust_options(layout.parts, layout.charts)
    title = sheet.title
    options["column_widths"][title] = layout.widths
    formats = {
        color: rustpy_xlsxwriter.Format().set_background_color(color) for color in sheet.fills.values()
    }
    if layout.row_fills:
        options["row_formats"] = {title: {row: formats[color] for row, color in layout.row_fills.items()}}
    if sheet.header_notes:
        options["notes"] = {
            title: {name: {"text": text, "author": NOTE_AUTHOR} for name, text in sheet.header_notes.items()}
        }
    if sheet.landscape:
        options["page_setup"] = {
            part.title: {"landscape": True, "fit_to_pages": (1, 0)} for part in layout.parts
        }
    written = io.BytesIO()
    write_rust_parts(written, layout.parts, options)
    written.seek(0)
    pixels = pixel_widths(layout.widths, len(layout.widths))
    annotate_package(
        written,
        path,
        sheet=layout.data_index + 1,
        marks=layout.marks,
        author=NOTE_AUTHOR,
        column_pixels=pixels,
    )


def _write_plain(path: Path, sheet: AnnotatedSheet, layout: _Layout) -> None:
    with PlainWorkbook(path) as book:
        annotate = _PlainMarks(layout, sheet, book.workbook)
        for number, part in enumerate(layout.parts):
            charts = layout.charts.get(part.title, ())
            if number != layout.data_index:
                worksheet = book.add_part(part, charts=charts)
            else:
                worksheet = book.add_part(part, charts=charts, widths=layout.widths, after_row=annotate)
            if sheet.landscape:
                worksheet.set_landscape()
                worksheet.fit_to_pages(1, 0)


class _PlainMarks:
    """The marks of the data sheet written by xlsxwriter, row by row as its rows are written."""

    def __init__(self, layout: _Layout, sheet: AnnotatedSheet, workbook: Any) -> None:
        marks = layout.marks
        colors = list(sheet.fills.values())
        self._fills = {color: workbook.add_format({"bg_color": color}) for color in colors}
        self._date_fills = {
            color: workbook.add_format({"bg_color": color, "num_format": DATE_FORMAT}) for color in colors
        }
        self._dates = date_columns(sheet.frame)
        self._row_fills = layout.row_fills
        names = [str(column) for column in sheet.frame.columns]
        self._header_notes = [(names.index(name), text) for name, text in sheet.header_notes.items()]
        self._cells: dict[int, list[tuple[int, int, str | None]]] = {}
        for row, column, fill, note in zip(
            marks.rows.tolist(), marks.columns.tolist(), marks.fills.tolist(), marks.notes, strict=True
        ):
            self._cells.setdefault(row, []).append((column, fill, note))
        self._colors = marks.colors

    def __call__(self, worksheet: Any, row: int, values: list[Any]) -> None:
        if row == 0:
            for column, text in self._header_notes:
                # As rust_xlsxwriter shows a header note: its author, then the text.
                worksheet.write_comment(0, column, f"{NOTE_AUTHOR}:\n{text}", {"author": NOTE_AUTHOR})
            return
        color = self._row_fills.get(row)
        if color is not None:
            worksheet.set_row(row, None, self._fills[color])
            # The row's format takes the place of the column's: dates keep theirs with the row's fill.
            for column in self._dates:
                if values[column] is not None:
                    worksheet.write(row, column, values[column], self._date_fills[color])
        for column, fill, note in self._cells.get(row, ()):
            if fill >= 0:
                color = self._colors[fill]
                value = values[column]
                if value is None:  # the fill alone, as the fast writer makes the cell
                    worksheet.write_blank(row, column, None, self._fills[color])
                else:
                    formats = self._date_fills if column in self._dates else self._fills
                    worksheet.write(row, column, value, formats[color])
            if note is not None:
                worksheet.write_comment(row, column, note, {"author": NOTE_AUTHOR})
