"""Fault injection for the sandbox: rules chosen by configuration, applied by one ASGI middleware.

A rule names the API (``address``, ``newspaper``, ``auth`` or ``*``), an endpoint glob relative to that
API's mount (``runbatch``, ``checkbatchstatus/*``, ``*orders/standard``), and what happens:

* ``http_status``: answer with that HTTP status and a short JSON body;
* ``delay``: wait ``value`` seconds, then answer normally;
* ``drop``: start the response, then close the connection without completing it;
* ``service_status``: the endpoint answers HTTP 200 with its own failure code (address-service ``Status``
  such as 106, 501, 201; newspaper message code such as ``0000``), read by the handler via
  :func:`active_fault`;
* ``job_outcome`` / ``job_seconds``: a batch job or purchase created by this request ends in that outcome
  (``failed``, ``error``, ``canceled``, ``unknown``) or takes that many seconds.

``after`` lets that many matching requests through first; ``times`` limits how often the rule fires
(``null`` = always). Plans come from JSON/YAML text or files and can be changed at run time through
``/_sandbox/faults``. The middleware also counts every request per (api, method, endpoint) in a
:class:`RequestCounter`, so tests can prove what a client sent (``/_sandbox/requests``).
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, TypeAdapter
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

FaultKind = Literal["http_status", "delay", "drop", "service_status", "job_outcome", "job_seconds"]
SCOPE_KEY = "postflows.sandbox.fault"

API_MOUNTS: dict[str, str] = {
    "address": "/address/REST/v1",
    "newspaper": "/newspaper",
    "auth": "/auth",
}


class ConnectionDropped(Exception):
    """Raised after a started response to make the server close the connection mid-answer."""


class FaultRule(BaseModel):
    api: str = "*"
    endpoint: str = "*"
    method: str | None = None
    kind: FaultKind
    value: Any = None
    after: int = Field(default=0, ge=0)
    times: int | None = Field(default=1, ge=1)
    seen: int = Field(default=0, exclude=True)
    fired: int = 0

    def matches(self, api: str, method: str, endpoint: str) -> bool:
        if self.api not in ("*", api):
            return False
        if self.method and self.method.upper() != method.upper():
            return False
        return fnmatch.fnmatchcase(endpoint, self.endpoint.lstrip("/"))


_RULES = TypeAdapter(list[FaultRule])


class FaultPlan:
    """The active rules; thread-safe, so a served sandbox can be reconfigured while running."""

    def __init__(self, rules: list[FaultRule] | None = None) -> None:
        self._rules = list(rules or [])
        self._lock = threading.Lock()

    @classmethod
    def load(cls, source: str | Path | None) -> FaultPlan:
        """Read a plan from JSON/YAML text or from a file holding it; ``None`` means no faults."""
        if source is None or str(source).strip() == "":
            return cls()
        text = str(source)
        path = Path(text)
        if "\n" not in text and len(text) < 4096 and path.suffix in {".json", ".yaml", ".yml"}:
            text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text) if not text.lstrip().startswith(("[", "{")) else json.loads(text)
        if isinstance(data, dict):
            data = data.get("faults", [data])
        return cls(_RULES.validate_python(data))

    def replace(self, rules: list[FaultRule]) -> None:
        with self._lock:
            self._rules = list(rules)

    def add(self, rule: FaultRule) -> None:
        with self._lock:
            self._rules.append(rule)

    def clear(self) -> None:
        self.replace([])

    @property
    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def take(self, api: str, method: str, endpoint: str, kinds: set[str] | None = None) -> FaultRule | None:
        """The first rule that fires for this request (counting it), or None."""
        with self._lock:
            for rule in self._rules:
                if kinds is not None and rule.kind not in kinds:
                    continue
                if not rule.matches(api, method, endpoint):
                    continue
                rule.seen += 1
                if rule.seen <= rule.after:
                    continue
                if rule.times is not None and rule.fired >= rule.times:
                    continue
                rule.fired += 1
                return rule
        return None


def split_api_path(path: str) -> tuple[str, str]:
    """(api, endpoint) for a request path of the combined sandbox app."""
    for api, mount in API_MOUNTS.items():
        if path == mount or path.startswith(mount + "/"):
            return api, path[len(mount) :].lstrip("/")
    return "", path.lstrip("/")


def active_fault(request: Request) -> FaultRule | None:
    """The ``service_status``/``job_*`` rule chosen for this request by the middleware, if any."""
    rule = request.scope.get(SCOPE_KEY)
    return rule if isinstance(rule, FaultRule) else None


class RequestCount(BaseModel):
    api: str
    method: str
    endpoint: str
    count: int


class RequestCounter:
    """How many requests reached each (api, method, endpoint), faulted ones included; thread-safe."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, str, str]] = Counter()
        self._lock = threading.Lock()

    def record(self, api: str, method: str, endpoint: str) -> None:
        with self._lock:
            self._counts[(api, method.upper(), endpoint)] += 1

    def counts(self) -> list[RequestCount]:
        with self._lock:
            items = sorted(self._counts.items())
        return [RequestCount(api=a, method=m, endpoint=e, count=n) for (a, m, e), n in items]

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()


class FaultMiddleware:
    """Applies transport-level faults and marks endpoint-level ones on the request scope."""

    def __init__(self, app: ASGIApp, plan: FaultPlan, counter: RequestCounter | None = None) -> None:
        self.app = app
        self.plan = plan
        self.counter = counter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api, endpoint = split_api_path(scope["path"])
        if not api:
            await self.app(scope, receive, send)
            return
        if self.counter is not None:
            self.counter.record(api, scope["method"], endpoint)
        rule = self.plan.take(api, scope["method"], endpoint)
        if rule is None:
            await self.app(scope, receive, send)
            return
        if rule.kind == "delay":
            await asyncio.sleep(float(rule.value or 0))
            await self.app(scope, receive, send)
        elif rule.kind == "http_status":
            status = int(rule.value or 500)
            body = json.dumps({"error": f"injected HTTP {status}"}).encode()
            await _respond(send, status, body)
        elif rule.kind == "drop":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"1000")],
                }
            )
            await send({"type": "http.response.body", "body": b'{"partial', "more_body": True})
            raise ConnectionDropped(f"injected dropped connection on {api}/{endpoint}")
        else:
            scope = dict(scope)
            scope[SCOPE_KEY] = rule
            await self.app(scope, receive, send)


async def _respond(send: Send, status: int, body: bytes) -> None:
    start: Message = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    }
    await send(start)
    await send({"type": "http.response.body", "body": body})
