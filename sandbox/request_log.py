"""The sandbox's request log: every request to one of its APIs written as a JSON line to a file, so that a
load test can tell afterwards what reached which API when (requests per minute, submissions per key).

One line per request, written when its answer ends (or the connection is cut)::

    {"time": 1767225600.123, "method": "POST", "path": "/address/REST/v1/runbatch", "api": "address",
     "endpoint": "runbatch", "status": 200, "fault": null, "seconds": 0.051}

``time`` is when the request arrived (epoch seconds, the machine's clock even where the sandbox runs on a
test's clock), ``status`` the HTTP status the answer started with
(``null``: none was sent), ``fault`` the kind of the fault rule that fired for it (``null``: none),
``seconds`` how long it took to answer. Control requests (``/_sandbox``) are not logged. Lines are appended
under a lock of this process, each written whole with one ``write``, so several sandbox processes may share
a file too.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.faults import api_of

FAULT_KIND_KEY = "postflows.sandbox.fault_kind"
"""Where the fault middleware notes the kind of the rule that fired, for the log (a mutable holder)."""


class RequestLog:
    """Appends one JSON line per request to ``path`` (created with its folder)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()
        self._lock = threading.Lock()

    def write(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, separators=(",", ":")) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as sink:
            sink.write(line)


class RequestLogMiddleware:
    """Logs every API request of the combined app (see the module docstring); outermost but for the
    control guard, so it sees faulted requests too."""

    def __init__(self, app: ASGIApp, log: RequestLog) -> None:
        self.app = app
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = api_of(scope)
        if found is None:
            await self.app(scope, receive, send)
            return
        api, endpoint = found
        arrived, started = time.time(), time.monotonic()
        status: list[int] = []
        fault: list[str] = []
        scope = dict(scope)
        scope[FAULT_KIND_KEY] = fault

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self.log.write(
                {
                    "time": round(arrived, 6),
                    "method": scope["method"],
                    "path": scope["path"],
                    "api": api,
                    "endpoint": endpoint,
                    "status": status[0] if status else None,
                    "fault": fault[0] if fault else None,
                    "seconds": round(time.monotonic() - started, 6),
                }
            )


def note_fault(scope: Scope, kind: str) -> None:
    """Tell the request log (when there is one) which fault rule fired for this request."""
    holder = scope.get(FAULT_KIND_KEY)
    if isinstance(holder, list) and not holder:
        holder.append(kind)
