"""Errors of the commerce API (§7) and of signing in (§5), mapped from HTTP answers in one place.

    ApiError
    ├── RemoteRejected
    │   └── CommerceRejected         HTTP 400: the service refused the parameters (its message kept)
    └── HttpStatusError              (connectors.errors: 401/403 AuthFailed, 404 NotFound, 5xx ServerError)
        ├── NotFound
        │   └── AddressNotFound      an address id that does not exist or is not the user's own
        └── GuessedPathNotFound      404/405 at a path that is a setting, where §7 does not list the answer

What an answer means depends on the endpoint group of §7 that the request belongs to: each request carries
its :class:`EndpointGroup` (``request.extensions``, see :data:`ENDPOINT_EXTENSION`), never read from its
address. A 400 certainly means "not processed" only where the group's row lists 400 (incomplete or invalid
parameters); elsewhere (pickup users; labels and return orders, which have no row) it leaves the outcome
unknown. A 404 where the group's row does not list one, or a 405, from a path the specification does not
show (a setting) most likely means that the service has nothing there: the request was not processed, and
the error names the setting to correct.

The error body's shape is not shown by the spec, so the message is read from the usual fields
(``message``, ``error_description``, ``detail``, ``code``, ``error``) and the body is otherwise quoted, cut
and scrubbed of secrets. An authentication failure names the scope its request asked a token for.
:data:`SUBMISSION_ANSWERS` lists the answers that certainly mean "not processed", from the same data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from connectors.errors import (
    NEVER_SENT,
    RATE_LIMITED_ANSWER,
    ApiError,
    AuthFailed,
    HttpStatusError,
    NotFound,
    RemoteRejected,
    SubmissionAnswers,
    error_for_http_status,
    quote_body,
)
from connectors.jsontext import json_of
from connectors.paths import PATH_SETTINGS

if TYPE_CHECKING:  # httpx is loaded by the clients that hand its responses here
    import httpx

API = "commerce"

NOT_PROCESSED_HTTP = frozenset({401, 403})
"""HTTP statuses that certainly mean "not processed" whatever their body: the request was not authorized."""

ENDPOINT_EXTENSION = "postflows.commerce_endpoint_group"
"""Where a request records its :class:`EndpointGroup` (``request.extensions``), so its answer is read by what
the request was, never by comparing its address."""


@dataclass(frozen=True)
class EndpointGroup:
    """One endpoint group of §7 and what its answers mean.

    Attributes:
        name: the group as the documentation names it.
        codes: the HTTP statuses its row of §7 lists; empty where §7 has no row for it.
        path_setting: the variable its path comes from where that path is a setting (the specification
            shows none, or the service is known to serve it elsewhere); None where the specification's
            path is used as it is.
        method_setting: the variable of its method, where the specification shows none either.
    """

    name: str
    codes: frozenset[int] = frozenset()
    path_setting: str | None = None
    method_setting: str | None = None

    @property
    def refusal_not_processed(self) -> bool:
        """Whether a 400 with a JSON error body certainly means "not processed": §7 lists 400 ("incomplete or
        invalid parameters") for the group."""
        return 400 in self.codes

    def path_missing(self, status: int) -> bool:
        """Whether ``status`` says that nothing is at the group's path (or takes its method): a 404 where §7
        does not list one for the group, or a 405, at a path that is a setting."""
        if self.path_setting is None:
            return False
        return status == 405 or (status == 404 and 404 not in self.codes)


PERSONAL_ADDRESSES = EndpointGroup("users/current/addresses", frozenset({200, 400, 403, 404, 500}))
VALIDATION = EndpointGroup("addresses/validation", frozenset({200, 400, 403, 500}))
AUTOCOMPLETE = EndpointGroup("zips/streets/houses", frozenset({200, 400, 403, 404, 500}))
DELIVERY = EndpointGroup("deliverabilities and options", frozenset({200, 403, 404, 500}))
SAME_DAY = EndpointGroup(
    "same-day acceptance points",
    frozenset({400, 401, 403, 404, 500}),
    path_setting=PATH_SETTINGS["same_day"],
)
PICKUP_USERS = EndpointGroup("pickup users", frozenset({200, 403, 500}), path_setting=PATH_SETTINGS["pickup"])
PICKUP_POINTS = EndpointGroup(
    "pickup points",
    path_setting=PATH_SETTINGS["pickup_points"],
    method_setting=PATH_SETTINGS["pickup_points_method"],
)
ADDRESS_LABELS = EndpointGroup("address labels", path_setting=PATH_SETTINGS["barcode"])
RETURN_ORDERS = EndpointGroup("return orders", path_setting=PATH_SETTINGS["return_order"])
ENDPOINT_GROUPS = (
    PERSONAL_ADDRESSES,
    VALIDATION,
    AUTOCOMPLETE,
    DELIVERY,
    SAME_DAY,
    PICKUP_USERS,
    PICKUP_POINTS,
    ADDRESS_LABELS,
    RETURN_ORDERS,
)


def _names(groups: tuple[EndpointGroup, ...]) -> str:
    return ", ".join(group.name for group in groups)


SUBMISSION_ANSWERS = SubmissionAnswers(
    api=API,
    not_processed=(
        "HTTP 400 with a JSON error body where §7 lists 400 (incomplete or invalid parameters): "
        + _names(tuple(group for group in ENDPOINT_GROUPS if group.refusal_not_processed)),
        *(
            f"HTTP {status} (not authorized; sent once more with a new token)"
            for status in sorted(NOT_PROCESSED_HTTP)
        ),
        "HTTP 404 where §7 does not list it, or 405, at a path that is a setting ("
        + _names(tuple(group for group in ENDPOINT_GROUPS if group.path_setting))
        + "): nothing is there; the run ends naming the setting",
        RATE_LIMITED_ANSWER,
        NEVER_SENT,
    ),
    uncertain=(
        "HTTP 400 where §7 lists none: "
        + _names(tuple(group for group in ENDPOINT_GROUPS if not group.refusal_not_processed)),
        "HTTP 5xx",
        "a 2xx answer that cannot be read",
        "HTTP 400 without a JSON body, any other HTTP error, a dropped connection",
    ),
)


class CommerceRejected(RemoteRejected):
    """The service refused the request's parameters (HTTP 400) and said why: ``detail`` is its message
    alone (quoted, scrubbed), or the meaning of the status when it gave none. ``not_processed`` only where
    the request's endpoint group lists 400 (:attr:`EndpointGroup.refusal_not_processed`)."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        meaning: str,
        status_code: int,
        detail: str = "",
        not_processed: bool = False,
    ) -> None:
        super().__init__(message, api=API, code=code, meaning=meaning, not_processed=not_processed)
        self.status_code = status_code
        self.detail = detail or meaning


class AddressNotFound(NotFound):
    """The address id does not exist or belongs to another user (the service does not say which)."""


class GuessedPathNotFound(HttpStatusError):
    """HTTP 404 (where §7 does not list one for the group) or 405 at a path that is a setting: the service
    most likely has nothing there, so the request was not processed and no other request to that path can
    succeed. ``setting`` names the variable of the path."""

    def __init__(self, message: str, *, api: str, status_code: int, setting: str) -> None:
        super().__init__(message, api=api, status_code=status_code, not_processed=True)
        self.setting = setting


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


def endpoint_group(request: httpx.Request) -> EndpointGroup | None:
    """The endpoint group ``request`` recorded; None when it recorded none."""
    group = request.extensions.get(ENDPOINT_EXTENSION)
    return group if isinstance(group, EndpointGroup) else None


def error_for_response(response: httpx.Response) -> ApiError:
    """The typed error for a non-success answer of the commerce API, read by the request's endpoint group
    (an unknown group reads as one without a row in §7: a 400 leaves the outcome unknown)."""
    request = response.request
    group = endpoint_group(request)
    if group is not None and group.path_missing(response.status_code):
        return _path_missing(response, group)
    if response.status_code != 400:
        error = error_for_http_status(response, api=API, not_processed=NOT_PROCESSED_HTTP)
        return _naming_the_scope(error, request) if isinstance(error, AuthFailed) else error
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
    detail = quote_body(message) or meaning
    text = f"{API}: HTTP 400 for {request.method} {request.url.path}: {detail}"
    return CommerceRejected(
        text,
        code=code or "400",
        meaning=meaning,
        status_code=400,
        detail=detail,
        not_processed=group is not None and group.refusal_not_processed and isinstance(body, dict | list),
    )


def _path_missing(response: httpx.Response, group: EndpointGroup) -> GuessedPathNotFound:
    """The error of a 404 or 405 that says nothing is at ``group``'s path (or takes its method)."""
    request = response.request
    setting = group.path_setting or ""
    status = response.status_code
    what = f"takes no {request.method}" if status == 405 else "has nothing"
    fix = f"{setting} to the service's path"
    if status == 405 and group.method_setting:
        fix = f"{setting} and {group.method_setting} to the service's path and method"
    try:
        said = quote_body(response.text, 120)
    except UnicodeDecodeError:
        said = ""
    text = (
        f"{API}: HTTP {status} {response.reason_phrase} for {request.method} {request.url.path}"
        + (f" ({said})" if said else "")
        + f": the service {what} at this path, so the request was not processed; where the {group.name} "
        f"are is a setting: set {fix}"
    )
    return GuessedPathNotFound(text, api=API, status_code=status, setting=setting)


def _naming_the_scope(error: AuthFailed, request: httpx.Request) -> AuthFailed:
    """``error`` (just built, not raised yet) with the scope its request asked a token for: what to check in
    the client's registration. The token itself is never quoted."""
    from connectors.oauth import requested_scopes  # loaded already: its bearer auth sent the request

    scopes = requested_scopes(request)
    if scopes:
        error.args = (f"{error} (scope {' '.join(scopes)})", *error.args[1:])
    return error
