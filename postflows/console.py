"""Terminal output for the CLI: a rich progress bar fed by :mod:`tasks.progress`, and one-line errors."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import TaskID

console = Console(stderr=True)

# Tables and panels size themselves to their content up to this width when stdout is not a terminal, so
# piped output and captured output are never cut to a guessed width.
PIPED_WIDTH = 1000


def output_console() -> Console:
    """A console for results on stdout: the terminal's width on a terminal, wide enough for any row when
    piped (nothing is cut or wrapped by a guessed width)."""
    stream = sys.stdout
    width = None if stream.isatty() else PIPED_WIDTH
    return Console(file=stream, width=width)


@contextmanager
def progress_bars(enabled: bool = True) -> Iterator[None]:
    """Show a progress bar per tracked piece of work while the block runs."""
    if not enabled:
        yield
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from tasks.progress import listening

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
