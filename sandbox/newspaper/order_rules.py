"""The checks an order goes through, with the message codes of spec §7.

Newspaper-level refusals (``0001``, ``0002``, ``0003``, ``0100``) make the request unusable and are raised
as HTTP 400. Content rules (dates, issue numbers, bundle kinds, weight ranges, countries, comment length) are
collected, all of them, and returned as errors of an HTTP 200 answer. Warnings never stop an order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from sandbox.newspaper.messages import NewspaperRejection, message, weight_range_message
from sandbox.newspaper.order_models import (
    BasisInformation,
    GratisOrder,
    InternationalItem,
    StandardOrder,
)
from sandbox.newspaper.reference import (
    COMMENT_MAX_CHARS,
    CONTRACT_PRICE_COUNTRIES,
    INTERNATIONAL_RANGES,
    LIST_PRICE_COUNTRIES,
    ReferenceNewspaper,
    newspaper,
)

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# (bundle kind, count attribute, "not possible" code, weight-range code)
_NATIONAL_KINDS = (
    ("district", "count_mail_man", "0020", "0030"),
    ("locality", "count_city", "0021", "0031"),
    ("other", "count_rest", "0022", "0032"),
)
_GRATIS_CODES = {"A": ("0102", "0105"), "B": ("0103", "0106"), "C": ("0104", "0107")}


@dataclass
class Verdict:
    """Errors and warnings found for one order; errors are de-duplicated, order kept."""

    errors: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)

    def error(self, item: dict[str, Any]) -> None:
        if item not in self.errors:
            self.errors.append(item)

    def warning(self, item: dict[str, Any]) -> None:
        if item not in self.warnings:
            self.warnings.append(item)


def customer_newspaper(number: str | int) -> ReferenceNewspaper:
    """The customer's newspaper with this number, or a 400 rejection (``0002`` unknown, ``0001`` foreign)."""
    text = str(number).strip()
    paper = newspaper(int(text)) if text.isdigit() else None
    if paper is None:
        raise NewspaperRejection(400, [message("0002", text)])
    if not paper.own:
        raise NewspaperRejection(400, [message("0001", text)])
    return paper


def order_newspaper(number: str, *, gratis: bool) -> ReferenceNewspaper:
    """The newspaper an order names, refused (HTTP 400) when it cannot take this kind of order."""
    paper = customer_newspaper(number)
    if gratis and not paper.gratis:
        raise NewspaperRejection(400, [message("0100", number)])
    if not gratis and not paper.gratis and not paper.sort_file:
        raise NewspaperRejection(400, [message("0003", number)])
    return paper


def parse_delivery_date(text: str) -> date | None:
    """The date if ``text`` is strictly ``YYYY-MM-DD`` and a real date."""
    if not _ISO_DATE.fullmatch(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def check_basis(
    basis: BasisInformation, today: date, earlier_dates: dict[int, date], verdict: Verdict
) -> None:
    """Date, issue-number and late-delivery rules; ``earlier_dates`` maps the newspaper's used issues."""
    delivery = parse_delivery_date(basis.delivery_date)
    if delivery is None:
        verdict.error(message("0005", f"'{basis.delivery_date}' is not a date of the form YYYY-MM-DD"))
    elif delivery < today:
        verdict.error(message("0005", f"delivery date {delivery} is before {today}"))
    issue = basis.issue_number
    if issue.from_ < 1:
        verdict.error(message("0009", str(issue.from_)))
    if issue.to is not None and issue.to <= issue.from_:
        verdict.error(message("0008"))
    used = earlier_dates.get(issue.from_)
    if used is not None and delivery is not None and used != delivery:
        verdict.error(message("0007", f"issue {issue.from_} was delivered on {used}"))
    if basis.late_delivery:
        verdict.warning(message("0900"))


def _check_remark(remark: str, verdict: Verdict) -> None:
    if len(remark) > COMMENT_MAX_CHARS:
        verdict.error(message("0152", f"maximum {COMMENT_MAX_CHARS} characters"))


def _check_weight(weight: int | None, low_high: tuple[int, int], code: str, verdict: Verdict) -> None:
    if not weight:
        verdict.warning(message("0901"))
    elif not low_high[0] <= weight <= low_high[1]:
        verdict.error(weight_range_message(code, *low_high))


def check_standard(order: StandardOrder, paper: ReferenceNewspaper, verdict: Verdict) -> None:
    """Bundle kinds, weight ranges, countries and comments of a standard order."""
    for shipment in order.sorted_shipments:
        for kind, attribute, impossible, range_code in _NATIONAL_KINDS:
            if not getattr(shipment, attribute):
                continue
            if kind not in paper.weight_ranges:
                verdict.error(message(impossible, str(paper.number)))
            else:
                _check_weight(shipment.weight, paper.weight_ranges[kind], range_code, verdict)
        _check_remark(shipment.shipment_remark, verdict)
    for lane in order.international_shipments:
        country = lane.country.upper()
        if country not in LIST_PRICE_COUNTRIES:
            verdict.error(message("0151", lane.country))
            continue
        if not lane.product_label.strip():
            verdict.error(message("0150", "productLabel is empty"))
        price = "contract" if lane.contract_price else "list"
        lanes: tuple[tuple[list[InternationalItem], str, str], ...] = (
            (lane.economy_shipments, "0172", "0174" if price == "list" else "0176"),
            (lane.priority_shipments, "0173", "0175" if price == "list" else "0177"),
        )
        for items, no_contract, range_code in lanes:
            if items and price == "contract" and country not in CONTRACT_PRICE_COUNTRIES:
                verdict.error(message(no_contract, country))
                continue
            for item in items:
                _check_weight(item.weight, INTERNATIONAL_RANGES[price], range_code, verdict)
                _check_remark(item.shipment_remark, verdict)


def check_gratis(order: GratisOrder, paper: ReferenceNewspaper, verdict: Verdict) -> None:
    """Location categories, weight ranges and comments of a gratis order."""
    for shipment in order.gratis_delivery.gratis_shipments:
        impossible, range_code = _GRATIS_CODES[shipment.location_category]
        if shipment.location_category not in paper.weight_ranges:
            verdict.error(message(impossible, str(paper.number)))
        else:
            _check_weight(
                shipment.weight, paper.weight_ranges[shipment.location_category], range_code, verdict
            )
        _check_remark(shipment.shipment_remark, verdict)
