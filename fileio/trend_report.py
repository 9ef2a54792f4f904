"""A report of tables by month, written three ways: ``report.xlsx`` (a worksheet per table with a native
Excel chart of it, by rustpy-xlsxwriter), ``report.png`` (the same charts drawn by matplotlib,
:mod:`fileio.trend_pictures`) and ``report.md`` (the tables and notes, for a terminal or a text viewer).

Each table's first column holds the month (``YYYY-MM``), one row per month; the charts plot the columns
their :class:`TrendChart` names against it. A missing value (a share of a month without rows) is an empty
cell, a gap in a line and an empty cell of the Markdown table, never a zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fileio.files import atomic_path, write_text
from fileio.lazy import lazy_module
from fileio.reports import markdown_table
from fileio.worksheet_parts import HEADER_FILL, sanitize_sheet_name

if TYPE_CHECKING:
    import pandas as pd
    import rustpy_xlsxwriter
else:
    pd = lazy_module("pandas")
    rustpy_xlsxwriter = lazy_module("rustpy_xlsxwriter")

WORKBOOK = "report.xlsx"
PICTURE = "report.png"
MARKDOWN = "report.md"
ABOUT_SHEET = "About"
_CHART_WIDTH, _CHART_HEIGHT = 860, 400  # pixels
_MIN_WIDTH, _MAX_WIDTH = 9, 40


@dataclass(frozen=True)
class TrendChart:
    """How a table is drawn: a line or column chart of some of its columns against its months."""

    kind: Literal["line", "column"]
    title: str
    series: tuple[str, ...]
    y_axis: str


@dataclass(frozen=True)
class TrendTable:
    """One table of the report: a worksheet, a chart and a section of report.md.

    Attributes:
        title: the worksheet's name and the section's heading.
        frame: the rows, one per month; the first column is the month.
        chart: what is drawn of it.
        notes: lines printed under the table in report.md (and on the About sheet).
    """

    title: str
    frame: pd.DataFrame
    chart: TrendChart
    notes: tuple[str, ...] = ()

    @property
    def month_column(self) -> str:
        return str(self.frame.columns[0])


@dataclass(frozen=True)
class TrendReport:
    """The report's files."""

    workbook: Path
    picture: Path
    markdown: Path
    sheets: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[Path]:
        return [self.workbook, self.picture, self.markdown]


def write_trend_report(
    out_dir: Path, title: str, tables: Sequence[TrendTable], facts: Sequence[tuple[str, str]]
) -> TrendReport:
    """Write report.xlsx, report.png and report.md of ``tables`` into ``out_dir`` (each atomically).

    Args:
        out_dir: the folder (created when missing).
        title: the report's heading (report.md, the picture).
        tables: the tables, in order: one worksheet each, with its chart below the rows.
        facts: what the report covers and how to read it (label, text): a list in report.md and the
            worksheet "About", last, with the tables' notes.
    """
    from fileio.trend_pictures import draw_trends

    out_dir = Path(out_dir)
    workbook, sheets = _write_workbook(out_dir / WORKBOOK, tables, facts)
    picture = draw_trends(out_dir / PICTURE, title, tables)
    markdown = write_text(out_dir / MARKDOWN, trend_markdown(title, tables, facts))
    return TrendReport(workbook, picture, markdown, sheets)


def _write_workbook(
    path: Path, tables: Sequence[TrendTable], facts: Sequence[tuple[str, str]]
) -> tuple[Path, list[str]]:
    used: set[str] = set()
    sheets: list[tuple[str, Any]] = []  # (name, frame), as rustpy-xlsxwriter takes them
    charts: dict[str, list[dict[str, Any]]] = {}
    for table in tables:
        name = sanitize_sheet_name(table.title, used)
        used.add(name.casefold())
        sheets.append((name, table.frame))
        charts[name] = [_chart(table)]
    about = sanitize_sheet_name(ABOUT_SHEET, used)
    about_rows = [*facts, *((table.title, note) for table in tables for note in table.notes)]
    sheets.append((about, pd.DataFrame(about_rows, columns=["Item", "Value"], dtype=object)))
    header = rustpy_xlsxwriter.Format().set_bold().set_background_color(HEADER_FILL).set_border_bottom("thin")
    with atomic_path(path) as temporary:
        rustpy_xlsxwriter.write_worksheets(
            sheets,
            temporary,
            freeze_panes={"general": {"row": 1, "col": 0}},
            header_format={name: header for name, _ in sheets},
            column_widths={name: _widths(frame) for name, frame in sheets},
            charts=charts,
        )
    return path, [name for name, _ in sheets]


def _chart(table: TrendTable) -> dict[str, Any]:
    """The table's chart as rustpy-xlsxwriter takes it: its series by column name (each series named by
    its header cell), the months as categories, placed under the rows."""
    chart = table.chart
    return {
        "type": chart.kind,
        "series": list(chart.series),
        "categories": table.month_column,
        "title": chart.title,
        "x_axis": table.month_column,
        "y_axis": chart.y_axis,
        "legend": True,
        "row": len(table.frame) + 2,
        "col": 0,
        "width": _CHART_WIDTH,
        "height": _CHART_HEIGHT,
    }


def _widths(frame: pd.DataFrame) -> list[float]:
    widths = []
    for position, column in enumerate(frame.columns):
        values = frame.iloc[:, position].dropna().astype(str)
        longest = max([len(str(column)), *(len(value) for value in values)])
        widths.append(float(min(max(longest + 2, _MIN_WIDTH), _MAX_WIDTH)))
    return widths


def trend_markdown(title: str, tables: Sequence[TrendTable], facts: Sequence[tuple[str, str]]) -> str:
    """report.md: the heading, the facts as a list, then each table (every month) with its notes."""
    lines = [f"# {title}", ""]
    lines += [f"- {label}: {text}" for label, text in facts]
    for table in tables:
        lines += ["", f"## {table.title}", "", markdown_table(table.frame, max_rows=len(table.frame) or 1)]
        for note in table.notes:
            lines += ["", f"_{note}_"]
    return "\n".join(lines) + "\n"
