"""The fast workbook writer, rustpy-xlsxwriter (Rust's rust_xlsxwriter): which worksheets it writes as
:func:`fileio.workbooks.write_xlsx` promises, the options that make it do so, and the frames prepared for it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from fileio.lazy import lazy_module
from fileio.workbook_charts import Chart, rust_charts
from fileio.worksheet_parts import DATE_FORMAT, HEADER_FILL, SheetPart, column_widths, cut_text

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import rustpy_xlsxwriter
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    rustpy_xlsxwriter = lazy_module("rustpy_xlsxwriter")


def rust_writable(part: SheetPart) -> bool:
    """Whether rustpy-xlsxwriter writes the part as :func:`~fileio.workbooks.write_xlsx` promises: no
    styled cells (it styles whole columns only) and no repeated column name (it takes the header from
    unique names)."""
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
    """The options of ``rustpy_xlsxwriter.write_worksheets`` that write the parts as
    :func:`~fileio.workbooks.write_xlsx` promises, with ``charts`` (by sheet title) drawn on their sheets."""
    header = rustpy_xlsxwriter.Format().set_bold().set_background_color(HEADER_FILL).set_border_bottom("thin")
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
        cut = cut_text(values)
        if cut is None and not (has_missing and pd.api.types.is_object_dtype(dtype)):
            return None
        return (values if cut is None else cut).astype(object).where(~missing, None)
    if has_missing and (
        pd.api.types.is_datetime64_dtype(dtype) or isinstance(dtype, pd.api.extensions.ExtensionDtype)
    ):
        return values.astype(object).where(~missing, None)  # rustpy-xlsxwriter refuses NaT and pd.NA
    return None
