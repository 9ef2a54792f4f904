"""Order endpoints of the newspaper sandbox (scope SENDINGS_NEWSPAPER_SUBMISSION_ORDERS).

An accepted order goes through ``config.order_statuses`` spread evenly over its job, the last one reached
when the job is done: by default it stays ``LOADED``; ``LOADED,CONTROL,DONE`` is CONTROL from halfway and
DONE at the end. The spec names only LOADED and CONTROL, so any other name is a sandbox assumption. A
``job_outcome`` fault names the status the order ends in instead (it takes the last status's place, or
follows a sequence of one). Summary and sendings are refused in CONTROL with ``0000`` on HTTP 200, as is
the corrected order before the job is done.
The delivery note is the document JSON by default and raw PDF bytes when ``Accept`` prefers
``application/pdf``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from sandbox.config import SandboxConfig
from sandbox.guesses import is_other, play
from sandbox.newspaper.jobs import Job, iso_datetime, start_job, today
from sandbox.newspaper.messages import envelope, message, not_available, not_found, parse_body
from sandbox.newspaper.order_models import GratisOrder, OrderBase, StandardOrder
from sandbox.newspaper.order_rules import (
    Verdict,
    check_basis,
    check_gratis,
    check_standard,
    order_newspaper,
    parse_delivery_date,
)
from sandbox.newspaper.pdf import document_body, render_pdf
from sandbox.newspaper.reference import ReferenceNewspaper, circulation
from sandbox.state import SandboxState

OrderKind = Literal["standard", "gratis"]
FIRST_ORDER_ID = 7_000_001
_WEIGHTED_LISTS = ("sortedShipments", "economyShipments", "priorityShipments", "gratisShipments")

# Under the other answers an order for this newspaper waits for a cash payment: kept, answered 0004 alone.
CASH_PAYMENT_NEWSPAPER = 8004


@dataclass
class OrderRecord:
    """One accepted order: what was sent, what was released, and its job."""

    order_id: int
    kind: OrderKind
    paper: ReferenceNewspaper
    sent: dict[str, Any]
    corrected: dict[str, Any]
    issue_from: int
    delivery_date: date
    job: Job
    statuses: tuple[str, ...]

    def status(self, now: float) -> tuple[str, float]:
        """(statusValue, epoch second the status was entered): of ``statuses`` (n of them), the i-th is
        entered when the job has come i/(n-1) of the way."""
        last = len(self.statuses) - 1
        if last == 0:
            return self.statuses[0], self.job.started_at
        if self.job.duration <= 0:
            reached = last
        else:
            # Whole parts of the job, counted without a fraction: no rounding moves a status off its second.
            reached = int((now - self.job.started_at) * last // self.job.duration)
            reached = min(last, max(0, reached))
        return self.statuses[reached], self.job.at(reached / last)


def played_statuses(configured: tuple[str, ...], outcome: str | None) -> tuple[str, ...]:
    """The statuses an order goes through: the configured ones, ending in ``outcome`` when a ``job_outcome``
    fault forced one (in the last status's place, or after a sequence of one status)."""
    if outcome is None:
        return configured
    if len(configured) == 1:
        return (*configured, outcome)
    return (*configured[:-1], outcome)


def _corrected(sent: dict[str, Any], paper: ReferenceNewspaper) -> dict[str, Any]:
    """The order as released: missing weights completed with the newspaper's standard weight, missing
    gratis counts with the distribution list's circulation."""
    released = copy.deepcopy(sent)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _WEIGHTED_LISTS and isinstance(value, list):
                    for item in value:
                        if isinstance(item, dict):
                            if not item.get("weight"):
                                item["weight"] = paper.standard_weight
                            if key == "gratisShipments" and item.get("count") is None:
                                item["count"] = circulation(paper, str(item.get("locationCategory")))
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(released)
    return released


def sendings(order: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """National, international and gratis items of a released order (shape not in the spec)."""
    national = order.get("nationalDelivery") or {}
    sorted_shipments = (national.get("sortedDelivery") or {}).get("sortedShipments") or []
    international = (order.get("internationalDelivery") or {}).get("internationalShipments") or []
    gratis = (order.get("gratisDelivery") or {}).get("gratisShipments") or []
    return {
        "nationalItems": [
            {
                "product": "SORTED",
                "weight": item.get("weight"),
                "countMailMan": item.get("countMailMan", 0),
                "countCity": item.get("countCity", 0),
                "countRest": item.get("countRest", 0),
                "count": item.get("countMailMan", 0) + item.get("countCity", 0) + item.get("countRest", 0),
            }
            for item in sorted_shipments
        ],
        "internationalItems": [
            {
                "country": lane.get("country"),
                "product": product,
                "weight": item.get("weight"),
                "count": item.get("count", 0),
            }
            for lane in international
            for product, key in (("ECONOMY", "economyShipments"), ("PRIORITY", "priorityShipments"))
            for item in lane.get(key) or []
        ],
        "gratisItems": [
            {
                "locationCategory": item.get("locationCategory"),
                "weight": item.get("weight"),
                "count": item.get("count", 0),
            }
            for item in gratis
        ],
    }


def total_copies(order: dict[str, Any]) -> int:
    """All copies of an order: national, international and gratis."""
    items = sendings(order)
    return sum(int(item["count"] or 0) for group in items.values() for item in group)


def prefers_pdf(accept: str) -> bool:
    """True when the ``Accept`` header ranks ``application/pdf`` above JSON (JSON wins ties and absence)."""
    weights: dict[str, float] = {}
    for part in accept.split(","):
        media, *params = (piece.strip() for piece in part.split(";"))
        quality = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        weights[media.lower()] = max(quality, weights.get(media.lower(), 0.0))
    pdf = weights.get("application/pdf", 0.0)
    json_like = max(weights.get("application/json", 0.0), weights.get("*/*", 0.0) * 0.99)
    return pdf > 0 and pdf > json_like


class OrderBook:
    """The orders accepted by one sandbox app, kept in its state."""

    def __init__(self, state: SandboxState) -> None:
        self._state = state
        self._orders = state.table("newspaper.orders")
        # (newspaper number, issue number, delivery date) of every order, so checking a new order's issue
        # number reads no order bodies.
        self._issues = state.table("newspaper.order_issues")

    def add(self, make: Callable[[int], OrderRecord]) -> OrderRecord:
        with self._state.atomic():
            record = make(self._state.next_id("newspaper.order", FIRST_ORDER_ID))
            self._orders.put(record.order_id, record)
            issue = (record.paper.number, record.issue_from, record.delivery_date)
            self._issues.put(record.order_id, issue)
            return record

    def get(self, order_id: int, kind: OrderKind | None = None) -> OrderRecord:
        record: OrderRecord | None = self._orders.get(order_id)
        if record is None:
            raise not_found(f"Order {order_id} not found")
        if kind is not None and record.kind != kind:
            raise not_found(f"Order {order_id} is not a {kind} order")
        return record

    def issue_dates(self, paper: ReferenceNewspaper) -> dict[int, date]:
        """Delivery date per issue number of the orders already accepted for ``paper``."""
        issues: list[tuple[int, int, date]] = self._issues.values()
        return {issue: delivered for number, issue, delivered in issues if number == paper.number}


def create_router(config: SandboxConfig, state: SandboxState) -> APIRouter:
    """The order endpoints, keeping orders in ``state``; the caller adds the scope check."""
    router = APIRouter(prefix="/logistics/newspaper/submission/v1/orders")
    book = OrderBook(state)
    _add_submission_routes(router, config, book)
    _add_order_views(router, config, book)
    return router


def _add_submission_routes(router: APIRouter, config: SandboxConfig, book: OrderBook) -> None:
    """POST ``/standard`` and ``/gratis``: an order checked, and kept in ``book`` when it passes."""

    async def submit(request: Request, kind: OrderKind) -> JSONResponse:
        model: type[OrderBase] = GratisOrder if kind == "gratis" else StandardOrder
        order, raw = await parse_body(request, model)
        paper = order_newspaper(order.basis_information.newspaper_number, gratis=kind == "gratis")
        verdict = Verdict()
        check_basis(order.basis_information, today(config), book.issue_dates(paper), verdict)
        if isinstance(order, GratisOrder):
            check_gratis(order, paper, verdict)
        elif isinstance(order, StandardOrder):
            check_standard(order, paper, verdict)
        delivery = parse_delivery_date(order.basis_information.delivery_date)
        # newspaper.taken-with-errors, the other way: an order refused for its content is taken all the same.
        taken_anyway = bool(verdict.errors) and is_other(request) and delivery is not None
        if verdict.errors and not taken_anyway:
            return JSONResponse({"id": None, **envelope(verdict.errors, verdict.warnings)})
        if taken_anyway:
            play(request, "newspaper.taken-with-errors")
        job = start_job(request, config)
        assert delivery is not None  # check_basis refused any other
        record = book.add(
            lambda order_id: OrderRecord(
                order_id=order_id,
                kind=kind,
                paper=paper,
                sent=raw,
                corrected=_corrected(raw, paper),
                issue_from=order.basis_information.issue_number.from_,
                delivery_date=delivery,
                job=job,
                statuses=played_statuses(config.order_statuses, job.forced_outcome),
            )
        )
        if is_other(request) and paper.number == CASH_PAYMENT_NEWSPAPER:
            # newspaper.not-processed-codes, the other way: the order is kept, waiting for its payment, and
            # answered 0004 without its id.
            play(request, "newspaper.not-processed-codes")
            return JSONResponse({"id": None, **envelope([message("0004")], verdict.warnings)})
        return JSONResponse({"id": record.order_id, **envelope(verdict.errors, verdict.warnings)})

    @router.post("/standard")
    async def submit_standard_order(request: Request) -> JSONResponse:
        return await submit(request, "standard")

    @router.post("/gratis")
    async def submit_gratis_order(request: Request) -> JSONResponse:
        return await submit(request, "gratis")


def _add_order_views(router: APIRouter, config: SandboxConfig, book: OrderBook) -> None:
    """The GET endpoints of an order in ``book``: its delivery note, status, summary, sendings, and the
    order as sent and as corrected."""
    _add_order_copies(router, config, book)

    @router.get("/{order_id}/delivery-note", response_model=None)
    def delivery_note(order_id: int, request: Request) -> Response | dict[str, Any]:
        record = book.get(order_id)
        pdf = render_pdf(_note_lines(record, "Delivery note"))
        if prefers_pdf(request.headers.get("accept", "")):
            return Response(pdf, media_type="application/pdf")
        body = document_body(pdf)
        if record.kind == "gratis":
            body["partialDeliveryNotes"] = [
                {"locationCategory": category, **document_body(render_pdf(_note_lines(record, title)))}
                for category, title in _partial_notes(record)
            ]
        return body

    @router.get("/{order_id}/status")
    def order_status(order_id: int) -> dict[str, Any]:
        value, since = book.get(order_id).status(config.clock())
        return {"statusValue": value, "statusDate": iso_datetime(since)}

    def released_view(order_id: int, what: str) -> OrderRecord:
        record = book.get(order_id)
        value, _ = record.status(config.clock())
        if value == "CONTROL":
            raise not_available(f"{what} of order {order_id} is not allowed in status CONTROL")
        return record

    @router.get("/{order_id}/summary")
    def order_summary(order_id: int) -> dict[str, Any]:
        record = released_view(order_id, "summary")
        return {
            "issueDate": record.delivery_date.isoformat(),
            "issueNumber": {"from": record.issue_from},
            "barcodeNumber": f"99{record.paper.number:06d}{record.order_id:010d}",
            "totalNewspaper": total_copies(record.corrected),
            "statusValue": record.status(config.clock())[0],
            "difference": record.corrected != record.sent,
        }

    @router.get("/{order_id}/sendings")
    def order_sendings(order_id: int) -> dict[str, Any]:
        return sendings(released_view(order_id, "sendings").corrected)


def _add_order_copies(router: APIRouter, config: SandboxConfig, book: OrderBook) -> None:
    """The GET endpoints of an order in ``book`` as sent and as corrected (once released)."""

    def corrected_order(order_id: int, kind: OrderKind) -> dict[str, Any]:
        record = book.get(order_id, kind)
        if record.job.fraction(config.clock()) < 1.0:
            raise not_available(f"order {order_id} is not released yet")
        return record.corrected

    @router.get("/{order_id}/original-standard-order")
    def original_standard_order(order_id: int) -> dict[str, Any]:
        return book.get(order_id, "standard").sent

    @router.get("/{order_id}/corrected-standard-order")
    def corrected_standard_order(order_id: int) -> dict[str, Any]:
        return corrected_order(order_id, "standard")

    @router.get("/{order_id}/original-gratis-order")
    def original_gratis_order(order_id: int) -> dict[str, Any]:
        return book.get(order_id, "gratis").sent

    @router.get("/{order_id}/corrected-gratis-order")
    def corrected_gratis_order(order_id: int) -> dict[str, Any]:
        return corrected_order(order_id, "gratis")


def _note_lines(record: OrderRecord, title: str) -> list[str]:
    return [
        title,
        f"Order {record.order_id}",
        f"Newspaper {record.paper.number} {record.paper.title}",
        f"Issue {record.issue_from}, delivery date {record.delivery_date.isoformat()}",
        f"Copies {total_copies(record.corrected)}",
    ]


def _partial_notes(record: OrderRecord) -> list[tuple[str, str]]:
    categories = sorted({str(item["locationCategory"]) for item in sendings(record.corrected)["gratisItems"]})
    return [(category, f"Partial delivery note, location category {category}") for category in categories]
