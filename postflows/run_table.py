"""The list of runs ``postflows history`` prints: a plain text table, aligned, without ``rich``.

Listing runs should answer in about the time of ``postflows --help``; importing and laying out a ``rich``
table cost more than the query. The detailed view of one run stays on ``rich``
(:mod:`postflows.history_view`), which shares the value formats defined here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

# A column is never wider than this; a longer value is cut with an ellipsis (the detail view shows it all).
MAX_WIDTH = 48
ELLIPSIS = "…"
GAP = "  "
RUN_HEADERS = ("id", "flow", "state", "started (UTC)", "duration", "key", "flow run")
RUN_RIGHT_ALIGNED = frozenset({"id", "duration"})


def when(moment: datetime | None) -> str:
    """A moment to the second, or ``-``."""
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment is not None else "-"


def duration(span: timedelta | float | None) -> str:
    """A duration in seconds below a minute (``4.2s``), else ``1m30s`` or ``2h05m00s``; ``-`` for none."""
    if span is None:
        return "-"
    seconds = span.total_seconds() if isinstance(span, timedelta) else span
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{rest:02d}s" if hours else f"{minutes}m{rest:02d}s"


def or_dash(value: object) -> str:
    """The value as text, ``-`` for ``None``."""
    return "-" if value is None else str(value)


def _cell(value: str, max_width: int) -> str:
    """One line of at most ``max_width`` characters: control characters become spaces, a longer value
    ends in an ellipsis."""
    if not value.isprintable():
        value = "".join(char if char.isprintable() else " " for char in value)
    if len(value) > max_width:
        value = value[: max_width - len(ELLIPSIS)] + ELLIPSIS
    return value


def text_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    right_aligned: frozenset[str] = frozenset(),
    max_width: int = MAX_WIDTH,
) -> str:
    """A plain text table: the header, a rule, one line per row, columns two spaces apart.

    Args:
        headers: The column names.
        rows: One value per column for each row.
        right_aligned: The headers of the columns aligned to the right (numbers, durations).
        max_width: The widest a column gets; longer values are cut with an ellipsis.

    Returns:
        The lines joined by newlines, without trailing spaces; each column as wide as its widest value or
        header.
    """
    cells = [[_cell(value, max_width) for value in row] for row in rows]
    widths = [len(header) for header in headers]
    for row in cells:
        widths = [max(width, len(value)) for width, value in zip(widths, row, strict=True)]
    rights = [header in right_aligned for header in headers]

    def line(values: Sequence[str]) -> str:
        padded = (
            value.rjust(width) if right else value.ljust(width)
            for value, width, right in zip(values, widths, rights, strict=True)
        )
        return GAP.join(padded).rstrip()

    rule = GAP.join("-" * width for width in widths)
    return "\n".join([line(list(headers)), rule, *(line(row) for row in cells)])


class RunRow(Protocol):
    """What the list of runs shows of a run: a :class:`history.Run` or a
    :class:`postflows.run_list.RunSummary`."""

    @property
    def id(self) -> int: ...
    @property
    def flow(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def duration(self) -> timedelta | None: ...
    @property
    def idempotency_key(self) -> str | None: ...
    @property
    def flow_run_id(self) -> str | None: ...


def runs_text(runs: Sequence[RunRow]) -> str:
    """The runs as a text table: id, flow, state, start, duration, idempotency key and Prefect flow-run id."""
    rows = [
        (
            str(run.id),
            run.flow,
            run.state,
            when(run.started_at),
            duration(run.duration),
            or_dash(run.idempotency_key),
            or_dash(run.flow_run_id),
        )
        for run in runs
    ]
    return text_table(RUN_HEADERS, rows, right_aligned=RUN_RIGHT_ALIGNED)
