"""The ASGI middleware that applies the sandbox's fault plan (:mod:`sandbox.faults`) to every request of
the combined app: transport-level faults answered here, endpoint-level ones marked on the request scope for
the handler, processed requests answered late, wrongly or not at all; every request counted, and those the
API accepted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.answer_faults import Answer, corrupt_download, with_unlisted_status
from sandbox.faults import (
    IN_PROCESS_KEY,
    SCOPE_KEY,
    AnswerTimedOut,
    ConnectionDropped,
    FaultPlan,
    FaultRule,
    api_of,
)
from sandbox.request_counter import RequestCounter
from sandbox.request_log import note_fault
from sandbox.state import MemoryState, SandboxState

# What an API answers instead of a processed request's real answer: (fault value, real body) -> (HTTP
# status, body).
FailureAnswer = Callable[[Any, bytes], tuple[int, bytes]]


# Whether an API accepted a request, judged from the answer its app gave (HTTP status and body).
AcceptedAnswer = Callable[[Answer], bool]


HELD_ANSWER_S = 300.0


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
        found = api_of(scope)
        if found is None:
            await self.app(scope, receive, send)
            return
        api, endpoint = found
        async with self.state.request():
            if self.counter is not None:
                self.counter.record(api, scope["method"], endpoint)
            rule = self.plan.take(api, scope["method"], endpoint)
        if rule is not None:
            note_fault(scope, rule.kind)
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
