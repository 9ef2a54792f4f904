"""Native Excel charts of a worksheet's own table, as both workbook writers draw them: rustpy-xlsxwriter
(a chart per sheet, its series from that sheet's columns) and xlsxwriter, which writes the workbooks the fast
writer cannot and is the reference it is tested against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

ChartKind = Literal["bar", "column", "pie"]
CHART_WIDTH, CHART_HEIGHT = 640, 320  # pixels
_ROWS_PER_CHART = CHART_HEIGHT // 20 + 2  # a chart's height in default rows (20 pixels), and a gap


@dataclass(frozen=True)
class Chart:
    """A native chart of the worksheet it is drawn on: one category per row of the table, one series per
    value column, every row drawn (a row of zero is a category of zero, never left out).

    Attributes:
        title: shown above the chart.
        categories: the column whose cells label the categories.
        values: the columns drawn as series (their header cells name them).
        kind: ``bar`` (horizontal bars, for long labels), ``column`` or ``pie``.
    """

    title: str
    categories: str
    values: tuple[str, ...]
    kind: ChartKind = "bar"

    def placement(self, number: int, columns: int) -> tuple[int, int]:
        """The (row, column) of the top left corner of the sheet's ``number``-th chart (from 0): beside a
        table of ``columns`` columns, one column clear of it, the charts one below the other."""
        return number * _ROWS_PER_CHART, columns + 1


def rust_charts(charts: Sequence[Chart], columns: Sequence[str]) -> list[dict[str, Any]]:
    """The charts as rustpy-xlsxwriter's ``charts=`` takes them for a sheet with these columns.

    Raises:
        ValueError: a chart names a column the sheet does not have (rustpy-xlsxwriter would only warn
            and leave the chart out).
    """
    for chart in charts:
        _check_columns(chart, columns)
    return [
        {
            "type": chart.kind,
            "series": list(chart.values),
            "categories": chart.categories,
            "title": chart.title,
            "legend": len(chart.values) > 1 or chart.kind == "pie",
            "row": row,
            "col": col,
            "width": CHART_WIDTH,
            "height": CHART_HEIGHT,
        }
        for number, chart in enumerate(charts)
        for row, col in [chart.placement(number, len(columns))]
    ]


def insert_xlsxwriter_charts(
    workbook: Any, worksheet: Any, charts: Sequence[Chart], columns: Sequence[str], rows: int
) -> None:
    """Draw ``charts`` on an xlsxwriter worksheet holding a table of ``columns`` and ``rows`` data rows
    below its header, as :func:`rust_charts` has rustpy-xlsxwriter draw them."""
    name = worksheet.get_name()
    for number, chart in enumerate(charts):
        _check_columns(chart, columns)
        drawn = workbook.add_chart({"type": chart.kind})
        category = columns.index(chart.categories)
        for value in chart.values:
            position = columns.index(value)
            drawn.add_series(
                {
                    "name": [name, 0, position],
                    "categories": [name, 1, category, max(rows, 1), category],
                    "values": [name, 1, position, max(rows, 1), position],
                }
            )
        drawn.set_title({"name": chart.title})
        if len(chart.values) == 1 and chart.kind != "pie":
            drawn.set_legend({"none": True})
        drawn.set_size({"width": CHART_WIDTH, "height": CHART_HEIGHT})
        row, col = chart.placement(number, len(columns))
        worksheet.insert_chart(row, col, drawn)


def charts_by_title(
    charts: Mapping[str, Sequence[Chart]] | None, titles: Mapping[str, str]
) -> dict[str, tuple[Chart, ...]]:
    """``charts`` (by the name a sheet was given) by the title it is written under (``titles``: name →
    title of its first worksheet).

    Raises:
        ValueError: charts for a sheet that is not written.
    """
    unknown = sorted(set(charts or {}) - set(titles))
    if unknown:
        raise ValueError(f"charts for sheets that are not written: {', '.join(unknown)}")
    return {titles[name]: tuple(drawn) for name, drawn in (charts or {}).items() if drawn}


def _check_columns(chart: Chart, columns: Sequence[str]) -> None:
    missing = [column for column in (chart.categories, *chart.values) if column not in columns]
    if missing:
        raise ValueError(f"chart {chart.title!r}: no column {', '.join(map(repr, missing))} in its sheet")
