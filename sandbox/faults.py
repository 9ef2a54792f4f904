"""Fault injection for the sandbox: rules chosen by configuration, applied by one ASGI middleware.

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
  for another HTTP status; commerce: HTTP ``value``, 500 by default);
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

The middleware also counts every request per (api, method, endpoint) in a :class:`RequestCounter`, so tests
can prove what a client sent (``/_sandbox/requests``), and apart from those the requests the API accepted
(answered as a success, whatever the client then saw: ``/_sandbox/accepted``), so a second submission shows
even when its answer was lost. With a state directory, request counts and how often each rule was seen and
fired are kept there, shared by every process using it: a rule with ``times: 1`` fires once among them all.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, TypeAdapter
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.answer_faults import Answer, corrupt_download, with_unlisted_status
from sandbox.state import MemoryState, SandboxState, Table

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
# What an API answers instead of a processed request's real answer: (fault value, real body) -> (HTTP
# status, body).
FailureAnswer = Callable[[Any, bytes], tuple[int, bytes]]
# Whether an API accepted a request, judged from the answer its app gave (HTTP status and body).
AcceptedAnswer = Callable[[Answer], bool]
SCOPE_KEY = "postflows.sandbox.fault"
# Set on the scope of requests served in-process (sandbox.inprocess): a held answer times out at once there.
IN_PROCESS_KEY = "postflows.sandbox.in_process"
HELD_ANSWER_S = 300.0

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

    def __init__(self, state: SandboxState | None = None) -> None:
        self._state = state or MemoryState()
        self._counts: Table[int] = self._state.table("sandbox.requests")
        self._accepted: Table[int] = self._state.table("sandbox.accepted")

    def record(self, api: str, method: str, endpoint: str) -> None:
        self._add(self._counts, api, method, endpoint)

    def record_accepted(self, api: str, method: str, endpoint: str) -> None:
        """Count a request the API accepted (answered as a success, whatever reached the client)."""
        self._add(self._accepted, api, method, endpoint)

    def counts(self) -> list[RequestCount]:
        return self._listed(self._counts)

    def accepted(self) -> list[RequestCount]:
        """The accepted requests per (api, method, endpoint)."""
        return self._listed(self._accepted)

    def reset(self) -> None:
        self._counts.clear()
        self._accepted.clear()

    def _add(self, table: Table[int], api: str, method: str, endpoint: str) -> None:
        key = json.dumps([api, method.upper(), endpoint])
        with self._state.atomic():
            table.put(key, (table.get(key) or 0) + 1)

    @staticmethod
    def _listed(table: Table[int]) -> list[RequestCount]:
        items = sorted((tuple(json.loads(key)), count) for key, count in table.items())
        return [RequestCount(api=a, method=m, endpoint=e, count=n) for (a, m, e), n in items]


def accepted_by_status(answer: Answer) -> bool:
    """The default judgement: an API accepted a request it answered with a 2xx status."""
    return 200 <= answer.status < 300


class FaultMiddleware:
    """Applies transport-level faults and marks endpoint-level ones on the request scope; counts every request
    and those the API accepted.

    Counting the request and choosing its rule is one transaction of ``state``; the app's own work is
    another, so a ``delay`` holds no lock while it waits. ``failure_answers`` and ``accepted_answers`` hold
    each API's own failure answer and success judgement (default: a 2xx status); ``expire_tokens`` makes
    every issued access token expire (``token_expired``).
    """

    def __init__(
        self,
        app: ASGIApp,
        plan: FaultPlan,
        counter: RequestCounter | None = None,
        state: SandboxState | None = None,
        failure_answers: Mapping[str, FailureAnswer] | None = None,
        accepted_answers: Mapping[str, AcceptedAnswer] | None = None,
        expire_tokens: Callable[[], object] | None = None,
    ) -> None:
        self.app = app
        self.plan = plan
        self.counter = counter
        self.state = state or MemoryState()
        self.failure_answers = dict(failure_answers or {})
        self.accepted_answers = dict(accepted_answers or {})
        self.expire_tokens = expire_tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api, endpoint = split_api_path(scope["path"])
        if not api:
            await self.app(scope, receive, send)
            return
        async with self.state.request():
            if self.counter is not None:
                self.counter.record(api, scope["method"], endpoint)
            rule = self.plan.take(api, scope["method"], endpoint)
        where = f"{api}/{endpoint}"
        if rule is None:
            await self._serve(scope, receive, send, api, endpoint)
        elif rule.kind == "delay":
            await asyncio.sleep(float(rule.value or 0))
            await self._serve(scope, receive, send, api, endpoint)
        elif rule.kind == "http_status":
            status = int(rule.value or 500)
            await _respond(send, status, json.dumps({"error": f"injected HTTP {status}"}).encode())
        elif rule.kind == "drop":
            await _drop(send, f"injected dropped connection on {where}")
        elif rule.kind == "hold":
            await self._hold(scope, receive, send, api, endpoint, float(rule.value or 0))
        elif rule.kind == "token_expired":
            if self.expire_tokens is not None:
                self.expire_tokens()
            await self._serve(scope, receive, send, api, endpoint)
        elif rule.kind in _PROCESSED_KINDS:
            answer = await self._processed(scope, receive, api, endpoint)
            await self._after_processing(rule, answer, scope, send, api, where)
        else:
            scope = dict(scope)
            scope[SCOPE_KEY] = rule
            await self._serve(scope, receive, send, api, endpoint)

    async def _after_processing(
        self, rule: FaultRule, answer: Answer, scope: Scope, send: Send, api: str, where: str
    ) -> None:
        """What the client gets of a processed request under ``rule``."""
        if rule.kind == "late_answer":
            await asyncio.sleep(float(rule.value or 0))
            await _send_answer(send, answer, where)
        elif rule.kind == "lost_answer":
            await _drop(send, f"injected lost answer on {where} (the request was processed)")
        elif rule.kind == "read_timeout":
            reason = f"injected read timeout on {where} (the request was processed)"
            if scope.get(IN_PROCESS_KEY):
                raise AnswerTimedOut(reason)
            await asyncio.sleep(float(rule.value or HELD_ANSWER_S))
            await _drop(send, reason)
        elif rule.kind == "corrupt_download":
            await _send_answer(send, corrupt_download(answer, str(rule.value or "size")), where)
        elif rule.kind == "unlisted_status":
            await _send_answer(send, with_unlisted_status(answer, rule.value), where)
        else:  # processed_status
            failure = self.failure_answers.get(api)
            if failure is None:
                await _respond(
                    send, 500, json.dumps({"error": "injected HTTP 500 after processing"}).encode()
                )
            else:
                await _respond(send, *failure(rule.value, answer.body))

    async def _serve(self, scope: Scope, receive: Receive, send: Send, api: str, endpoint: str) -> None:
        """Let the app answer, passing its answer on as it comes, and count it if the API accepted it."""
        start: Message = {}
        chunks: list[bytes] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body" and _is_json(start):
                chunks.append(bytes(message.get("body", b"")))
            await send(message)

        await self.app(scope, receive, watch)
        if start:
            answer = Answer(int(start["status"]), list(start.get("headers", [])), b"".join(chunks))
            self._count_accepted(answer, scope, api, endpoint)

    async def _hold(
        self, scope: Scope, receive: Receive, send: Send, api: str, endpoint: str, seconds: float
    ) -> None:
        """Wait up to ``seconds`` for the client to go away; serve the request only if it did not."""
        body: list[Message] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body.append(message)
            if not message.get("more_body", False):
                break
        try:
            message = await asyncio.wait_for(receive(), seconds)
        except TimeoutError:
            pass
        else:
            if message["type"] == "http.disconnect":
                return

        async def replay() -> Message:
            return body.pop(0) if body else await receive()

        await self._serve(scope, replay, send, api, endpoint)

    async def _processed(self, scope: Scope, receive: Receive, api: str, endpoint: str) -> Answer:
        answer = await _answer_of(self.app, scope, receive)
        self._count_accepted(answer, scope, api, endpoint)
        return answer

    def _count_accepted(self, answer: Answer, scope: Scope, api: str, endpoint: str) -> None:
        if self.counter is None:
            return
        if self.accepted_answers.get(api, accepted_by_status)(answer):
            self.counter.record_accepted(api, scope["method"], endpoint)


_PROCESSED_KINDS = frozenset(
    {
        "late_answer",
        "lost_answer",
        "processed_status",
        "read_timeout",
        "corrupt_download",
        "unlisted_status",
    }
)


def _is_json(start: Message) -> bool:
    return any(
        name.lower() == b"content-type" and b"json" in value.lower()
        for name, value in start.get("headers", [])
    )


async def _answer_of(app: ASGIApp, scope: Scope, receive: Receive) -> Answer:
    """Run ``app`` on the request and keep its answer instead of sending it."""
    answer = Answer(500)
    chunks: list[bytes] = []

    async def keep(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer.status = int(message["status"])
            answer.headers = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))

    await app(scope, receive, keep)
    answer.body = b"".join(chunks)
    return answer


async def _drop(send: Send, reason: str) -> None:
    """Start an answer, send part of its body, then close the connection."""
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", b"1000")],
        }
    )
    await send({"type": "http.response.body", "body": b'{"partial', "more_body": True})
    raise ConnectionDropped(reason)


async def _send_answer(send: Send, answer: Answer, where: str) -> None:
    """Send ``answer``; one cut short declares its whole length and the connection closes after the part."""
    if answer.declared_length is None:
        await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers})
        await send({"type": "http.response.body", "body": answer.body})
        return
    headers = [(name, value) for name, value in answer.headers if name.lower() != b"content-length"]
    headers.append((b"content-length", str(answer.declared_length).encode()))
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body, "more_body": True})
    raise ConnectionDropped(
        f"injected truncated download on {where}: {len(answer.body)} of {answer.declared_length} bytes"
    )


async def _respond(send: Send, status: int, body: bytes) -> None:
    start: Message = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    }
    await send(start)
    await send({"type": "http.response.body", "body": body})
