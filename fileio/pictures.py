"""Pictures written beside a run's markdown summary: a horizontal bar chart as a PNG, drawn by matplotlib's
Agg backend on a figure of its own (no pyplot state: the tasks that draw run in worker threads), written
atomically. The number of bars is bounded, so a picture costs the same whatever the run's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fileio.files import atomic_path

MAX_BARS = 30
_BAR_COLOR = "#4472C4"
_DPI = 100


def write_bar_chart(
    path: Path, labels: Sequence[str], values: Sequence[float], *, title: str, value_label: str = ""
) -> Path:
    """Draw one horizontal bar per label, in the given order from the top, each with its value at its end,
    and write the PNG at ``path``.

    Raises:
        ValueError: more than :data:`MAX_BARS` bars, or labels and values of different lengths.
    """
    if len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} values")
    if len(labels) > MAX_BARS:
        raise ValueError(f"{len(labels)} bars; a picture holds at most {MAX_BARS}")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(8, 1.2 + 0.32 * max(len(labels), 1)), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    positions = list(range(len(labels)))
    bars = axes.barh(positions, values, color=_BAR_COLOR)
    axes.set_yticks(positions, labels=[str(label) for label in labels])
    axes.invert_yaxis()  # the first label on top, as the tables list them
    axes.bar_label(bars, labels=[f"{value:,g}" for value in values], padding=3, fontsize=8)
    axes.set_title(title)
    axes.set_xlabel(value_label)
    axes.margins(x=0.12)
    axes.spines[["top", "right"]].set_visible(False)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png")
    return path
