"""Errors of the commerce API (§7) and of signing in (§5), mapped from HTTP answers in one place.

    ApiError
    ├── RemoteRejected
    │   └── CommerceRejected         HTTP 400: the service refused the parameters (its message kept)
    └── HttpStatusError              (connectors.errors: 401/403 AuthFailed, 404 NotFound, 5xx ServerError)
        └── NotFound
            └── AddressNotFound      an address id that does not exist or is not the user's own
    PostflowsError
    └── LoginFailed                  (connectors.errors) signing in, or a user's saved tokens, failed

The error body's shape is not shown by the spec, so the message is read from the usual fields
(``message``, ``error_description``, ``detail``, ``code``, ``error``) and the body is otherwise quoted, cut
and scrubbed of secrets. An authentication failure names the scope its request asked a token for.

An answer certainly means "not processed" only when it is on :data:`SUBMISSION_ANSWERS`' list: HTTP 400
with a JSON error body (the parameters were refused), 401 or 403 (not authorized).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from connectors.errors import (
    NEVER_SENT,
    RATE_LIMITED_ANSWER,
    ApiError,
    AuthFailed,
    NotFound,
    RemoteRejected,
    SubmissionAnswers,
    error_for_http_status,
    quote_body,
)
from connectors.jsontext import json_of

if TYPE_CHECKING:  # httpx is loaded by the clients that hand its responses here
    import httpx

API = "commerce"

NOT_PROCESSED_HTTP = frozenset({401, 403})
"""HTTP statuses that certainly mean "not processed" whatever their body: the request was not authorized."""

SUBMISSION_ANSWERS = SubmissionAnswers(
    api=API,
    not_processed=(
        "HTTP 400 with a JSON error body (incomplete or invalid parameters)",
        *(
            f"HTTP {status} (not authorized; sent once more with a new token)"
            for status in sorted(NOT_PROCESSED_HTTP)
        ),
        RATE_LIMITED_ANSWER,
        NEVER_SENT,
    ),
    uncertain=(
        "HTTP 5xx",
        "a 2xx answer that cannot be read",
        "HTTP 400 without a JSON body, any other HTTP error (404, ...), a dropped connection",
    ),
)


class CommerceRejected(RemoteRejected):
    """The service refused the request's parameters (HTTP 400) and said why: ``detail`` is its message
    alone (quoted, scrubbed), or the meaning of the status when it gave none."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        meaning: str,
        status_code: int,
        detail: str = "",
        not_processed: bool = True,
    ) -> None:
        super().__init__(message, api=API, code=code, meaning=meaning, not_processed=not_processed)
        self.status_code = status_code
        self.detail = detail or meaning


class AddressNotFound(NotFound):
    """The address id does not exist or belongs to another user (the service does not say which)."""


def service_message(body: Any) -> tuple[str, str]:
    """(code, message) from an error body of any of the usual shapes; empty strings when absent."""
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return "", ""
    errors = body.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        return service_message(errors[0])
    code = next(
        (str(body[key]) for key in ("code", "error", "status") if body.get(key) not in (None, "")), ""
    )
    message = next(
        (
            str(body[key])
            for key in ("message", "error_description", "detail", "description", "title")
            if body.get(key) not in (None, "")
        ),
        "",
    )
    return code, message


def error_for_response(response: httpx.Response) -> ApiError:
    """The typed error for a non-success answer of the commerce API."""
    if response.status_code != 400:
        error = error_for_http_status(response, api=API, not_processed=NOT_PROCESSED_HTTP)
        return _naming_the_scope(error, response.request) if isinstance(error, AuthFailed) else error
    try:
        body = json_of(response, api=API)
    except ValueError:  # not JSON, or nested too deep to read
        body = None
    code, message = service_message(body)
    if not message:
        try:
            message = quote_body(response.text)
        except UnicodeDecodeError:
            message = ""
    meaning = "incomplete or invalid parameters"
    path = response.request.url.path
    detail = quote_body(message) or meaning
    text = f"{API}: HTTP 400 for {response.request.method} {path}: {detail}"
    return CommerceRejected(
        text,
        code=code or "400",
        meaning=meaning,
        status_code=400,
        detail=detail,
        not_processed=isinstance(body, dict | list),
    )


def _naming_the_scope(error: AuthFailed, request: httpx.Request) -> AuthFailed:
    """``error`` (just built, not raised yet) with the scope its request asked a token for: what to check in
    the client's registration. The token itself is never quoted."""
    from connectors.oauth import requested_scopes  # loaded already: its bearer auth sent the request

    scopes = requested_scopes(request)
    if scopes:
        error.args = (f"{error} (scope {' '.join(scopes)})", *error.args[1:])
    return error
