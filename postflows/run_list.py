"""The newest runs of the history for ``postflows history``, one page at a time, in about the time of
``postflows --help``.

The default SQLite history is read with the standard library's ``sqlite3`` when its schema is at the head
of the migration scripts (:func:`schema_head`, read from the scripts' own ``revision`` lines): no
SQLAlchemy, Alembic or model is imported for a listing. Any other database (a PostgreSQL URL, a SQLite URL
with options, an older schema, no file yet) goes through the history store, which migrates first, as every
other command does. Both ways run the same query: newest first, at most ``limit`` runs, older than
``before`` when given (the next page), served by the primary key or by the index on (flow, id); a test
holds its columns to the ``runs`` table of the history's models.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

SQLITE_BUSY_TIMEOUT_S = 60.0
_SQLITE_FILE_URL = re.compile(r"^sqlite(?:\+pysqlite)?:///(?P<path>[^?]+)$")
COLUMNS = ("id", "flow", "state", "started_at", "finished_at", "idempotency_key", "flow_run_id")
# A migration script's identity, as Alembic's script template writes it.
_REVISION = re.compile(r"^(?P<kind>revision|down_revision)\s*(?::[^=]*)?=\s*(?P<value>.+?)\s*$", re.MULTILINE)

logger = logging.getLogger("postflows.history")


@dataclass(frozen=True)
class RunSummary:
    """What the list shows of one run (the fields of :class:`history.Run` it needs)."""

    id: int
    flow: str
    state: str
    started_at: datetime
    finished_at: datetime | None
    idempotency_key: str | None
    flow_run_id: str | None

    @property
    def duration(self) -> timedelta | None:
        """Wall time from start to finish, or ``None`` while the run is still going."""
        if self.finished_at is None:
            return None
        return self.finished_at - self.started_at


@dataclass(frozen=True)
class RunPage:
    """One page of runs, newest first; ``more`` when older runs (matching the filter) follow."""

    runs: list[RunSummary]
    more: bool

    @property
    def next_before(self) -> int | None:
        """The ``before`` that asks for the next page, or None on the last page."""
        return self.runs[-1].id if self.more and self.runs else None


def list_runs(url: str, *, limit: int = 20, flow: str | None = None, before: int | None = None) -> RunPage:
    """Up to ``limit`` runs recorded in the history at ``url``, newest first, optionally of one ``flow`` and
    older than run ``before``. The query's time is logged at debug level (logger ``postflows.history``).
    """
    started = time.perf_counter()
    # One run more than asked for tells whether another page follows.
    runs = _sqlite_runs(url, limit=limit + 1, flow=flow, before=before)
    how = "sqlite3"
    if runs is None:
        runs = _store_runs(url, limit=limit + 1, flow=flow, before=before)
        how = "history store"
    logger.debug("listed %d runs via %s in %.1f ms", len(runs), how, (time.perf_counter() - started) * 1000)
    return RunPage(runs[:limit], more=len(runs) > limit)


@cache
def schema_head(versions: Path | None = None) -> str | None:
    """The head revision of the run history's migrations (``history/migrations/versions``): the one no
    other script names as its ``down_revision``. Read from the scripts' text, so neither Alembic nor the
    history package is imported; None when the scripts have no single head (then the store decides)."""
    if versions is None:
        spec = importlib.util.find_spec("history")  # finds the package without importing it
        if spec is None or spec.origin is None:
            return None
        versions = Path(spec.origin).parent / "migrations" / "versions"
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in versions.glob("*.py"):
        for match in _REVISION.finditer(script.read_text(encoding="utf-8")):
            value = match["value"].strip("\"'")
            if value == "None":
                continue
            (revisions if match["kind"] == "revision" else parents).add(value)
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def sqlite_file(url: str) -> Path | None:
    """The file of a plain SQLite URL (``sqlite:///path``, no options), else None."""
    match = _SQLITE_FILE_URL.match(url)
    return Path(match["path"]) if match else None


def query(flow: str | None, before: int | None) -> tuple[str, list[object]]:
    """The listing's SQL (``?`` placeholders, the limit last) and its arguments but the limit."""
    where: list[str] = []
    arguments: list[object] = []
    if flow is not None:
        where.append("flow = ?")
        arguments.append(flow)
    if before is not None:
        where.append("id < ?")
        arguments.append(before)
    condition = f" WHERE {' AND '.join(where)}" if where else ""
    return f"SELECT {', '.join(COLUMNS)} FROM runs{condition} ORDER BY id DESC LIMIT ?", arguments


def _sqlite_runs(url: str, *, limit: int, flow: str | None, before: int | None) -> list[RunSummary] | None:
    """The runs read with ``sqlite3``; None when this history is not a current SQLite file."""
    file = sqlite_file(url)
    if file is None or not file.is_file():
        return None
    connection = sqlite3.connect(file, timeout=SQLITE_BUSY_TIMEOUT_S)
    try:
        try:
            version = connection.execute("SELECT version_num FROM alembic_version").fetchall()
        except sqlite3.OperationalError:
            return None  # not migrated yet
        head = schema_head()
        if head is None or version != [(head,)]:
            return None
        sql, arguments = query(flow, before)
        rows = connection.execute(sql, [*arguments, limit]).fetchall()
    finally:
        connection.close()
    return [_summary(row) for row in rows]


def _summary(row: Sequence[object]) -> RunSummary:
    run_id, flow, state, started_at, finished_at, key, flow_run_id = row
    assert isinstance(run_id, int) and isinstance(flow, str) and isinstance(state, str)
    started = _utc(started_at)
    assert started is not None
    return RunSummary(run_id, flow, state, started, _utc(finished_at), _text(key), _text(flow_run_id))


def _utc(value: object) -> datetime | None:
    """A timestamp as SQLAlchemy keeps it in SQLite (UTC, ``YYYY-MM-DD HH:MM:SS.ffffff``), made aware."""
    if value is None:
        return None
    moment = datetime.fromisoformat(str(value))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _store_runs(url: str, *, limit: int, flow: str | None, before: int | None) -> list[RunSummary]:
    import history

    factory = history.session_factory(url)
    with factory() as session:
        runs = history.list_runs(session, limit=limit, flow=flow, before=before)
    return [
        RunSummary(
            run.id,
            run.flow,
            run.state,
            run.started_at,
            run.finished_at,
            run.idempotency_key,
            run.flow_run_id,
        )
        for run in runs
    ]
