"""The sandbox state in a state directory: rows of ``sandbox-state.db`` holding pickled values, shared by
every process that names the same directory (:class:`SqliteState`); :func:`open_state`, which picks it or
the state in memory; and the middleware that runs each request in one transaction.

A state directory made here is 0700 and its database 0600 (the records hold the names and addresses sent).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, cast

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

from sandbox.state import Key, MemoryState, SandboxState, StateError, Table, Value

STATE_FILE = "sandbox-state.db"
# Bumped whenever a stored record class changes shape: a state file of another format is started afresh.
STATE_FORMAT = "3"
BUSY_TIMEOUT_S = 60.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS records ("
    " store TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (store, key))",
    "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
)


# The SqliteState whose transaction the current request (or atomic block) runs in.
_ACTIVE: ContextVar[SqliteState | None] = ContextVar("postflows_sandbox_state", default=None)


class _Hold:
    """Whether this caller owns the connection's open transaction (so it, and only it, ends it)."""

    open = False


class SqliteState(SandboxState):
    """State in ``<directory>/sandbox-state.db``, shared with every process that opens the same directory.

    One connection per instance, used by one transaction at a time (a thread lock); processes take turns by
    SQLite's write lock. A transaction that cannot start yet is tried again after a short sleep — never
    by blocking, since the request holding the lock may be waiting on the same event loop or for a worker
    thread — for up to :data:`BUSY_TIMEOUT_S`.
    """

    shared = True

    def __init__(self, directory: Path) -> None:
        if not directory.exists():
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(directory, 0o700)
        self.path = directory / STATE_FILE
        # Made its owner's before SQLite opens it; the WAL files take its permissions.
        with contextlib.suppress(FileExistsError):
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        self._lock = threading.Lock()
        # No busy wait while starting a transaction (see _try_begin); inside one SQLite may wait.
        self._db = sqlite3.connect(self.path, timeout=0, isolation_level=None, check_same_thread=False)
        self._prepare()

    def _prepare(self) -> None:
        self._set_wal()
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self.atomic():
            for statement in _SCHEMA:
                self._db.execute(statement)
            row = self._db.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
            if row is None or row[0] != STATE_FORMAT:
                self._db.execute("DELETE FROM records")
                self._db.execute("DELETE FROM counters")
                self._db.execute(
                    "INSERT OR REPLACE INTO meta (name, value) VALUES ('format', ?)", (STATE_FORMAT,)
                )

    def _set_wal(self) -> None:
        # Switching the journal mode needs the file to itself for an instant: another process opening the
        # directory at the same moment makes it busy.
        for pause in self._pauses():
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if not _busy(exc):
                    raise
            time.sleep(pause)

    def table(self, name: str) -> Table[Any]:
        return _SqliteTable(self, name)

    def next_id(self, name: str, first: int) -> int:
        with self.atomic():
            row = self._db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
            value = first if row is None else int(row[0]) + 1
            self._db.execute(
                "INSERT INTO counters (name, value) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (name, value),
            )
            return value

    def execute(self, sql: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """Run ``sql`` in the open transaction (callers are inside :meth:`atomic`)."""
        return self._db.execute(sql, parameters)

    def _pauses(self) -> Iterator[float]:
        """How long to sleep between attempts (1 ms doubling to 20 ms); StateError after BUSY_TIMEOUT_S."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        pause = 0.001
        while time.monotonic() < deadline:
            yield pause
            pause = min(2 * pause, 0.02)
        raise StateError(f"{self.path} stayed locked for {BUSY_TIMEOUT_S:.0f} s")

    def _try_begin(self, hold: _Hold) -> bool:
        """Open the write transaction now if nobody holds it (marking ``hold``); False when busy."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            self._db.execute("PRAGMA busy_timeout = 0")
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        except sqlite3.OperationalError as exc:
            self._lock.release()
            if _busy(exc):
                return False
            raise
        except BaseException:
            self._lock.release()
            raise
        hold.open = True
        return True

    def _end(self, hold: _Hold, *, commit: bool) -> None:
        try:
            if commit:
                try:
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
            else:
                self._db.execute("ROLLBACK")
        finally:
            hold.open = False
            self._lock.release()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        if _ACTIVE.get() is self:
            yield
            return
        hold = _Hold()
        try:
            for pause in self._pauses():
                if self._try_begin(hold):
                    break
                time.sleep(pause)
            token = _ACTIVE.set(self)
            try:
                yield
            finally:
                _ACTIVE.reset(token)
            self._end(hold, commit=True)
        finally:
            if hold.open:
                self._end(hold, commit=False)

    @asynccontextmanager
    async def request(self) -> AsyncIterator[None]:
        if _ACTIVE.get() is self:
            yield
            return
        hold = _Hold()
        try:
            for pause in self._pauses():
                if self._try_begin(hold):
                    break
                await anyio.sleep(pause)
            token = _ACTIVE.set(self)
            try:
                yield
            finally:
                _ACTIVE.reset(token)
            self._end(hold, commit=True)
        finally:
            if hold.open:
                self._end(hold, commit=False)

    def close(self) -> None:
        """Close the connection (the app must not serve requests afterwards)."""
        with self._lock:
            self._db.close()


def _busy(exc: sqlite3.OperationalError) -> bool:
    return getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class _SqliteTable(Table[Value]):
    def __init__(self, state: SqliteState, name: str) -> None:
        self._state = state
        self._name = name

    def _load(self, key: str, blob: bytes) -> Value:
        try:
            return cast(Value, pickle.loads(blob))  # noqa: S301 - the sandbox's own file
        except Exception as exc:
            raise StateError(
                f"{self._state.path}: record {self._name}/{key} cannot be read ({exc}); "
                "delete the state directory to start afresh"
            ) from exc

    def get(self, key: Key) -> Value | None:
        with self._state.atomic():
            row = self._state.execute(
                "SELECT value FROM records WHERE store = ? AND key = ?", (self._name, str(key))
            ).fetchone()
        return None if row is None else self._load(str(key), row[0])

    def put(self, key: Key, value: Value) -> None:
        blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        with self._state.atomic():
            self._state.execute(
                "INSERT INTO records (store, key, value) VALUES (?, ?, ?)"
                " ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
                (self._name, str(key), blob),
            )

    def pop(self, key: Key) -> Value | None:
        with self._state.atomic():
            found = self.get(key)
            if found is not None:
                self._state.execute("DELETE FROM records WHERE store = ? AND key = ?", (self._name, str(key)))
        return found

    def items(self) -> list[tuple[str, Value]]:
        with self._state.atomic():
            rows = self._state.execute(
                "SELECT key, value FROM records WHERE store = ? ORDER BY rowid", (self._name,)
            ).fetchall()
        return [(key, self._load(key, blob)) for key, blob in rows]

    def trim(self, maximum: int) -> list[str]:
        with self._state.atomic():
            (count,) = self._state.execute(
                "SELECT count(*) FROM records WHERE store = ?", (self._name,)
            ).fetchone()
            if count <= maximum:
                return []
            rows = self._state.execute(
                "SELECT rowid, key FROM records WHERE store = ? ORDER BY rowid LIMIT ?",
                (self._name, count - maximum),
            ).fetchall()
            for rowid, _ in rows:
                self._state.execute("DELETE FROM records WHERE rowid = ?", (rowid,))
        return [key for _, key in rows]

    def clear(self) -> None:
        with self._state.atomic():
            self._state.execute("DELETE FROM records WHERE store = ?", (self._name,))


class TransactionMiddleware:
    """Runs every HTTP request to ``app`` in one transaction of ``state``."""

    def __init__(self, app: ASGIApp, state: SandboxState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        async with self.state.request():
            await self.app(scope, receive, send)


def open_state(directory: Path | None) -> SandboxState:
    """The state kept in ``directory``, or in memory when it is None."""
    return MemoryState() if directory is None else SqliteState(directory)
