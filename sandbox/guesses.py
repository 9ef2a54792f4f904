"""Which guesses an answer of the sandbox plays, and which way: ours or the other plausible one.

Where a specification shows nothing, the sandbox had to invent its answer, and a client built with the same
guess agrees with it by construction. So every answer it invents is marked with the ids of the guesses it
plays (header ``X-Sandbox-Guess``; the ids are the register's, ``connectors.guesses``, known here only as
text), and ``guesses="other"`` (``POSTFLOWS_SANDBOX_GUESSES=other``) makes it answer each of them the other
plausible way, so a client can be shown safe under both.

A handler marks what it plays with :func:`play`; answers every request of an endpoint invents are marked by
:data:`ENDPOINT_GUESSES` here. With a guess log (``POSTFLOWS_SANDBOX_GUESS_LOG``) every id played is also
appended to that file, one per line, so a test suite can check afterwards that it met no id the register
lacks.
"""

from __future__ import annotations

import fnmatch
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.faults import api_of

GuessMode = Literal["ours", "other"]
GUESS_HEADER = "x-sandbox-guess"
GUESS_LOG_VARIABLE = "POSTFLOWS_SANDBOX_GUESS_LOG"
PLAYED_KEY = "postflows.sandbox.guesses"
MODE_KEY = "postflows.sandbox.guess_mode"


@dataclass(frozen=True)
class EndpointGuess:
    """Guesses every answer of an endpoint plays: ``api`` and ``endpoint`` (a glob below the API's mount)
    as the fault rules name them, ``method`` (None: any), ``failures`` (only answers of HTTP 400 and up)."""

    api: str
    endpoint: str
    ids: tuple[str, ...]
    method: str | None = None
    failures: bool = False

    def matches(self, api: str, method: str, endpoint: str, status: int) -> bool:
        if self.api != api or (self.method is not None and self.method != method):
            return False
        if self.failures and status < 400:
            return False
        return fnmatch.fnmatchcase(endpoint, self.endpoint)


ENDPOINT_GUESSES: tuple[EndpointGuess, ...] = (
    EndpointGuess("address", "ping", ("address-service.ping-body",)),
    EndpointGuess("address", "deletefile/*", ("address-service.deletefile-302",)),
    EndpointGuess("address", "downloadfile/*", ("address-service.download-token",)),
    EndpointGuess("address", "checkbatchstatus/*", ("address-service.token-status-transitions",)),
    EndpointGuess("address", "runquery2", ("address-service.query-billed",)),
    EndpointGuess("address", "runquery2withclient", ("address-service.query-withclient-wrapper",)),
    EndpointGuess("address", "buildingverification2", ("address-service.building-verification-method",)),
    EndpointGuess("address", "autocomplete*", ("address-service.assistant-url",)),
    EndpointGuess("assistant", "autocomplete*", ("address-service.assistant-url",)),
    EndpointGuess("assistant", "buildingverification2", ("address-service.building-verification-method",)),
    EndpointGuess("newspaper", "*/orders/*/status", ("newspaper.order-statuses",)),
    EndpointGuess("newspaper", "*/orders/*/delivery-note", ("newspaper.delivery-note-shape",)),
    EndpointGuess("newspaper", "*/orders/gratis", ("newspaper.gratis-order-body",), method="POST"),
    EndpointGuess("newspaper", "*/purchases", ("newspaper.purchase-id",), method="POST"),
    EndpointGuess("newspaper", "*/purchases/*/progress", ("newspaper.purchase-statuses",)),
    EndpointGuess("newspaper", "*/purchases/*/output*addresses", ("newspaper.output-addresses-path",)),
    EndpointGuess("newspaper", "*/purchases/*/document/*", ("newspaper.document-mime",)),
    EndpointGuess("newspaper", "*/statistics", ("newspaper.statistics-answer",), method="POST"),
    EndpointGuess("newspaper", "*/structurefiles/email", ("newspaper.structure-file-email-body",)),
    EndpointGuess("newspaper", "*/black-list", ("newspaper.black-list-shape",)),
    EndpointGuess("newspaper", "*", ("newspaper.error-envelope", "newspaper.code-position"), failures=True),
    EndpointGuess("commerce", "*", ("commerce.error-body",), failures=True),
    EndpointGuess("commerce", "*sameday*", ("commerce.same-day-path",)),
    EndpointGuess("commerce", "pick*/v1/*points*", ("commerce.pickup-points-path",)),
    EndpointGuess("commerce", "pick*/v1/users", ("commerce.pickup-path",)),
    EndpointGuess("commerce", "barcode/*", ("commerce.barcode-path", "commerce.label-answer")),
    EndpointGuess("commerce", "delivery/collection/order/*", ("commerce.return-order-path",)),
    EndpointGuess("commerce", "address/v1/addresses/validation", ("commerce.validation-quality",)),
    EndpointGuess("commerce", "address/v1/houses", ("commerce.house-number-format",)),
    EndpointGuess("commerce", "address/v1/zips", ("commerce.zips-probe",)),
    EndpointGuess("auth", "OAuth/token", ("newspaper.token-endpoint", "commerce.scopes"), failures=True),
    EndpointGuess("auth", "*openid-configuration", ("commerce.id-token-algorithm",)),
)


def play(request: Request, *ids: str) -> None:
    """Mark the answer to ``request`` as playing the guesses ``ids`` (the register's ids)."""
    played: list[str] = request.scope.setdefault(PLAYED_KEY, [])
    played.extend(guess_id for guess_id in ids if guess_id not in played)


def is_other(request: Request) -> bool:
    """Whether the sandbox answering ``request`` plays every guess the other way."""
    return request.scope.get(MODE_KEY) == "other"


class GuessLog:
    """Appends every guess id played to a file, one per line (shared by every app of a process)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def write(self, ids: list[str]) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.writelines(f"{guess_id}\n" for guess_id in ids)


def guess_log_from_environment() -> GuessLog | None:
    """The guess log ``POSTFLOWS_SANDBOX_GUESS_LOG`` names, or None."""
    path = os.environ.get(GUESS_LOG_VARIABLE)
    return GuessLog(Path(path)) if path else None


class GuessMarkMiddleware:
    """Tells the handlers which way the guesses are played (``mode``), adds the ``X-Sandbox-Guess`` header
    to every API answer that plays a guess, and logs the ids."""

    def __init__(self, app: ASGIApp, log: GuessLog | None = None, mode: GuessMode = "ours") -> None:
        self.app = app
        self.log = log
        self.mode = mode

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = api_of(scope)
        if found is None:
            await self.app(scope, receive, send)
            return
        api, endpoint = found
        method = str(scope.get("method", "GET")).upper()
        scope[MODE_KEY] = self.mode

        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                played: list[str] = list(scope.get(PLAYED_KEY, []))
                for rule in ENDPOINT_GUESSES:
                    if rule.matches(api, method, endpoint, int(message["status"])):
                        played.extend(guess_id for guess_id in rule.ids if guess_id not in played)
                if played:
                    headers = list(message.get("headers", []))
                    headers.append((GUESS_HEADER.encode(), ",".join(played).encode()))
                    message = {**message, "headers": headers}
                    if self.log is not None:
                        self.log.write(played)
            await send(message)

        await self.app(scope, receive, marked)


def assistant_at_batch_address(request: Request) -> bool:
    """Whether ``request`` asks the address assistant at the batch service's address while the guesses are
    played the other way (``address-service.assistant-url``: the assistant lives at its own address)."""
    found = api_of(request.scope)
    return is_other(request) and found is not None and found[0] == "address"
