"""What a service answered, as ``postflows doctor --live`` reports it: the raw answers a response hook kept
for one HTTP client, and a short description of each (its HTTP status, the kind of its body, the ``Status``
or OAuth error it carries) that never quotes a body.
"""

from __future__ import annotations

from typing import Any

import httpx

from connectors.jsontext import parse_json

SIGN_IN_STATUSES = range(101, 106)
"""The address service's Status values of a refused sign-in (§7, 101-105)."""


class Answers:
    """Every answer one HTTP client received, kept by its response hook (:meth:`keep`) with the body still
    to come; the client reads the body, after which its kind can be told."""

    def __init__(self) -> None:
        self._kept: list[httpx.Response] = []

    async def keep(self, response: httpx.Response) -> None:
        self._kept.append(response)

    def last(self, method: str, path_end: str) -> httpx.Response | None:
        """The newest answer to a ``method`` request whose path ends in ``path_end``; None when none came."""
        for response in reversed(self._kept):
            request = response.request
            if request.method == method and request.url.path.endswith(path_end):
                return response
        return None


def json_payload(response: httpx.Response) -> Any:
    """The answer's JSON, or None when its body is not JSON (or was not read)."""
    try:
        content = response.content
    except httpx.ResponseNotRead:
        return None
    if not content.strip():
        return None
    try:
        return parse_json(content, api="doctor")
    except ValueError:
        return None


def status_in(response: httpx.Response, *, wrapped: bool = True) -> int | None:
    """The address service's ``Status`` the answer carries: at its top level or (``wrapped``) inside its one
    ``…Result`` object; None when it carries none."""
    payload = json_payload(response)
    if not isinstance(payload, dict):
        return None
    places = [payload] + ([value for value in payload.values() if isinstance(value, dict)] if wrapped else [])
    for place in places:
        status = place.get("Status")
        if isinstance(status, int) and not isinstance(status, bool):
            return status
        if isinstance(status, str) and status.isdigit():
            return int(status)
    return None


def oauth_error(response: httpx.Response) -> str | None:
    """The RFC 6749 ``error`` code of a token endpoint's answer, or None when it carries none."""
    payload = json_payload(response)
    error = payload.get("error") if isinstance(payload, dict) else None
    return error if isinstance(error, str) and error else None


def is_sign_in_refusal(response: httpx.Response) -> bool:
    """Whether an address-service answer refuses the sign-in: a Status of 101-105, or HTTP 401 or 403."""
    return status_in(response) in SIGN_IN_STATUSES or response.status_code in (401, 403)


def status_line(response: httpx.Response | None) -> str:
    """``HTTP <status>``, or "no answer"."""
    return "no answer" if response is None else f"HTTP {response.status_code}"


def describe(response: httpx.Response | None) -> str:
    """``HTTP <status>, <body kind>``: an empty body, JSON with its ``Status`` or OAuth ``error``, a JSON
    object (its first keys) or array, or the size and type of anything else; never the body itself."""
    if response is None:
        return "no answer"
    return f"HTTP {response.status_code}, {_body_kind(response)}"


def _body_kind(response: httpx.Response) -> str:
    try:
        content = response.content
    except httpx.ResponseNotRead:
        return "body not read"
    media_type = response.headers.get("content-type", "").split(";", 1)[0].strip() or "no content type"
    if not content.strip():
        return f"empty body ({media_type})"
    payload = json_payload(response)
    if payload is None:
        return f"{len(content)} bytes of {media_type}, not JSON"
    status = status_in(response)
    if status is not None:
        return f"JSON with Status {status}"
    error = oauth_error(response)
    if error is not None:
        return f"JSON with OAuth error {error!r}"
    if isinstance(payload, dict):
        keys = ", ".join(str(key) for key in list(payload)[:4]) + (", …" if len(payload) > 4 else "")
        return f"JSON object ({keys})" if payload else "JSON object, empty"
    if isinstance(payload, list):
        return f"JSON array of {len(payload)}"
    return f"JSON {type(payload).__name__}"
