"""Recording the request log: one step per attempt of a remote call, written from a background thread so
the HTTP core's hook never waits on the disk. The history reads an attempt through :class:`RequestAttempt`,
so it needs nothing of the HTTP code that makes it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Protocol

logger = logging.getLogger("postflows.history")


class RequestAttempt(Protocol):
    """One attempt of one remote call, as the request log records it."""

    @property
    def api(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def attempt(self) -> int: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def outcome(self) -> str:
        """``ok`` or the error class name."""
        ...

    @property
    def error(self) -> str | None: ...


class StepWriter:
    """Writes request-log steps from a background thread, in batches of what queued up meanwhile."""

    def __init__(self, write: Callable[[list[RequestAttempt]], None]) -> None:
        self._write = write
        self._queue: queue.SimpleQueue[RequestAttempt | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def put(self, record: RequestAttempt) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._drain, name="postflows-steps", daemon=True)
                self._thread.start()
        self._queue.put(record)

    def close(self) -> None:
        """Write what is queued and stop the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _drain(self) -> None:
        while True:
            records = [self._queue.get()]
            while not self._queue.empty():
                records.append(self._queue.get())
            stop = records[-1] is None
            batch = [record for record in records if record is not None]
            if batch:
                try:
                    self._write(batch)
                except Exception as error:  # noqa: BLE001 - a lost log line must not end the run
                    logger.warning("could not record %d request steps: %s", len(batch), error)
            if stop:
                return
