"""Messages of the newspaper sandbox: the spec's code table and the envelope errors and warnings travel in.

A message is ``{"error": "<4-digit code> <text>", "resource": null}`` (spec §7). The spec does not show
the arrays' structure, so the sandbox uses one envelope everywhere::

    {"errors": [<message>, ...], "warnings": [<message>, ...]}

Order submissions add it next to ``id`` (``id`` is ``null`` when the order was rejected). HTTP status of
a rejection: 200 for order content rules and ``0000`` (not available yet / service_status fault); 400 for
an unusable newspaper (``0001``, ``0002``, ``0003``, ``0100``), invalid statistics (``0200``) and malformed
requests (text ``Invalid request: ...``, no code); 404 for an unknown order or purchase (no code).
Warnings use sandbox codes ``0900`` (late delivery) and ``0901`` (weight missing), the spec naming none.
"""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from sandbox.faults import active_fault

BodyModel = TypeVar("BodyModel", bound=BaseModel)

MESSAGE_TEXTS: dict[str, str] = {
    "0000": "Function not available yet",
    "0001": "User has no authorization for the newspaper number",
    "0002": "Newspaper number not found",
    "0003": "Newspaper uses no sort file and cannot be transmitted via the API",
    "0004": "Cash payment required for this issue before processing",
    "0005": "Invalid date format or issue date in the past",
    "0006": "Postcode not permitted as acceptance point",
    "0007": "Issue number previously used for another issue",
    "0008": "Wrong issue number: 'Issue number to' must be greater than the issue number",
    "0009": "Issue number not permitted",
    "0020": "District bundles not possible for this newspaper",
    "0021": "Locality bundles not possible for this newspaper",
    "0022": "Other bundles not possible for this newspaper",
    "0023": "Unaddressed copies not possible",
    "0024": "Military copies not possible",
    "0030": "Permitted weight range for district bundles",
    "0031": "Permitted weight range for locality bundles",
    "0032": "Permitted weight range for other bundles",
    "0033": "Permitted weight range for unaddressed copies",
    "0034": "Permitted weight range for military copies",
    "0040": "Monday-Friday large print run not possible",
    "0041": "Saturday large print run not possible",
    "0042": "Permitted weight range for Monday-Friday large print runs",
    "0043": "Permitted weight range for Saturday large print runs",
    "0050": "Number of inserts greater than number of newspaper copies",
    "0051": "Insert description too long",
    "0052": "Insert lighter than the newspaper not possible",
    "0053": "Insert heavier than the newspaper not possible",
    "0054": "Permitted weight range for inserts lighter than the newspaper",
    "0055": "Permitted weight range for inserts heavier than the newspaper",
    "0070": "Unsorted copies not possible",
    "0071": "Unsorted military copies not possible",
    "0072": "Permitted weight range for unsorted copies",
    "0073": "Permitted weight range for unsorted military copies",
    "0100": "No distribution list available for this newspaper",
    "0101": "Distribution list invalid",
    "0102": "Gratis newspaper of location category A not possible",
    "0103": "Gratis newspaper of location category B not possible",
    "0104": "Gratis newspaper of location category C not possible",
    "0105": "Permitted weight range for gratis location category A",
    "0106": "Permitted weight range for gratis location category B",
    "0107": "Permitted weight range for gratis location category C",
    "0110": "Gratis insert lighter than the newspaper not possible",
    "0111": "Gratis insert heavier than the newspaper not possible",
    "0150": "Not a valid international product",
    "0151": "No country found for ISO code",
    "0152": "Comment too long",
    "0153": "Category/tariff group not possible for the ISO code",
    "0170": "No list price for Economy product permitted for the country",
    "0171": "No list price for Priority product permitted for the country",
    "0172": "No contract price for Economy product permitted for the country",
    "0173": "No contract price for Priority product permitted for the country",
    "0174": "Permitted weight range for international Economy (list price)",
    "0175": "Permitted weight range for international Priority (list price)",
    "0176": "Permitted weight range for international Economy (contract price)",
    "0177": "Permitted weight range for international Priority (contract price)",
    "0200": "Statistics cannot be processed",
    # Warnings: the spec names none, so the sandbox numbers its own in the 09xx range.
    "0900": "Late delivery registered; processing may be delayed",
    "0901": "Weight missing; complete it in the online dispatch-list service",
}


def message(code: str, detail: str | None = None) -> dict[str, Any]:
    """One message in the spec's shape; text is the code, its meaning and an optional detail."""
    text = f"{code} {MESSAGE_TEXTS.get(code, 'Message')}"
    if detail:
        text += f": {detail}"
    return {"error": text, "resource": None}


def weight_range_message(code: str, low: int, high: int) -> dict[str, Any]:
    """A weight-range violation naming the permitted range, e.g. ``0030 ...: 10 - 2000 g``."""
    return message(code, f"{low} - {high} g")


def envelope(
    errors: list[dict[str, Any]] | None = None, warnings: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The ``errors``/``warnings`` arrays every message-bearing answer carries."""
    return {"errors": list(errors or []), "warnings": list(warnings or [])}


class NewspaperRejection(Exception):
    """The endpoint answers with messages instead of its resource."""

    def __init__(
        self,
        status_code: int,
        errors: list[dict[str, Any]],
        warnings: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__("; ".join(str(item["error"]) for item in errors))
        self.status_code = status_code
        self.errors = errors
        self.warnings = warnings or []
        self.extra = extra or {}

    def response(self) -> JSONResponse:
        return JSONResponse({**self.extra, **envelope(self.errors, self.warnings)}, self.status_code)


def not_available(detail: str) -> NewspaperRejection:
    """HTTP 200 carrying ``0000`` — the resource exists but cannot be served in its current state."""
    return NewspaperRejection(200, [message("0000", detail)])


def not_found(detail: str) -> NewspaperRejection:
    """HTTP 404 for an unknown order or purchase id (the spec has no code for it, so none is given)."""
    return NewspaperRejection(404, [{"error": detail, "resource": None}])


def _invalid_body(problems: list[Any]) -> NewspaperRejection:
    errors = [
        {
            "error": "Invalid request: "
            + ".".join(str(part) for part in problem["loc"] if part != "body")
            + f": {problem['msg']}",
            "resource": None,
        }
        for problem in problems
    ]
    return NewspaperRejection(400, errors)


async def parse_body(request: Request, model: type[BodyModel]) -> tuple[BodyModel, Any]:
    """The JSON body read as ``model`` and as sent; HTTP 400 in the envelope when it is not one.

    Bodies are read in the handler rather than by FastAPI so the bearer check always comes first.
    """
    try:
        raw = await request.json()
    except ValueError:
        raise NewspaperRejection(
            400, [{"error": "Invalid request body: not JSON", "resource": None}]
        ) from None
    try:
        return model.model_validate(raw), raw
    except ValidationError as exc:
        raise _invalid_body(exc.errors()) from None


def service_status_fault(request: Request) -> None:
    """A ``service_status`` fault turns the answer into HTTP 200 carrying that message code as an error."""
    rule = active_fault(request)
    if rule is not None and rule.kind == "service_status":
        raise NewspaperRejection(200, [message(str(rule.value or "0000").zfill(4))])


def install_message_errors(app: FastAPI) -> None:
    """Answer rejections and malformed bodies (HTTP 400, uncoded message per problem) in the envelope."""

    async def rejected(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, NewspaperRejection)
        return exc.response()

    async def malformed(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return _invalid_body(list(exc.errors())).response()

    app.add_exception_handler(NewspaperRejection, rejected)
    app.add_exception_handler(RequestValidationError, malformed)
