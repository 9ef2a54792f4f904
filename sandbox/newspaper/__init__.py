"""Sandbox of the newspaper API: every endpoint of the spec's §4, each behind the bearer check of its scope.

Mounted at ``/newspaper`` by the combined sandbox, so paths read ``/newspaper/logistics/newspaper/...``.
A missing, unknown or expired token is HTTP 401, a token without the endpoint's scope HTTP 403; a
``service_status`` fault answers HTTP 200 carrying its message code. ``/_sandbox/received`` shows the
statistics uploads and notice e-mail addresses that arrived (no token needed).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, FastAPI

from sandbox.answer_faults import Answer
from sandbox.auth import install_bearer_errors, require_scope
from sandbox.config import SandboxConfig
from sandbox.newspaper import masterdata, orders, purchases, statistics, structurefiles
from sandbox.newspaper.messages import (
    NewspaperRejection,
    install_message_errors,
    message,
    service_status_fault,
)
from sandbox.state import SandboxState

SCOPE_ORDERS = "SENDINGS_NEWSPAPER_SUBMISSION_ORDERS"
SCOPE_NEWSPAPERS = "SENDINGS_NEWSPAPER_SUBMISSION_NEWSPAPERS"
SCOPE_DISTRIBUTION = "SENDINGS_NEWSPAPER_SUBMISSION_DISTRIBUTION"
SCOPE_STATISTIC = "SENDINGS_NEWSPAPER_STATISTIC"
SCOPE_ADDRESS = "SENDINGS_NEWSPAPER_ADDRESS"


def create_app(config: SandboxConfig, state: SandboxState) -> FastAPI:
    """The newspaper API app for ``config``; its orders, purchases and uploads are kept in ``state``."""
    app = FastAPI(title="sandbox newspaper API", version="1")
    install_bearer_errors(app)
    install_message_errors(app)
    statistics_log = statistics.StatisticsLog(state)
    recipients = structurefiles.NoticeRecipients(state)

    def protect(router: APIRouter, scope: str) -> None:
        # The bearer check runs first, so a fault or a bad body never answers an unauthorised caller.
        app.include_router(
            router, dependencies=[Depends(require_scope(config, scope)), Depends(service_status_fault)]
        )

    protect(orders.create_router(config, state), SCOPE_ORDERS)
    protect(masterdata.create_newspapers_router(), SCOPE_NEWSPAPERS)
    protect(masterdata.create_distribution_router(), SCOPE_DISTRIBUTION)
    protect(statistics.create_router(statistics_log), SCOPE_STATISTIC)
    protect(purchases.create_router(config, state), SCOPE_ADDRESS)
    protect(structurefiles.create_router(config, recipients), SCOPE_ADDRESS)

    @app.get("/_sandbox/received")
    def received() -> dict[str, Any]:
        return {
            "statisticsUploads": [len(upload) for upload in statistics_log.uploads()],
            "structureFileEmails": recipients.addresses(),
        }

    return app


def accepted(answer: Answer) -> bool:
    """Whether the API accepted a request: a 2xx answer whose ``errors`` array, if any, is empty (§7: an
    HTTP 200 may still carry errors)."""
    if not 200 <= answer.status < 300:
        return False
    body = answer.json()
    return not (isinstance(body, dict) and body.get("errors"))


def processed_failure(value: Any, answered: bytes) -> tuple[int, bytes]:
    """What replaces a processed request's answer under a ``processed_status`` fault: HTTP 200 carrying
    message code ``value`` (``0000`` by default; a code the §7 table does not list is sent as given), as a
    ``service_status`` fault answers. A mapping ``{"http_status": 500, "code": "0999"}`` answers that HTTP
    status, with the code's message when one is given and a bare error body otherwise; with
    ``"with_id": true`` the answer also carries the id the request was given (``{"id": ..., "errors": ...}``:
    an order or purchase taken, and answered with an error all the same)."""
    if isinstance(value, dict):
        status = int(value.get("http_status", 200))
        code = value.get("code")
        errors = (
            [message(str(code).zfill(4))]
            if code is not None
            else [{"error": "internal error", "resource": None}]
        )
        extra = {"id": _given_id(answered)} if value.get("with_id") else None
        response = NewspaperRejection(status, errors, extra=extra).response()
    else:
        response = NewspaperRejection(200, [message(str(value or "0000").zfill(4))]).response()
    return response.status_code, bytes(response.body)


def _given_id(answered: bytes) -> Any:
    """The id of the processed request's real answer: ``{"id": n}`` of an order, the bare number of a
    purchase; None for an answer without one."""
    try:
        body = json.loads(answered)
    except ValueError:
        return None
    if isinstance(body, dict):
        return body.get("id")
    return body if isinstance(body, int) and not isinstance(body, bool) else None
