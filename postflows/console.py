"""Terminal output for the CLI: a rich progress bar fed by :mod:`tasks.progress`, and one-line errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from tasks.progress import listening

console = Console(stderr=True)


@contextmanager
def progress_bars(enabled: bool = True) -> Iterator[None]:
    """Show a progress bar per tracked piece of work while the block runs."""
    if not enabled:
        yield
        return
    bars = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    tasks: dict[str, TaskID] = {}

    def update(label: str, percent: float, detail: str) -> None:
        if label not in tasks:
            tasks[label] = bars.add_task(label, total=100, detail=detail)
        bars.update(tasks[label], completed=percent, detail=detail)

    with bars, listening(update):
        yield
