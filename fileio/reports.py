"""Report files shared by every pipeline: CSV files for people, styled Excel workbooks (written by
:mod:`fileio.workbooks`, their writers importable from here too), markdown tables; each file is written under
a temporary name and moved into place, so no reader sees half of it.

CSV dialect (:class:`CsvStyle`): ``excel``, the default, is what Excel on a Windows with a Swiss (German,
French, Italian) locale opens in columns with its umlauts right: UTF-8 with a byte-order mark, ``;`` between
cells; ``rfc4180`` is UTF-8 without a byte-order mark and ``,`` between cells, for programs. Both end lines
with CRLF and quote a cell only when it needs it.

CSV injection: a spreadsheet opening a CSV file runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a
formula (and a leading tab or carriage return hides such a start). With the guard (:attr:`CsvStyle.guard`)
every such text cell of every column is written with a leading ``'`` (the OWASP advice), whoever wrote the
text: the customer, the service or we, a service's code (a ShortReport ``--11…``) too: a spreadsheet computes
``-1-1``. A program that reads the codes back takes the file written without the guard.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from fileio.files import atomic_path
from fileio.formulas import FORMULA_GUARD, FORMULA_STARTS, starts_like_formula
from fileio.lazy import lazy_module
from fileio.workbooks import write_xlsx as write_xlsx

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    # Imported on first use: modules that import a writer for later (the CLI's checks) pay nothing.
    np = lazy_module("numpy")
    pd = lazy_module("pandas")


CsvDialect = Literal["excel", "rfc4180"]


@dataclass(frozen=True)
class CsvStyle:
    """How the CSV files for people are written: the formula guard and the dialect, always together.

    Attributes:
        guard: neutralise text that a spreadsheet would run as a formula (see :func:`neutralise_formulas`),
            in the column names and in every column.
        dialect: ``excel`` (UTF-8 with a byte-order mark, ``;``-separated: what Excel with a Swiss locale
            opens right) or ``rfc4180`` (UTF-8 without a byte-order mark, ``,``-separated).
    """

    guard: bool = True
    dialect: CsvDialect = "excel"

    @property
    def separator(self) -> str:
        return ";" if self.dialect == "excel" else ","

    @property
    def encoding(self) -> str:
        """The codec: ``utf-8-sig`` writes the byte-order mark Excel needs to read UTF-8 as UTF-8."""
        return "utf-8-sig" if self.dialect == "excel" else "utf-8"


DEFAULT_CSV_STYLE = CsvStyle()
"""The settings' defaults: guarded, for Excel."""
POST = " (Post)"
"""How a result names the column of the service's value after the customer's column (``Ort (Post)``), in
every API's results."""


def write_csv(frame: pd.DataFrame, path: Path, *, style: CsvStyle) -> Path:
    """Write a frame as a CSV file for people (header, no index, CRLF line ends) in ``style``, atomically.

    Args:
        frame: what to write.
        path: the file.
        style: the dialect (``excel``: UTF-8 with BOM, ``;``; ``rfc4180``: UTF-8, ``,``) and whether the
            formula guard applies (see :func:`neutralise_formulas`) to the column names and every column.
    """
    header: list[str] | bool = True
    if style.guard:
        frame = neutralise_formulas(frame)
        # A customer's column name is a cell too.
        header = [_guard_text(str(column)) for column in frame.columns]
    with atomic_path(path) as temporary:
        frame.to_csv(
            temporary,
            index=False,
            encoding=style.encoding,
            sep=style.separator,
            lineterminator="\r\n",
            header=header,
        )
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
    return FORMULA_GUARD + text if starts_like_formula(text) else text


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


def markdown_bars(labels: Sequence[str], counts: Sequence[int], heading: str, *, width: int = 30) -> str:
    """A markdown table of counts with a bar each, ``█`` characters in proportion to the largest count
    (``width`` of them for it; a count above zero gets one at least), and each count's share of the total."""
    largest, total = max(counts, default=0), sum(counts)
    lines = [f"| {_markdown_cell(heading)} | Rows | Share | |", "| --- | ---: | ---: | --- |"]
    for label, count in zip(labels, counts, strict=True):
        bar = "█" * (max(1, round(width * count / largest)) if count > 0 else 0)
        share = f"{100 * count / total:.1f} %" if total else "-"
        lines.append(f"| {_markdown_cell(label)} | {count} | {share} | {bar} |")
    return "\n".join(lines)
