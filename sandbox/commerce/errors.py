"""Error answers of the commerce sandbox (§7): HTTP status plus a JSON body ``{"code", "message"}``.

The spec shows only that error bodies are JSON; the sandbox answers a short upper-case ``code`` and a
``message`` naming the parameter or field at fault. Bearer refusals (401/403) keep RFC 6750's
``WWW-Authenticate`` challenge and carry ``error``/``error_description`` beside ``code``/``message``, so a
client reading either shape understands them. A ``service_status`` fault makes an endpoint answer HTTP
``value`` (500 by default) with this body once the bearer check has passed.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from sandbox.auth import BearerRefused, bearer_refused_response
from sandbox.faults import active_fault

INVALID_ID = "INVALID_ID"
INVALID_ADDRESS = "INVALID_ADDRESS_PARAMETER"
INVALID_SEARCH = "INVALID_SEARCH_PARAMETER"
INVALID_PARAMETER = "INVALID_PARAMETER"
NOT_FOUND = "NOT_FOUND"
NO_RESULTS = "NO_RESULTS"
INTERNAL_ERROR = "INTERNAL_ERROR"

_STATUS_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: NOT_FOUND,
    405: "METHOD_NOT_ALLOWED",
    500: INTERNAL_ERROR,
    502: "BAD_GATEWAY",
    503: "SERVICE_UNAVAILABLE",
}


class CommerceError(Exception):
    """An endpoint refuses or fails the request with ``status_code`` and the body ``{code, message}``."""

    def __init__(self, status_code: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code
        self.message = message

    def body(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status_code)


def status_code_name(status_code: int) -> str:
    """The ``code`` of an error body the sandbox answers for a bare HTTP status."""
    return _STATUS_CODES.get(status_code, f"HTTP_{status_code}")


def error_bytes(status_code: int, message: str) -> bytes:
    """The JSON body of an error answer with ``status_code``."""
    return json.dumps({"code": status_code_name(status_code), "message": message}).encode()


def install_commerce_errors(app: FastAPI) -> None:
    """Make ``app`` answer every refusal (its own, bearer, unknown path, bad parameter) as §7 describes."""

    async def commerce(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, CommerceError)
        return exc.response()

    async def bearer(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, BearerRefused)
        response = bearer_refused_response(exc)
        body: dict[str, Any] = {
            "code": status_code_name(exc.status_code),
            "message": exc.description,
            "error": exc.error,
            "error_description": exc.description,
        }
        return JSONResponse(body, status_code=exc.status_code, headers=_challenge(response))

    async def http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        message = exc.detail if isinstance(exc.detail, str) else "request refused"
        return CommerceError(exc.status_code, status_code_name(exc.status_code), message).response()

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        fields = ", ".join(".".join(str(part) for part in error["loc"][1:]) for error in exc.errors())
        return CommerceError(400, INVALID_PARAMETER, f"invalid parameter: {fields}").response()

    app.add_exception_handler(CommerceError, commerce)
    app.add_exception_handler(BearerRefused, bearer)
    app.add_exception_handler(HTTPException, http)
    app.add_exception_handler(RequestValidationError, invalid)


def _challenge(response: JSONResponse) -> dict[str, str]:
    return {"WWW-Authenticate": response.headers["www-authenticate"]}


def service_status_fault(request: Request) -> None:
    """Dependency run after the bearer check: a ``service_status`` fault answers its HTTP status."""
    rule = active_fault(request)
    if rule is not None and rule.kind == "service_status":
        status_code = int(rule.value or 500)
        raise CommerceError(status_code, status_code_name(status_code), f"injected HTTP {status_code}")


def processed_failure(value: Any, answered: bytes) -> tuple[int, bytes]:
    """What replaces a processed request's answer under a ``processed_status`` fault: HTTP ``value``
    (500 by default) with the commerce error body; the request's changes are kept."""
    status_code = int(value or 500)
    return status_code, error_bytes(status_code, f"injected HTTP {status_code} after processing")
