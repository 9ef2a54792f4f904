"""Fault injection for the sandbox: rules chosen by configuration, applied by one ASGI middleware
(:mod:`sandbox.fault_middleware`).

A rule names the API (``address``, ``newspaper``, ``commerce``, ``auth`` or ``*``), an endpoint glob
relative to that API's mount (``runbatch``, ``checkbatchstatus/*``, ``*orders/standard``), and what happens:

* ``http_status``: answer with that HTTP status and a short JSON body;
* ``delay``: wait ``value`` seconds, then answer normally;
* ``drop``: start the response, then close the connection without completing it;
* ``service_status``: the endpoint answers HTTP 200 with its own failure code (address-service ``Status``
  such as 106, 501, 201; newspaper message code such as ``0000``), read by the handler via
  :func:`active_fault`;
* ``job_outcome`` / ``job_seconds``: a batch job, newspaper order or purchase created by this request ends
  in that outcome (``failed``, ``error``, ``canceled``, ``unknown``; an order in that status) or takes that
  many seconds;
* ``lost_answer``: the request is processed (its changes are kept), then the connection is closed before
  the answer is complete — the client cannot tell whether anything happened;
* ``processed_status``: the request is processed, then answered with the API's failure instead of the
  real answer (address service: the endpoint's result wrapper with ``Status`` ``value``, 201 by default;
  newspaper: HTTP 200 carrying message code ``value``, ``0000`` by default, or ``{"http_status": 500}``
  for another HTTP status, or ``{"code": "0030", "with_id": true}`` for the id the request was given beside
  the error — an order or purchase taken, and answered with an error all the same; commerce: HTTP
  ``value``, 500 by default);
* ``hold``: keep the request waiting up to ``value`` seconds, then process it; a request whose client goes
  away meanwhile is never processed. A test holds a process at a known point this way, then kills it: the
  held request models one its process never got to send;
* ``late_answer``: process the request at once, then keep its answer back for ``value`` seconds; a client
  killed meanwhile never learns the outcome of what the service did;
* ``read_timeout``: the request is processed, then its answer is held until the client gives up: served
  over a socket for ``value`` seconds (300 by default) before the connection closes; in-process the
  client's read times out at once (:class:`AnswerTimedOut`);
* ``token_expired``: every access token issued so far expires now, then the request goes on and meets the
  API's own 401 for an expired token (as when a token runs out in the middle of a run);
* ``corrupt_download``: the request is processed and its download spoiled: ``value`` ``size`` (cut to
  half, the document's ``size`` still naming the whole), ``base64`` (no base64) or ``zip`` (the archive's
  content fails its CRC); see :mod:`sandbox.answer_faults`;
* ``unlisted_status``: the request is processed and every job or order status in its answer
  (``TokenStatus``, ``statusValue``, ``validationStatus``, ``sortingStatus``) says ``value``, a status the
  specification does not list (9 or ``ON_HOLD`` by default).

``after`` lets that many matching requests through first; ``times`` limits how often the rule fires
(``null`` = always). With ``per_segment`` a ``*`` of ``endpoint`` stands for one path segment (it never
crosses a ``/``), so ``purchases/*/output-addresses`` does not also match a document's path. Plans come
from JSON/YAML text or files and can be changed at run time through ``/_sandbox/faults``.

The middleware also counts every request per (api, method, endpoint) in a
:class:`sandbox.request_counter.RequestCounter`, so tests can prove what a client sent
(``/_sandbox/requests``), and apart from those the requests the API accepted (answered as a success,
whatever the client then saw: ``/_sandbox/accepted``), so a second submission shows even when its answer
was lost. With a state directory, request counts and how often each rule was seen and fired are kept there,
shared by every process using it: a rule with ``times: 1`` fires once among them all.
"""

from __future__ import annotations

import fnmatch
import json
import threading
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, TypeAdapter
from starlette.requests import Request

from sandbox.state import Table

FaultKind = Literal[
    "http_status",
    "delay",
    "drop",
    "service_status",
    "job_outcome",
    "job_seconds",
    "lost_answer",
    "processed_status",
    "hold",
    "late_answer",
    "read_timeout",
    "token_expired",
    "corrupt_download",
    "unlisted_status",
]
SCOPE_KEY = "postflows.sandbox.fault"
# Set on the scope of requests served in-process (sandbox.inprocess): a held answer times out at once there.
IN_PROCESS_KEY = "postflows.sandbox.in_process"

API_MOUNTS: dict[str, str] = {
    "address": "/address/REST/v1",
    "newspaper": "/newspaper",
    "commerce": "/commerce",
    "auth": "/auth",
}


class ConnectionDropped(Exception):
    """Raised after a started response to make the server close the connection mid-answer."""


class AnswerTimedOut(Exception):
    """Raised in-process where a served sandbox would hold the answer until the client's read timed out."""


class FaultRule(BaseModel):
    api: str = "*"
    endpoint: str = "*"
    method: str | None = None
    kind: FaultKind
    value: Any = None
    after: int = Field(default=0, ge=0)
    times: int | None = Field(default=1, ge=1)
    per_segment: bool = False
    seen: int = Field(default=0, exclude=True)
    fired: int = 0

    def matches(self, api: str, method: str, endpoint: str) -> bool:
        if self.api not in ("*", api):
            return False
        if self.method and self.method.upper() != method.upper():
            return False
        pattern = self.endpoint.lstrip("/")
        if not self.per_segment:
            return fnmatch.fnmatchcase(endpoint, pattern)
        parts, wanted = endpoint.split("/"), pattern.split("/")
        return len(parts) == len(wanted) and all(map(fnmatch.fnmatchcase, parts, wanted))

    def counter_key(self, index: int) -> str:
        """How the rule at ``index`` of a plan is known in a shared count table."""
        return f"{index}:{self.model_dump_json(exclude={'fired', 'seen'})}"


_RULES = TypeAdapter(list[FaultRule])


class FaultPlan:
    """The active rules; thread-safe, so a served sandbox can be reconfigured while running.

    Rules count what they saw and fired on themselves, or in a shared table (:meth:`count_in`).
    """

    def __init__(self, rules: list[FaultRule] | None = None) -> None:
        self._rules = list(rules or [])
        self._lock = threading.Lock()
        self._counts: Table[tuple[int, int]] | None = None

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

    def count_in(self, table: Table[tuple[int, int]]) -> None:
        """Keep (seen, fired) of each rule in ``table`` (shared by the processes of a state directory)."""
        with self._lock:
            self._counts = table

    def replace(self, rules: list[FaultRule]) -> None:
        with self._lock:
            self._rules = list(rules)
            if self._counts is not None:
                self._counts.clear()
                for index, rule in enumerate(self._rules):
                    self._counts.put(rule.counter_key(index), (rule.seen, rule.fired))

    def add(self, rule: FaultRule) -> None:
        with self._lock:
            self._rules.append(rule)
            if self._counts is not None:
                self._counts.put(rule.counter_key(len(self._rules) - 1), (rule.seen, rule.fired))

    def clear(self) -> None:
        self.replace([])

    @property
    def rules(self) -> list[FaultRule]:
        with self._lock:
            if self._counts is None:
                return list(self._rules)
            counted = []
            for index, rule in enumerate(self._rules):
                seen, fired = self._count_of(index, rule)
                counted.append(rule.model_copy(update={"seen": seen, "fired": fired}))
            return counted

    def take(self, api: str, method: str, endpoint: str, kinds: set[str] | None = None) -> FaultRule | None:
        """The first rule that fires for this request (counting it), or None."""
        with self._lock:
            for index, rule in enumerate(self._rules):
                if kinds is not None and rule.kind not in kinds:
                    continue
                if not rule.matches(api, method, endpoint):
                    continue
                seen, fired = self._count_of(index, rule)
                seen += 1
                fires = seen > rule.after and (rule.times is None or fired < rule.times)
                fired += int(fires)
                rule.seen, rule.fired = seen, fired
                if self._counts is not None:
                    self._counts.put(rule.counter_key(index), (seen, fired))
                if fires:
                    return rule
        return None

    def _count_of(self, index: int, rule: FaultRule) -> tuple[int, int]:
        if self._counts is None:
            return rule.seen, rule.fired
        return self._counts.get(rule.counter_key(index)) or (0, 0)


def split_api_path(path: str) -> tuple[str, str]:
    """(api, endpoint) for a request path of the combined sandbox app."""
    for api, mount in API_MOUNTS.items():
        if path == mount or path.startswith(mount + "/"):
            return api, path[len(mount) :].lstrip("/")
    return "", path.lstrip("/")


def api_of(scope: MutableMapping[str, Any]) -> tuple[str, str] | None:
    """(api, endpoint) of an HTTP request to one of the APIs; None for anything else (control, lifespan)."""
    if scope["type"] != "http":
        return None
    api, endpoint = split_api_path(scope["path"])
    return (api, endpoint) if api else None


def active_fault(request: Request) -> FaultRule | None:
    """The ``service_status``/``job_*`` rule chosen for this request by the middleware, if any."""
    rule = request.scope.get(SCOPE_KEY)
    return rule if isinstance(rule, FaultRule) else None
