"""Errors of the newspaper API (§7): reading error and warning arrays out of every response body, and the
typed errors raised from them; the message-code table is :mod:`connectors.newspaper.codes`.

    ApiError
    ├── RemoteRejected
    │   └── NewspaperRejected        the body carried error messages (any HTTP status but 5xx/429)
    ├── OrderInControl               summary/sendings asked while the order is in CONTROL (not sent)
    ├── UnexpectedResponse           a body whose shape the client cannot use
    └── DocumentInvalid              a document that does not decode or whose length is not ``size``
        └── DocumentSizeMismatch
    PostflowsError
    └── OrderInvalid                 validation before a submit failed (lists each FieldProblem)

§7: "an HTTP 200 response can still contain errors and warnings … 200 is not success by itself". A 2xx
answer to a POST that creates an order or purchase and carries its id took it, errors or not
(:func:`check_created` lets it through; the client returns the id with the errors). A rejection certainly
means "not processed" only when its answer carries no id, is not an HTTP 5xx, is not a 2xx answer to a
request confirmed by plain text (statistics, the notice e-mail: no id shows that nothing was kept), and
each of its error messages carries §7 codes that refuse (:data:`NOT_PROCESSED_CODES`: all but 0004 and
0007, :data:`UNCERTAIN_CODES`). A code the table does not list, a message without a code, a 5xx, or a
success answer that cannot be read leave a submission's outcome unknown. A code is read from a message's
``code`` field, or wherever it stands in its text as a four-digit word of the §7 table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from connectors.errors import (
    NEVER_SENT,
    RATE_LIMITED_ANSWER,
    ApiError,
    RemoteRejected,
    SubmissionAnswers,
    error_for_http_status,
)
from connectors.jsontext import parse_json
from connectors.newspaper.codes import (
    NOT_PROCESSED_CODES,
    UNCERTAIN_CODES,
    codes_in_text,
    meaning_of,
)
from core.errors import PostflowsError

if TYPE_CHECKING:  # httpx is loaded by the clients that hand its responses here
    import httpx

API = "newspaper"

NOT_PROCESSED_HTTP = frozenset({401})
"""HTTP statuses that mean "not processed" without a §7 code: 401, the bearer token was refused (the
client then sends the request once more with a new token)."""

SUBMISSION_ANSWERS = SubmissionAnswers(
    api=API,
    not_processed=(
        f"an answer below HTTP 500 without an id whose error array holds only message codes of §7 "
        f"({min(NOT_PROCESSED_CODES)}-{max(NOT_PROCESSED_CODES)}) other than "
        f"{' and '.join(sorted(UNCERTAIN_CODES))}; for statistics and the notice e-mail only when it is "
        "not a 2xx answer",
        *(f"HTTP {status} (token refused; sent once more with a new one)" for status in NOT_PROCESSED_HTTP),
        RATE_LIMITED_ANSWER,
        NEVER_SENT,
    ),
    uncertain=(
        "HTTP 5xx, whatever its body",
        *(f"an error with code {code} ({why})" for code, why in sorted(UNCERTAIN_CODES.items())),
        "an error whose code is not in §7, or a message without a code",
        "a 2xx statistics or notice e-mail answer with errors (a plain confirmation has no id to show that "
        "nothing was kept)",
        "an HTTP error answer (not 2xx) that carries an id",
        "a 2xx answer that cannot be read, or without an id and without errors",
        "any other HTTP error without §7 codes (403, 404, ...), a dropped connection",
    ),
    taken=(
        "a 2xx answer to an order or purchase that carries its id, with errors or without: recorded "
        "SUBMITTED with the id, its errors and warnings named with it, followed like any other, never posted "
        "again",
    ),
)

_ID_KEYS = ("id", "orderId", "purchaseId")
_ERROR_KEYS = ("errors", "error", "errorMessages")
_WARNING_KEYS = ("warnings", "warning", "warningMessages")
_MESSAGE_TEXT_KEYS = ("error", "message", "warning", "text", "description")
_MESSAGE_KEYS = frozenset({"error", "warning", "message", "text", "description", "resource", "code", "type"})


@dataclass(frozen=True)
class NewspaperMessage:
    """One error or warning message of a response: ``{error: string, resource: null}`` in the spec."""

    code: str | None
    message: str
    meaning: str = ""
    resource: Any = None
    codes: tuple[str, ...] = ()
    """Every code the message carries (its ``code`` field, then each §7 code in its text), ``code`` first."""

    @property
    def refuses(self) -> bool:
        """Whether the message certainly says "not processed": it carries a code, and each code it carries
        is one of :data:`NOT_PROCESSED_CODES`."""
        codes = self.codes or ((self.code,) if self.code else ())
        return bool(codes) and all(code in NOT_PROCESSED_CODES for code in codes)

    def __str__(self) -> str:
        suffix = f" ({self.meaning})" if self.meaning and self.meaning not in self.message else ""
        return f"{self.message}{suffix}"


@dataclass(frozen=True)
class ResponseMessages:
    """The error and warning arrays of one response body."""

    errors: tuple[NewspaperMessage, ...] = ()
    warnings: tuple[NewspaperMessage, ...] = ()


def certainly_refused(
    errors: Sequence[NewspaperMessage],
    *,
    status_code: int | None,
    remote_id: int | None = None,
    confirmation: bool = False,
) -> bool:
    """Whether an answer with ``errors`` certainly means that a submission was not processed: it carries no
    id, is not an HTTP 5xx, is not a 2xx answer to a request confirmed by plain text (``confirmation``:
    statistics, the notice e-mail), and every error refuses (:attr:`NewspaperMessage.refuses`)."""
    answered_2xx = status_code is None or 200 <= status_code < 300
    return (
        bool(errors)
        and remote_id is None
        and (status_code is None or status_code < 500)
        and not (confirmation and answered_2xx)
        and all(error.refuses for error in errors)
    )


class NewspaperRejected(RemoteRejected):
    """The service answered with error messages; ``code``/``message``/``meaning`` are of the first one.

    ``remote_id``: the id the answer carried all the same (an error answer that names an order or purchase);
    ``confirmation``: the request is confirmed by plain text, so a 2xx answer cannot show that nothing was
    kept. Whether it certainly means "not processed" is :func:`certainly_refused`.
    """

    def __init__(
        self,
        errors: Sequence[NewspaperMessage],
        *,
        warnings: Sequence[NewspaperMessage] = (),
        status_code: int | None = None,
        path: str = "",
        remote_id: int | None = None,
        confirmation: bool = False,
    ) -> None:
        first = errors[0]
        where = f" for {path}" if path else ""
        status = f" (HTTP {status_code})" if status_code is not None else ""
        named = f" (the answer carries id {remote_id})" if remote_id is not None else ""
        text = "; ".join(str(error) for error in errors)
        super().__init__(
            f"{API}: rejected{where}{status}{named}: {text}",
            api=API,
            code=first.code or "",
            meaning=first.meaning,
            retryable=False,
            not_processed=certainly_refused(
                errors, status_code=status_code, remote_id=remote_id, confirmation=confirmation
            ),
        )
        self.remote_message = first.message
        self.errors = tuple(errors)
        self.warnings = tuple(warnings)
        self.status_code = status_code
        self.remote_id = remote_id


class OrderInControl(ApiError):
    """Summary and sendings are not requested while the order's status is CONTROL (§3)."""

    def __init__(self, order_id: int | str, endpoint: str) -> None:
        super().__init__(
            f"{API}: order {order_id} is in status CONTROL; {endpoint} is not allowed",
            api=API,
            retryable=False,
        )
        self.order_id = order_id
        self.endpoint = endpoint


class UnexpectedResponse(ApiError):
    """A successful response whose body the client cannot interpret."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{API}: {message}", api=API, retryable=False)


class DocumentInvalid(ApiError):
    """A document that cannot be decoded."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{API}: {message}", api=API, retryable=False)


class DocumentSizeMismatch(DocumentInvalid):
    """The decoded document is not as long as its ``size`` says."""

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"document size mismatch: expected {expected} bytes, decoded {actual}")
        self.expected = expected
        self.actual = actual


@dataclass(frozen=True)
class FieldProblem:
    """One invalid field of a request body, named by its path in the spec's field names."""

    field_path: str
    message: str

    def __str__(self) -> str:
        return f"{self.field_path}: {self.message}"


class OrderInvalid(PostflowsError):
    """A submission (order, purchase, statistics, e-mail registration) failed validation; nothing was sent."""

    def __init__(self, what: str, problems: Iterable[FieldProblem]) -> None:
        self.problems = tuple(problems)
        listed = "; ".join(str(problem) for problem in self.problems)
        super().__init__(f"{what} is invalid: {listed}")


def parse_message(item: Any) -> NewspaperMessage | None:
    """One message from an array element: a ``{error, resource}`` object or a plain string. Its code is the
    element's ``code`` field, else the first §7 code of its text (:func:`codes_in_text`)."""
    if isinstance(item, str):
        text, field, resource = item, None, None
    elif isinstance(item, dict):
        text = next((item[key] for key in _MESSAGE_TEXT_KEYS if isinstance(item.get(key), str)), "")
        field = item.get("code")
        field = str(field).zfill(4) if isinstance(field, int | str) and str(field).isdigit() else None
        resource = item.get("resource")
    else:
        return None
    text = text.strip()
    if not text and field is None:
        return None
    codes = tuple(dict.fromkeys((*((field,) if field else ()), *codes_in_text(text))))
    code = codes[0] if codes else None
    return NewspaperMessage(
        code=code, message=text or code or "", meaning=meaning_of(code), resource=resource, codes=codes
    )


def _messages(value: Any) -> list[NewspaperMessage]:
    items = value if isinstance(value, list) else [value]
    return [message for item in items if (message := parse_message(item)) is not None]


def _looks_like_message(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and bool(item)
        and set(item) <= _MESSAGE_KEYS
        and any(isinstance(item.get(key), str) for key in _MESSAGE_TEXT_KEYS)
    )


def messages_in_body(body: Any) -> ResponseMessages:
    """Read the error and warning arrays of a decoded JSON body, accepting the plausible envelopes.

    Recognised: top-level ``errors``/``error`` and ``warnings``/``warning`` holding message objects or
    strings; a ``messages`` array whose items carry a ``type``/severity; a body that is itself one
    ``{error, resource}`` message; a top-level array of message objects.
    """
    errors: list[NewspaperMessage] = []
    warnings: list[NewspaperMessage] = []
    if isinstance(body, list):
        if body and all(_looks_like_message(item) for item in body):
            errors.extend(_messages(body))
        return ResponseMessages(tuple(errors), tuple(warnings))
    if not isinstance(body, dict):
        return ResponseMessages()
    for key in _ERROR_KEYS:
        if body.get(key) is not None and (key != "error" or not isinstance(body[key], bool)):
            errors.extend(_messages(body[key]))
    for key in _WARNING_KEYS:
        if body.get(key) is not None:
            warnings.extend(_messages(body[key]))
    if isinstance(body.get("messages"), list):
        for item in body["messages"]:
            message = parse_message(item)
            if message is None:
                continue
            kind = str(item.get("type") or item.get("severity") or "") if isinstance(item, dict) else ""
            (warnings if kind.upper().startswith("WARN") else errors).append(message)
    return ResponseMessages(tuple(errors), tuple(warnings))


def messages_in_response(response: httpx.Response) -> ResponseMessages:
    """The messages of a response whose body is JSON; other bodies (PDF, plain text) carry none."""
    if not response.content:
        return ResponseMessages()
    try:
        body = parse_json(response.content, api=API)
    except ValueError:  # not JSON, or nested too deep to read
        return ResponseMessages()
    return messages_in_body(body)


def id_in_body(body: Any) -> int | None:
    """The id of a created order or purchase in a decoded answer: ``{id: n}`` in the spec (``orderId`` and
    ``purchaseId`` are read too), a bare integer for purchases; a positive whole number, else None."""
    if isinstance(body, dict):
        body = next((body[key] for key in _ID_KEYS if body.get(key) is not None), None)
    if isinstance(body, str) and body.strip().isdigit():
        body = int(body.strip())
    if isinstance(body, bool) or not isinstance(body, int):
        return None
    return body if body > 0 else None


def id_in_response(response: httpx.Response) -> int | None:
    """The id an answer carries (:func:`id_in_body`): JSON, or a bare number as plain text."""
    try:
        body: Any = parse_json(response.content, api=API)
    except ValueError:  # not JSON, or nested too deep to read
        body = response.text
    return id_in_body(body)


def check_response(response: httpx.Response) -> None:
    """The ``check=`` of every newspaper read: an HTTP 200 with errors is a failure."""
    found = messages_in_response(response)
    if found.errors:
        raise _rejected(response, found)


def check_created(response: httpx.Response) -> None:
    """The ``check=`` of a POST that creates an order or purchase: a 2xx answer that carries an id took it,
    errors or not (the caller reads the errors with the id); one with errors and no id is a failure."""
    found = messages_in_response(response)
    if found.errors and id_in_response(response) is None:
        raise _rejected(response, found)


def check_confirmed(response: httpx.Response) -> None:
    """The ``check=`` of a POST confirmed by plain text (statistics, the notice e-mail): a 2xx answer with
    errors is a failure that cannot show that nothing was kept."""
    found = messages_in_response(response)
    if found.errors:
        raise _rejected(response, found, confirmation=True)


def _rejected(
    response: httpx.Response, found: ResponseMessages, *, confirmation: bool = False
) -> NewspaperRejected:
    return NewspaperRejected(
        found.errors,
        warnings=found.warnings,
        status_code=response.status_code,
        path=response.request.url.path,
        remote_id=id_in_response(response),
        confirmation=confirmation,
    )


def error_for_response(response: httpx.Response) -> ApiError:
    """The typed error for a non-success response: its error messages when it has some (except for the
    transient 5xx and 429, which stay retryable), otherwise the HTTP status mapping.
    """
    status = response.status_code
    if status < 500 and status != 429:
        found = messages_in_response(response)
        # Without a §7 code, 401/403 stay auth failures (an OAuth body like {"error": "invalid_token"})
        # and 404 stays NotFound (an unknown order, or a path spelling the service does not serve).
        coded = any(error.code for error in found.errors)
        if found.errors and (coded or status not in (401, 403, 404)):
            return _rejected(response, found)
    return error_for_http_status(response, api=API, not_processed=NOT_PROCESSED_HTTP)
