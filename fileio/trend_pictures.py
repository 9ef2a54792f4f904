"""report.png: the charts of a trend report (:mod:`fileio.trend_report`) drawn by matplotlib, one panel per
table, for a reader without Excel (a mail, a wiki page, the Prefect UI's artifact link).

Drawn with the Agg canvas on a figure of its own: no display, no pyplot state shared with anything else in
the process (a flow run's worker draws as a terminal does).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.files import atomic_path

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from fileio.trend_report import TrendTable

DPI = 100
PANEL_WIDTH_IN, PANEL_HEIGHT_IN = 11.0, 3.6
_MAX_LABELS = 24  # month labels on an axis; a longer report shows every n-th


def draw_trends(path: Path, title: str, tables: Sequence[TrendTable]) -> Path:
    """Draw each table's chart as a panel of one PNG, top to bottom, and write it to ``path`` atomically."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = max(1, len(tables))
    figure = Figure(figsize=(PANEL_WIDTH_IN, PANEL_HEIGHT_IN * panels + 0.6), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    figure.suptitle(title, fontsize=14)
    axes = figure.subplots(panels, 1, squeeze=False)[:, 0]
    for axis, table in zip(axes, tables, strict=False):
        _panel(axis, table)
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=DPI)
    return path


def _panel(axis: Axes, table: TrendTable) -> None:
    from matplotlib.ticker import MaxNLocator

    chart = table.chart
    frame = table.frame
    months = [str(month) for month in frame[table.month_column]]
    positions = list(range(len(months)))
    count = max(1, len(chart.series))
    width = 0.8 / count
    for number, column in enumerate(chart.series):
        values = [float(value) for value in frame[column].astype("float64")]
        if chart.kind == "line":
            axis.plot(positions, values, marker="o", markersize=3, label=column)
        else:
            offset = (number - (count - 1) / 2) * width
            axis.bar([position + offset for position in positions], values, width=width, label=column)
    step = max(1, -(-len(months) // _MAX_LABELS))
    axis.set_xticks(positions[::step], months[::step], rotation=45, ha="right", fontsize=8)
    axis.set_xlim(-0.6, max(len(months) - 0.4, 0.6))
    axis.set_title(chart.title, fontsize=11)
    axis.set_ylabel(chart.y_axis)
    axis.set_ylim(bottom=0)
    axis.grid(axis="y", alpha=0.3)
    if chart.kind == "column":  # counts: whole numbers on the axis
        axis.yaxis.set_major_locator(MaxNLocator(integer=True))
    if chart.series:
        axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if not months or frame[list(chart.series)].fillna(0).eq(0).all().all():
        axis.text(0.5, 0.5, "nothing recorded in these months", transform=axis.transAxes, ha="center")
