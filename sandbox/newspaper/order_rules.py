"""The checks an order goes through, with the message codes of spec §7.

Newspaper-level refusals (``0001``, ``0002``, ``0003``, ``0100``) make the request unusable and are raised
as HTTP 400. Content rules (dates, issue numbers, bundle kinds, weight ranges, countries, comment length) are
collected, all of them, and returned as errors of an HTTP 200 answer. Warnings never stop an order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from sandbox.newspaper.messages import NewspaperRejection, message, weight_range_message
from sandbox.newspaper.order_models import (
    BasisInformation,
    CopiesShipment,
    GratisOrder,
    InsertShipment,
    InternationalItem,
    InternationalShipment,
    StandardOrder,
)
from sandbox.newspaper.reference import (
    COMMENT_MAX_CHARS,
    CONTRACT_PRICE_COUNTRIES,
    INSERT_DESCRIPTION_MAX_CHARS,
    INTERNATIONAL_RANGES,
    LIST_PRICE_COUNTRIES,
    TARIFF_GROUPS,
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
# (weight-range name, "not possible" code, weight-range code) of the other copies a standard order carries
_LARGE_EDITIONS = {
    "MONDAY_FRIDAY": ("large_weekday", "0040", "0042"),
    "SATURDAY": ("large_saturday", "0041", "0043"),
}
_UNADDRESSED = {False: ("unaddressed", "0023", "0033"), True: ("military", "0024", "0034")}
_UNSORTED = {False: ("unsorted", "0070", "0072"), True: ("unsorted_military", "0071", "0073")}
# an insert lighter / heavier than the newspaper: (weight-range name, "not possible" code, weight-range code)
_INSERTS = {False: ("insert_lighter", "0052", "0054"), True: ("insert_heavier", "0053", "0055")}
_GRATIS_INSERTS = {
    False: ("gratis_insert_lighter", "0110", None),
    True: ("gratis_insert_heavier", "0111", None),
}


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


def _check_kind(
    paper: ReferenceNewspaper, kind: tuple[str, str, str | None], weight: int | None, verdict: Verdict
) -> None:
    """Copies of one kind: "not possible" when the newspaper has no weight range for the kind, else its
    weight range (when the kind has a code for it)."""
    name, impossible, range_code = kind
    if name not in paper.weight_ranges:
        verdict.error(message(impossible, str(paper.number)))
    elif range_code is not None:
        _check_weight(weight, paper.weight_ranges[name], range_code, verdict)


def _newspaper_weight(weights: list[int | None], paper: ReferenceNewspaper) -> int:
    """The weight of the newspaper an insert goes with: its heaviest shipment, else its standard weight."""
    return max((weight for weight in weights if weight), default=paper.standard_weight)


def _check_inserts(
    inserts: list[InsertShipment],
    kinds: Mapping[bool, tuple[str, str, str | None]],
    newspaper_weight: int,
    copies: int | None,
    paper: ReferenceNewspaper,
    verdict: Verdict,
) -> None:
    for insert in inserts:
        if copies is not None and insert.count > copies:
            verdict.error(message("0050", f"{insert.count} inserts, {copies} copies"))
        if len(insert.description) > INSERT_DESCRIPTION_MAX_CHARS:
            verdict.error(message("0051", f"maximum {INSERT_DESCRIPTION_MAX_CHARS} characters"))
        heavier = insert.weight is not None and insert.weight > newspaper_weight
        _check_kind(paper, kinds[heavier], insert.weight, verdict)


def _check_copies(
    shipments: list[CopiesShipment],
    kinds: Mapping[bool, tuple[str, str, str]],
    paper: ReferenceNewspaper,
    verdict: Verdict,
) -> None:
    for shipment in shipments:
        _check_kind(paper, kinds[shipment.military], shipment.weight, verdict)
        _check_remark(shipment.shipment_remark, verdict)


def _check_tariff_group(lane: InternationalShipment, country: str, verdict: Verdict) -> None:
    offered = TARIFF_GROUPS.get(country, TARIFF_GROUPS["*"])
    if lane.tariff_group is not None and lane.tariff_group not in offered:
        groups = ", ".join(str(group) for group in sorted(offered))
        verdict.error(message("0153", f"tariff group {lane.tariff_group} / {country}: only {groups}"))


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
    _check_other_copies(order, paper, verdict)
    for lane in order.international_shipments:
        country = lane.country.upper()
        if country not in LIST_PRICE_COUNTRIES:
            verdict.error(message("0151", lane.country))
            continue
        _check_tariff_group(lane, country, verdict)
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


def _check_other_copies(order: StandardOrder, paper: ReferenceNewspaper, verdict: Verdict) -> None:
    """Large print runs, inserts, unaddressed and unsorted copies of a standard order."""
    sorted_delivery = order.sorted_delivery
    for edition in sorted_delivery.large_edition_shipments:
        _check_kind(paper, _LARGE_EDITIONS[edition.edition], edition.weight, verdict)
        _check_remark(edition.shipment_remark, verdict)
    shipments = order.sorted_shipments
    weight = _newspaper_weight([shipment.weight for shipment in shipments], paper)
    copies = sum(shipment.copies for shipment in shipments)
    _check_inserts(sorted_delivery.appendix_shipments, _INSERTS, weight, copies, paper, verdict)
    national = order.national_delivery
    if national is not None:
        _check_copies(national.unaddressed_shipments, _UNADDRESSED, paper, verdict)
        if national.unsorted_delivery is not None:
            _check_copies(national.unsorted_delivery.unsorted_shipments, _UNSORTED, paper, verdict)


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
    gratis = order.gratis_delivery
    weight = _newspaper_weight([shipment.weight for shipment in gratis.gratis_shipments], paper)
    _check_inserts(gratis.insert_shipments, _GRATIS_INSERTS, weight, None, paper, verdict)
