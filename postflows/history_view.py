"""Rich rendering of one run of the history for the CLI: the full story of the run (the list of runs is
plain text, :mod:`postflows.run_table`).

Everything shown goes through the history's secret masking again, so a parameter stored before a key was
recognised as secret still never reaches the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from core.json_text import json_text
from core.redaction import json_safe
from postflows.run_table import duration, or_dash, when

if TYPE_CHECKING:
    # Imported where used: listing runs (postflows.run_list) needs neither SQLAlchemy nor the models.
    from history import Document, RemoteJob, Run, RunMessage, Step

STATE_STYLES = {
    "RUNNING": "yellow",
    "COMPLETED": "green",
    "FAILED": "red",
    "CANCELLED": "magenta",
    "PARKED": "cyan",
    "INTERRUPTED": "magenta",
    "CRASHED": "bold red",
}
LEVEL_STYLES = {"info": "blue", "warning": "yellow", "error": "red"}


def _state(state: str) -> Text:
    return Text(state, style=STATE_STYLES.get(state, ""))


def _json(value: Any) -> str:
    return json_text(json_safe(value, mask_secret_keys=True), sort_keys=True)


def _facts(title: str, values: dict[str, Any]) -> Panel:
    """A key/value grid; nested values are shown as compact JSON."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for key, value in json_safe(values, mask_secret_keys=True).items():
        grid.add_row(
            escape(key), escape(value if isinstance(value, str) else json_text(value, ascii_only=True))
        )
    if not values:
        grid.add_row("-", "")
    return Panel(grid, title=title, title_align="left", expand=False)


def _size(size: int) -> str:
    amount = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if amount < 1024 or unit == "GiB":
            return f"{int(amount)} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{size} B"


def _header(run: Run) -> Panel:
    lines = Text()
    lines.append(f"Run {run.id}  ", style="bold")
    lines.append(run.flow)
    lines.append("  ")
    lines.append_text(_state(run.state))
    lines.append(f"\nstarted {when(run.started_at)}   finished {when(run.finished_at)}")
    lines.append(f"   duration {duration(run.duration)}")
    lines.append(f"\nkey {or_dash(run.idempotency_key)}   flow run {or_dash(run.flow_run_id)}")
    if run.error:
        lines.append("\nerror: ", style="bold red")
        lines.append(run.error)
    return Panel(lines, expand=False)


def _steps_table(steps: Sequence[Step]) -> Table:
    table = Table(title="Steps", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("step")
    table.add_column("attempt", justify="right")
    table.add_column("outcome")
    table.add_column("started (UTC)")
    table.add_column("duration", justify="right")
    table.add_column("detail", overflow="fold")
    for number, step in enumerate(steps, start=1):
        table.add_row(
            str(number),
            escape(step.name),
            str(step.attempt),
            escape(step.outcome),
            when(step.started_at),
            duration(step.duration_s),
            escape(step.detail or ""),
        )
    return table


def _job_block(job: RemoteJob) -> RenderableType:
    table = Table(
        title=f"{job.api} {job.kind} {job.remote_id}", title_justify="left", title_style="bold", box=None
    )
    table.add_column("recorded (UTC)")
    table.add_column("state")
    table.add_column("service status")
    table.add_column("status date")
    table.add_column("progress", justify="right")
    table.add_column("detail", overflow="fold")
    for event in job.events:
        table.add_row(
            when(event.recorded_at),
            escape(or_dash(event.status)),
            escape(or_dash(event.remote_status)),
            when(event.status_date),
            "-" if event.progress is None else f"{event.progress:g}%",
            escape(event.detail or ""),
        )
    facts = [
        f"state {or_dash(job.status)}",
        f"service status {or_dash(job.remote_status)}",
        f"progress {'-' if job.progress is None else f'{job.progress:g}%'}",
        f"key {or_dash(job.idempotency_key)}",
        f"created {when(job.created_at)}",
        f"finished {when(job.finished_at)}",
    ]
    if job.deleted_at is not None:
        facts.append(f"deleted {when(job.deleted_at)}")
    parts: list[RenderableType] = [table, Text("   ".join(facts), style="dim")]
    if job.data:
        parts.append(Text(f"data {_json(job.data)}", style="dim"))
    return Group(*parts)


def _documents_table(documents: Sequence[Document]) -> Table:
    table = Table(title="Documents", title_justify="left")
    table.add_column("kind")
    table.add_column("path", overflow="fold")
    table.add_column("size", justify="right")
    table.add_column("sha256")
    for document in documents:
        table.add_row(
            escape(document.kind), escape(document.path), _size(document.size), document.sha256[:12]
        )
    return table


def _messages_table(messages: Sequence[RunMessage]) -> Table:
    table = Table(title="Messages", title_justify="left")
    table.add_column("level")
    table.add_column("code")
    table.add_column("text", overflow="fold")
    for message in messages:
        table.add_row(
            Text(message.level, style=LEVEL_STYLES.get(message.level, "")),
            escape(or_dash(message.code)),
            escape(message.text),
        )
    return table


def run_detail(run: Run) -> Group:
    """Everything recorded about one run, for ``rich`` to print.

    Args:
        run: A run from ``history.get_run`` (relationships loaded).

    Returns:
        Header, parameters, summary, steps, remote jobs with their status events, documents and messages;
        empty sections are left out.
    """
    parts: list[RenderableType] = [_header(run)]
    parts.append(_facts("parameters", run.parameters or {}))
    if run.summary:
        parts.append(_facts("summary", run.summary))
    if run.steps:
        parts.append(_steps_table(run.steps))
    if run.remote_jobs:
        parts.append(Text("Remote jobs", style="italic"))
        parts.extend(_job_block(job) for job in run.remote_jobs)
    if run.documents:
        parts.append(_documents_table(run.documents))
    if run.messages:
        parts.append(_messages_table(run.messages))
    return Group(*parts)
