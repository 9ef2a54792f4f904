"""Where a sandbox keeps what it remembers: in memory (the default), or in a SQLite file in a state directory
that every process naming the same directory shares, so orders and jobs outlive the process that made them.

Each store (orders, purchases, files and batch jobs, request counts, fault counters) keeps its records in a
named :class:`Table` and draws ids from named counters of one :class:`SandboxState`. In memory a table is an
ordered dict; in a state directory it is rows of ``sandbox-state.db`` holding pickled values. A request runs
under one transaction (:meth:`SandboxState.request`: ``BEGIN IMMEDIATE`` before the app sees the request,
commit once it has answered), so processes sharing the directory never hand out the same id nor lose each
other's changes; a call outside a request is its own transaction (:meth:`SandboxState.atomic`). The SQLite
state, and :func:`~sandbox.state_file.open_state`, which picks one, are in :mod:`sandbox.state_file`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from typing import Any, Generic, TypeVar

Value = TypeVar("Value")
Key = str | int


class StateError(RuntimeError):
    """A record of the state file cannot be read (written by another version of the sandbox)."""


class Table(ABC, Generic[Value]):
    """Records of one store by key, in insertion order (replacing a record keeps its place)."""

    @abstractmethod
    def get(self, key: Key) -> Value | None: ...

    @abstractmethod
    def put(self, key: Key, value: Value) -> None: ...

    @abstractmethod
    def pop(self, key: Key) -> Value | None:
        """Remove and return the record, or None when there is none."""

    @abstractmethod
    def items(self) -> list[tuple[str, Value]]:
        """Every (key, record), oldest first."""

    @abstractmethod
    def trim(self, maximum: int) -> list[str]:
        """Drop the oldest records beyond ``maximum``; the keys dropped."""

    @abstractmethod
    def clear(self) -> None: ...

    def values(self) -> list[Value]:
        return [value for _, value in self.items()]

    def keys(self) -> list[str]:
        return [key for key, _ in self.items()]


class SandboxState(ABC):
    """The tables and id counters of one sandbox app, and the transactions around its requests."""

    # True when other processes may read and change the same state.
    shared = False

    @abstractmethod
    def table(self, name: str) -> Table[Any]:
        """The table ``name`` (created empty on first use)."""

    @abstractmethod
    def next_id(self, name: str, first: int) -> int:
        """The next value of counter ``name``: ``first``, then one more each call; never handed out twice."""

    @abstractmethod
    def atomic(self) -> AbstractContextManager[None]:
        """Run the block as one transaction, or inside the request's transaction when one is open."""

    @abstractmethod
    def request(self) -> AbstractAsyncContextManager[None]:
        """The transaction of one request (entered from async code without blocking the event loop)."""


class _MemoryTable(Table[Value]):
    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._rows: OrderedDict[str, Value] = OrderedDict()

    def get(self, key: Key) -> Value | None:
        with self._lock:
            return self._rows.get(str(key))

    def put(self, key: Key, value: Value) -> None:
        with self._lock:
            self._rows[str(key)] = value

    def pop(self, key: Key) -> Value | None:
        with self._lock:
            return self._rows.pop(str(key), None)

    def items(self) -> list[tuple[str, Value]]:
        with self._lock:
            return list(self._rows.items())

    def trim(self, maximum: int) -> list[str]:
        dropped = []
        with self._lock:
            while len(self._rows) > maximum:
                dropped.append(self._rows.popitem(last=False)[0])
        return dropped

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()


class MemoryState(SandboxState):
    """State that lives as long as the app: plain objects, one re-entrant lock, no request transaction."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._tables: dict[str, _MemoryTable[Any]] = {}
        self._counters: dict[str, int] = {}

    def table(self, name: str) -> Table[Any]:
        with self._lock:
            return self._tables.setdefault(name, _MemoryTable(self._lock))

    def next_id(self, name: str, first: int) -> int:
        with self._lock:
            value = self._counters.get(name, first - 1) + 1
            self._counters[name] = value
            return value

    @contextmanager
    def atomic(self) -> Iterator[None]:
        with self._lock:
            yield

    def clear(self) -> None:
        """Forget every record and id counter: the app starts over as if new (its tables stay the same
        objects, so the stores holding them see the change)."""
        with self._lock:
            for table in self._tables.values():
                table.clear()
            self._counters.clear()

    @asynccontextmanager
    async def request(self) -> AsyncIterator[None]:
        # Stores lock around each change; holding a thread lock across the request's awaits could deadlock.
        yield
