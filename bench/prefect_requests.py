"""Prefect API requests per flow run, counted from the Prefect server's access log: the benchmarks of a run's
cost (:mod:`bench.worker_run`) and the load test (:mod:`bench.load`) count them the same way.

A server started under :func:`access_logged` (``PREFECT_SERVER_LOGGING_LEVEL=INFO``) writes uvicorn's access
log into its log: one ``"GET /api/... HTTP/1.1" 200`` line per request it answered, WebSocket connections
as ``"WebSocket /api/..." [accepted]``. A window is cut by two marks (:meth:`ServerLog.mark`: a
health request whose query string names it, waited for until the server has logged it); what is counted in
it is every HTTP request the server answered but:

* the workers' polling (:data:`POLLING`): ``get_scheduled_flow_runs`` once a query interval and the REST
  heartbeat, asked whether there is a run or not (Prefect 3.8.8's workers send their heartbeats over a
  WebSocket, so an idle worker asks nothing else: :meth:`ServerLog.count` of a quiet window shows it);
* the measuring process's own requests (creating the runs, watching them, its clients' version and CSRF
  requests), counted as it sends them (:class:`RequestTally`) and subtracted.

What remains is what the runs' processes and the workers on their behalf asked of the server. WebSocket
connections (the runs' events) are counted apart.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest.mock import patch

import httpx

LOG_LEVEL = {"PREFECT_SERVER_LOGGING_LEVEL": "INFO"}
"""What a server needs in its environment to log every request it answers."""
REQUEST_LINE = re.compile(r'"(?P<method>[A-Z]+) (?P<path>/\S*) HTTP/[\d.]+" (?P<status>\d{3})')
WEBSOCKET_LINE = re.compile(r'"WebSocket (?P<path>/\S*)" \[accepted\]')
POLLING = re.compile(r"^POST /api/work_pools/[^/]+/(get_scheduled_flow_runs|workers/heartbeat)$")
"""The requests of a worker that polls whether or not there is a run (method and path, query left off)."""
MARK_PARAMETER = "bench_mark"
_IDS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def access_logged() -> contextlib.AbstractContextManager[Any]:
    """For the block, this process's environment (which ``LocalServer.start`` hands the Prefect server it
    starts) with :data:`LOG_LEVEL`; as it was afterwards."""
    return patch.dict(os.environ, LOG_LEVEL)


def request_kind(method: str, path: str) -> str:
    """``METHOD /path`` with the query left off and every id written ``{id}``: one kind of request."""
    return f"{method} {_IDS.sub('{id}', path.partition('?')[0])}"


@dataclass
class RequestTally:
    """The requests this process sends the Prefect API, counted by kind by an event hook of its client."""

    by_kind: Counter[str] = field(default_factory=Counter)

    @property
    def sent(self) -> int:
        return sum(self.by_kind.values())

    def httpx_settings(self) -> dict[str, Any]:
        """``get_client(httpx_settings=...)`` of an asynchronous client that counts into this tally."""
        return {"event_hooks": {"request": [self._async_hook]}}

    def sync_httpx_settings(self) -> dict[str, Any]:
        """The same for ``get_client(sync_client=True, ...)``."""
        return {"event_hooks": {"request": [self._hook]}}

    def _hook(self, request: httpx.Request) -> None:
        self.by_kind[request_kind(request.method, request.url.path)] += 1

    async def _async_hook(self, request: httpx.Request) -> None:
        self._hook(request)


@dataclass
class RequestCount:
    """The requests of one window of the access log: how many the server answered, how many of them were
    the workers' polling and the measuring process's own, and the rest (counted) by kind."""

    answered: int = 0
    polling: int = 0
    own: int = 0
    websockets: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)

    @property
    def counted(self) -> int:
        """Answered requests but the workers' polling and the measuring process's own."""
        return self.answered - self.polling - self.own


@dataclass(frozen=True)
class ServerLog:
    """The log of a Prefect server started under :func:`access_logged`, and the API it serves."""

    path: Path
    api_url: str

    def mark(self, label: str, timeout_s: float = 30.0) -> str:
        """Send a health request naming a new mark and wait until the server has logged it; the mark."""
        mark = f"{label}-{uuid.uuid4().hex[:8]}"
        httpx.get(f"{self.api_url.rstrip('/')}/health", params={MARK_PARAMETER: mark}, timeout=10)
        deadline = time.monotonic() + timeout_s
        while self._mark_line(mark) not in self._text():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Prefect server did not log the mark {mark} in {self.path}")
            time.sleep(0.05)
        return mark

    def count(self, start: str, end: str, own: RequestTally | None = None) -> RequestCount:
        """The requests answered between the marks ``start`` and ``end``; ``own``: those the measuring
        process sent meanwhile."""
        text = self._text()
        first, last = self._mark_line(start), self._mark_line(end)
        if first not in text or last not in text:
            raise RuntimeError(f"marks {start}, {end} not both in {self.path}")
        window = text.split(first, 1)[1].split(last, 1)[0]
        return count_lines(window.splitlines()[1:], own)

    def _text(self) -> str:
        return self.path.read_text(encoding="utf-8", errors="replace")

    @staticmethod
    def _mark_line(mark: str) -> str:
        return f"/api/health?{MARK_PARAMETER}={mark} HTTP/"


def count_lines(lines: list[str], own: RequestTally | None = None) -> RequestCount:
    """The requests of access log ``lines`` (:class:`RequestCount`); ``own``: the measuring process's, taken
    out of their kinds."""
    found = RequestCount(own=0 if own is None else own.sent)
    for line in lines:
        request = REQUEST_LINE.search(line)
        if request is not None:
            kind = request_kind(request["method"], request["path"])
            found.answered += 1
            if POLLING.match(kind):
                found.polling += 1
            else:
                found.by_kind[kind] += 1
        elif WEBSOCKET_LINE.search(line):
            found.websockets += 1
    if own is not None:
        found.by_kind.subtract(own.by_kind)
        found.by_kind = +found.by_kind  # drops the kinds none of the runs asked for
    return found
