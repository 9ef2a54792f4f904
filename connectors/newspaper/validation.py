"""Checks run before any newspaper submission, each problem naming the field by its spec path
(``basisInformation.deliveryDate: 2020-01-01 is in the past``); ``ensure_*`` raise :class:`OrderInvalid`.

These are the rules a body's model cannot hold by itself: required fields, dates today or later, one field
against another. A single field's constraints (ranges, patterns) are declared on the request models
(:mod:`connectors.newspaper.models`) and hold whenever a body is read, from a file or from a form.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from connectors.newspaper.errors import FieldProblem, OrderInvalid
from connectors.newspaper.models import (
    BasisInformation,
    GratisOrder,
    InternationalItem,
    Purchase,
    PurchaseAddress,
    Sender,
    SortedShipment,
    StandardOrder,
    StatisticsRecord,
    StatisticsSubmission,
)
from connectors.validation import email_problem

_SWISS_ZIP = re.compile(r"^[1-9]\d{3}$")
_ISO_COUNTRY = re.compile(r"^[A-Z]{2}$")


def check_standard_order(order: StandardOrder, *, today: dt.date) -> list[FieldProblem]:
    """Problems of a standard order (§2.1): basis information, sender, shipments."""
    problems = _check_common(order.basis_information, order.sender, today=today)
    sorted_delivery = order.national_delivery.sorted_delivery if order.national_delivery else None
    for index, shipment in enumerate((sorted_delivery.sorted_shipments or []) if sorted_delivery else []):
        path = f"nationalDelivery.sortedDelivery.sortedShipments[{index}]"
        problems += _check_sorted_shipment(shipment, path)
    international = order.international_delivery
    for index, abroad in enumerate((international.international_shipments or []) if international else []):
        path = f"internationalDelivery.internationalShipments[{index}]"
        if not (abroad.country or "").strip():
            problems.append(FieldProblem(f"{path}.country", "is missing"))
        for kind, items in (
            ("priorityShipments", abroad.priority_shipments),
            ("economyShipments", abroad.economy_shipments),
        ):
            for item_index, item in enumerate(items or []):
                problems += _check_international_item(item, f"{path}.{kind}[{item_index}]")
    return problems


def check_gratis_order(order: GratisOrder, *, today: dt.date) -> list[FieldProblem]:
    """Problems of a gratis order in the fields it shares with the standard order."""
    return _check_common(order.basis_information, order.sender, today=today)


def check_statistics(submission: StatisticsSubmission) -> list[FieldProblem]:
    """Problems of a statistics submission (§2.6)."""
    if not submission.statistics:
        return [FieldProblem("statistics", "no records")]
    problems: list[FieldProblem] = []
    for index, record in enumerate(submission.statistics):
        problems += _check_statistics_record(record, f"statistics[{index}]")
    return problems


def check_purchase(purchase: Purchase, *, today: dt.date) -> list[FieldProblem]:
    """Problems of an address validation and sorting purchase (§2.7)."""
    problems: list[FieldProblem] = []
    problems += _check_not_past(purchase.deposit_date, "depositDate", today)
    if purchase.offer_email is not None and (problem := email_problem(purchase.offer_email)):
        problems.append(FieldProblem("offerEmail", problem))
    if not purchase.addresses:
        problems.append(FieldProblem("addresses", "no addresses"))
    seen: set[str] = set()
    for index, address in enumerate(purchase.addresses):
        problems += _check_purchase_address(address, f"addresses[{index}]", seen)
    module = purchase.sorting_module
    configuration = module.simplified_configuration if module else None
    for name, size_range in (
        ("bundle", configuration.bundle if configuration else None),
        ("container", configuration.container if configuration else None),
    ):
        if size_range is None:
            continue
        path = f"sortingModule.simplifiedConfiguration.{name}"
        if size_range.min is not None and size_range.max is not None and size_range.min > size_range.max:
            problems.append(
                FieldProblem(f"{path}.max", f"{size_range.max} is less than min {size_range.min}")
            )
    return problems


def ensure_valid(what: str, problems: Sequence[FieldProblem]) -> None:
    """Raise :class:`OrderInvalid` listing ``problems`` when there are any."""
    if problems:
        raise OrderInvalid(what, problems)


def _check_common(
    basis: BasisInformation | None, sender: Sender | None, *, today: dt.date
) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    if basis is None:
        problems.append(FieldProblem("basisInformation", "is missing"))
    else:
        problems += _check_basis(basis, today)
    if sender is None:
        problems.append(FieldProblem("sender", "is missing"))
    else:
        for attribute, name in (
            ("company_name1", "companyName1"),
            ("address1", "address1"),
            ("city", "city"),
        ):
            if not str(getattr(sender, attribute) or "").strip():
                problems.append(FieldProblem(f"sender.{name}", "is missing"))
        if sender.zip_code is None:
            problems.append(FieldProblem("sender.zipCode", "is missing"))
    return problems


def _check_basis(basis: BasisInformation, today: dt.date) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    if not basis.newspaper_number:
        problems.append(FieldProblem("basisInformation.newspaperNumber", "is missing"))
    if basis.delivery_date is None:
        problems.append(FieldProblem("basisInformation.deliveryDate", "is missing"))
    else:
        problems += _check_not_past(basis.delivery_date, "basisInformation.deliveryDate", today)
    issue = basis.issue_number
    if issue is None or issue.from_ is None:
        problems.append(FieldProblem("basisInformation.issueNumber.from", "is missing"))
    elif issue.to is not None and issue.to <= issue.from_:
        problems.append(
            FieldProblem(
                "basisInformation.issueNumber.to", f"{issue.to} is not greater than from {issue.from_}"
            )
        )
    for name, addresses in (
        ("differenceEmails", basis.difference_emails),
        ("confirmationEmails", basis.confirmation_emails),
    ):
        for index, address in enumerate(addresses or []):
            if problem := email_problem(address):
                problems.append(FieldProblem(f"basisInformation.{name}[{index}]", problem))
    return problems


def _check_sorted_shipment(shipment: SortedShipment, path: str) -> list[FieldProblem]:
    # Weights may be left out and completed in the online dispatch-list service (§1, step 3). A single count
    # may be 0 (no copies for carriers, say); a shipment of no copies at all is an error.
    counts = (shipment.count_mail_man, shipment.count_city, shipment.count_rest)
    if all(count is None or count == 0 for count in counts):
        return [FieldProblem(path, "no copies (countMailMan, countCity and countRest are 0 or missing)")]
    return []


def _check_international_item(item: InternationalItem, path: str) -> list[FieldProblem]:
    if item.count is None:
        return [FieldProblem(f"{path}.count", "is missing")]
    return []


def _check_statistics_record(record: StatisticsRecord, path: str) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    for attribute, name in (("newspaper_id", "newspaperId"), ("count", "count")):
        value = getattr(record, attribute)
        if value is None:
            problems.append(FieldProblem(f"{path}.{name}", "is missing"))
        else:
            problems += _check_positive(value, f"{path}.{name}")
    if record.delivery_date is None:
        problems.append(FieldProblem(f"{path}.deliveryDate", "is missing"))
    if not (record.product or "").strip():
        problems.append(FieldProblem(f"{path}.product", "is missing"))
    for attribute, name in (("house_key", "houseKey"), ("bbz", "bbz"), ("aplz", "aplz")):
        value = getattr(record, attribute)
        if value is not None and value < 0:
            problems.append(FieldProblem(f"{path}.{name}", f"{value} is negative"))
    return problems


def _check_purchase_address(address: PurchaseAddress, path: str, seen: set[str]) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    identifier = (address.id or "").strip()
    if not identifier:
        problems.append(FieldProblem(f"{path}.id", "is missing"))
    elif identifier in seen:
        problems.append(FieldProblem(f"{path}.id", f"{identifier!r} is used by an earlier address"))
    seen.add(identifier)
    if not (address.first_name or "").strip() and not (address.last_name or "").strip():
        problems.append(FieldProblem(f"{path}.lastName", "no name given (firstName and lastName are empty)"))
    if not (address.city or "").strip():
        problems.append(FieldProblem(f"{path}.city", "is missing"))
    iso_code = address.iso_code
    if iso_code is not None and not _ISO_COUNTRY.match(iso_code):
        problems.append(FieldProblem(f"{path}.isoCode", f"{iso_code!r} is not a 2-letter country code"))
    if address.zip_code is None:
        problems.append(FieldProblem(f"{path}.zipCode", "is missing"))
    elif (iso_code or "CH") == "CH" and not _SWISS_ZIP.match(str(address.zip_code)):
        problems.append(
            FieldProblem(f"{path}.zipCode", f"{address.zip_code} is not a 4-digit Swiss postcode")
        )
    return problems


def _check_not_past(value: dt.date | None, path: str, today: dt.date) -> list[FieldProblem]:
    if value is not None and value < today:
        return [FieldProblem(path, f"{value.isoformat()} is in the past")]
    return []


def _check_positive(value: int | None, path: str) -> list[FieldProblem]:
    if value is not None and value <= 0:
        return [FieldProblem(path, f"{value} is not a positive integer")]
    return []
