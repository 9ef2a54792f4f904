"""The other plausible answers of the registered guesses that only reshape an answer the sandbox already gives
(``guesses="other"``, see :mod:`sandbox.guesses`): the newspaper's message envelope, the code at the end of
a message, refusals as HTTP 200, ids, confirmations, documents and progress statuses in other shapes; the
commerce API's errors as RFC 7807 problem details, qualities, dates, house numbers and towns in other
spellings; token errors without RFC 6749's fields; a 429 without Retry-After.

Each rewrite is a function of (method, endpoint, status, JSON body) that returns the new answer or None, and
marks the guess it plays. Answers that need the service to act otherwise (an order taken despite a refusal, a
file not deleted) are the handlers' own.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.answer_faults import json_body
from sandbox.faults import api_of
from sandbox.guesses import MODE_KEY, PLAYED_KEY

_CODE_FIRST = re.compile(r"^(\d{4}) (.*)$", re.DOTALL)
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})([+-]\d{2})(\d{2})$")
_HOUSE = re.compile(r"^(\d+) ([A-Za-z])$")


@dataclass
class Answer:
    """An answer being rewritten: HTTP status, content type and body (bytes, and JSON when it is JSON)."""

    status: int
    content_type: str
    body: bytes
    played: list[str]

    def json(self) -> Any:
        return json_body(self.content_type, self.body)

    def set_json(self, value: Any, content_type: str = "application/json") -> None:
        self.body = json.dumps(value).encode()
        self.content_type = content_type

    def play(self, guess_id: str) -> None:
        if guess_id not in self.played:
            self.played.append(guess_id)


Rewrite = Callable[[str, Answer], None]


def _messages_last(messages: Any) -> Any:
    """Messages with their §7 code moved to the end of the text: ``… (code 0030)``."""
    if not isinstance(messages, list):
        return messages
    moved = []
    for item in messages:
        text = item.get("error") if isinstance(item, dict) else None
        match = _CODE_FIRST.match(text) if isinstance(text, str) else None
        moved.append({**item, "error": f"{match.group(2)} (code {match.group(1)})"} if match else item)
    return moved


def newspaper_messages(endpoint: str, answer: Answer) -> None:
    """``errorMessages``/``warningMessages`` instead of ``errors``/``warnings``, codes at the end of the text,
    and a refusal carrying §7 codes answered HTTP 200 instead of 400."""
    body = answer.json()
    if not isinstance(body, dict) or not ({"errors", "warnings"} & set(body)):
        return
    errors, warnings = body.pop("errors", []), body.pop("warnings", [])
    body["errorMessages"], body["warningMessages"] = _messages_last(errors), _messages_last(warnings)
    answer.play("newspaper.error-envelope")
    if errors or warnings:
        answer.play("newspaper.code-position")
    coded = any(isinstance(item, dict) and _CODE_FIRST.match(str(item.get("error"))) for item in errors)
    if answer.status == 400 and coded:
        answer.status = 200
        answer.play("newspaper.refusal-http-status")
    answer.set_json(body)


def newspaper_ids(endpoint: str, answer: Answer) -> None:
    """A purchase id as ``{"purchaseId": n}``; a gratis order's id, without messages, as a bare integer."""
    body = answer.json()
    if answer.status >= 300:
        return
    if fnmatch.fnmatchcase(endpoint, "*/purchases") and isinstance(body, int) and not isinstance(body, bool):
        answer.set_json({"purchaseId": body})
        answer.play("newspaper.purchase-id")
    elif (
        fnmatch.fnmatchcase(endpoint, "*/orders/gratis")
        and isinstance(body, dict)
        and isinstance(body.get("id"), int)
        and not body.get("errors")
        and not body.get("warnings")
    ):
        answer.set_json(body["id"])
        answer.play("newspaper.gratis-order-body")


def newspaper_shapes(endpoint: str, answer: Answer) -> None:
    """Statistics confirmed in JSON, the black list as CSV text, PDF documents named ``PDF``, the delivery
    note as the PDF itself, and a purchase IN_PROGRESS until READY."""
    if answer.status >= 300:
        return
    body = answer.json()
    if endpoint.endswith("/statistics") and "text/plain" in answer.content_type:
        answer.set_json({"message": answer.body.decode("utf-8", "replace")})
        answer.play("newspaper.statistics-answer")
    elif endpoint.endswith("/black-list") and body is not None:
        answer.body, answer.content_type = _csv_text(body).encode(), "text/csv; charset=utf-8"
        answer.play("newspaper.black-list-shape")
    elif endpoint.endswith("/delivery-note") and len(pdfs := _documents(body)) == 1:
        answer.body, answer.content_type = pdfs[0], "application/pdf"
        answer.play("newspaper.delivery-note-shape")
    elif endpoint.endswith("/progress") and isinstance(body, dict):
        for name in ("validationStatus", "sortingStatus"):
            if body.get(name) not in (None, "READY"):
                body[name] = "IN_PROGRESS"
        answer.set_json(body)
        answer.play("newspaper.purchase-statuses")
    elif (
        "/document/" in endpoint
        and isinstance(body, dict)
        and isinstance(body.get("document"), dict)
        and body["document"].get("mimeType") == "application/pdf"
    ):
        body["document"]["mimeType"] = "PDF"
        answer.set_json(body)
        answer.play("newspaper.document-mime")


def _documents(body: Any) -> list[bytes]:
    """The bytes of every §2.7 document anywhere in ``body`` (a delivery note with its partial notes answers
    several: only a lone one is answered as the PDF itself)."""
    if isinstance(body, list):
        return [found for value in body for found in _documents(value)]
    if not isinstance(body, dict):
        return []
    if isinstance(body.get("data"), str) and "mimeType" in body:
        try:
            return [base64.b64decode(body["data"], validate=True)]
        except ValueError:
            return [b""]
    return [found for value in body.values() for found in _documents(value)]


def _csv_text(body: Any) -> str:
    """A JSON list of objects as CSV lines (the keys of the first as the header); anything else as JSON."""
    items = body if isinstance(body, list) else next((v for v in body.values() if isinstance(v, list)), None)
    if not items or not all(isinstance(item, dict) for item in items):
        return json.dumps(body)
    header = list(items[0])
    lines = [";".join(header)] + [";".join(str(item.get(key, "")) for key in header) for item in items]
    return "\n".join(lines) + "\n"


def commerce_errors(endpoint: str, answer: Answer) -> None:
    """An error body as RFC 7807 problem details instead of ``{code, message}``."""
    body = answer.json()
    if answer.status < 400 or not isinstance(body, dict) or "code" not in body:
        return
    problem = {
        "type": "about:blank",
        "title": str(body.get("code")),
        "status": answer.status,
        "detail": str(body.get("message", "")),
    }
    answer.set_json(problem, "application/problem+json")
    answer.play("commerce.error-body")


def commerce_spellings(endpoint: str, answer: Answer) -> None:
    """Qualities in lower case, ``expires`` in extended ISO 8601, house numbers without the space, towns in
    ``city27`` only."""
    body = answer.json()
    if answer.status >= 300 or body is None:
        return
    if endpoint.endswith("addresses/validation") and isinstance(body, dict):
        if isinstance(body.get("quality"), str):
            body["quality"] = body["quality"].lower()
            answer.play("commerce.validation-quality")
        if isinstance(body.get("expires"), str) and (match := _COMPACT.match(body["expires"])):
            year, month, day, hour, minute, second, zone_h, zone_m = match.groups()
            body["expires"] = f"{year}-{month}-{day}T{hour}:{minute}:{second}{zone_h}:{zone_m}"
            answer.play("commerce.expires-format")
    elif endpoint.endswith("/houses") and isinstance(body, dict) and isinstance(body.get("houses"), list):
        body["houses"] = [_HOUSE.sub(r"\1\2", str(house)) for house in body["houses"]]
        answer.play("commerce.house-number-format")
    elif endpoint.endswith("/zips") and isinstance(body, dict) and isinstance(body.get("zips"), list):
        for entry in body["zips"]:
            if isinstance(entry, dict):
                entry["city18"] = ""
        answer.play("commerce.zips-probe")
    else:
        return
    answer.set_json(body)


def token_errors(endpoint: str, answer: Answer) -> None:
    """A refused token request as ``{code, message}`` instead of RFC 6749's ``error``; discovery that lists
    ES256 beside RS256."""
    body = answer.json()
    if not isinstance(body, dict):
        return
    if endpoint == "OAuth/token" and answer.status >= 400 and "error" in body:
        answer.set_json({"code": body["error"], "message": body.get("error_description", "")})
        answer.play("newspaper.token-endpoint")
    elif endpoint.endswith("openid-configuration"):
        algorithms = body.get("id_token_signing_alg_values_supported")
        if isinstance(algorithms, list) and "ES256" not in algorithms:
            body["id_token_signing_alg_values_supported"] = [*algorithms, "ES256"]
            answer.set_json(body)
            answer.play("commerce.id-token-algorithm")


REWRITES: dict[str, tuple[Rewrite, ...]] = {
    "newspaper": (newspaper_messages, newspaper_ids, newspaper_shapes),
    "commerce": (commerce_errors, commerce_spellings),
    "auth": (token_errors,),
}
_BODY_LIMIT = 64 << 20  # larger answers (downloads) are passed on as they are


class OtherAnswersMiddleware:
    """Under ``guesses="other"``, rewrites the answers of :data:`REWRITES` and drops Retry-After from a 429;
    any other request, and every request under ``ours``, passes untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = api_of(scope)
        if found is None or scope.get(MODE_KEY) != "other":
            await self.app(scope, receive, send)
            return
        api, endpoint = found
        rewrites = REWRITES.get(api, ())
        start: Message | None = None
        chunks: list[bytes] = []
        size = 0
        passing = False

        async def rewritten(message: Message) -> None:
            nonlocal start, size, passing
            if passing:
                await send(message)
                return
            if message["type"] == "http.response.start":
                start = _without_retry_after(message, scope)
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > _BODY_LIMIT:
                passing = True
                await send(start)
                await send({"type": "http.response.body", "body": b"".join(chunks), "more_body": True})
                return
            if message.get("more_body", False):
                return
            await _send_rewritten(send, scope, start, b"".join(chunks), endpoint, rewrites)

        await self.app(scope, receive, rewritten)


def _without_retry_after(message: Message, scope: Scope) -> Message:
    if message["status"] != 429:
        return message
    headers = [(name, value) for name, value in message.get("headers", []) if name.lower() != b"retry-after"]
    played: list[str] = scope.setdefault(PLAYED_KEY, [])
    if "http.429-not-processed" not in played:
        played.append("http.429-not-processed")
    return {**message, "headers": headers}


async def _send_rewritten(
    send: Send, scope: Scope, start: Message, body: bytes, endpoint: str, rewrites: tuple[Rewrite, ...]
) -> None:
    headers = dict((name.lower(), value) for name, value in start.get("headers", []))
    content_type = headers.get(b"content-type", b"").decode("latin-1")
    played: list[str] = scope.setdefault(PLAYED_KEY, [])
    answer = Answer(int(start["status"]), content_type, body, played)
    for rewrite in rewrites:
        rewrite(endpoint, answer)
    kept = [
        (name, value)
        for name, value in start.get("headers", [])
        if name.lower() not in (b"content-length", b"content-type")
    ]
    kept += [(b"content-type", answer.content_type.encode("latin-1"))] if answer.content_type else []
    kept.append((b"content-length", str(len(answer.body)).encode()))
    await send({**start, "status": answer.status, "headers": kept})
    await send({"type": "http.response.body", "body": answer.body, "more_body": False})
