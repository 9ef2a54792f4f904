"""Newspaper validation before submits: each problem names its field by the spec path."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pydantic import ValidationError

from connectors.newspaper.errors import OrderInvalid
from connectors.newspaper.models import GratisOrder, Purchase, StandardOrder, StatisticsSubmission
from connectors.newspaper.validation import (
    check_gratis_order,
    check_purchase,
    check_standard_order,
    check_statistics,
    ensure_valid,
)

TODAY = dt.date(2030, 6, 15)


def standard_order(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "language": "DE",
        "basisInformation": {
            "newspaperNumber": "123456",
            "issueNumber": {"from": 10},
            "deliveryDate": "2030-06-15",
            "differenceEmails": ["diff@example.ch"],
            "confirmationEmails": ["ok@example.ch"],
        },
        "sender": {"companyName1": "Verlag AG", "address1": "Weg 1", "zipCode": 3000, "city": "Bern"},
        "nationalDelivery": {
            "sortedDelivery": {
                "sortedShipments": [{"weight": 120, "countMailMan": 100, "countCity": 0, "countRest": 5}]
            }
        },
        "internationalDelivery": {
            "internationalShipments": [
                {"productLabel": "P", "country": "DE", "economyShipments": [{"weight": 100, "count": 3}]}
            ]
        },
    }
    body.update(overrides)
    return body


def problems_of(body: dict[str, Any]) -> dict[str, str]:
    """The problems of an order body: its fields' constraints (the model's), else the rules (validation's)."""
    try:
        order = StandardOrder.model_validate(body)
    except ValidationError as exc:
        return {spec_path(error["loc"]): error["msg"] for error in exc.errors()}
    found = check_standard_order(order, today=TODAY)
    return {problem.field_path: problem.message for problem in found}


def spec_path(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def test_a_complete_order_today_is_valid() -> None:
    assert problems_of(standard_order()) == {}


def test_delivery_date_in_the_past() -> None:
    body = standard_order()
    body["basisInformation"]["deliveryDate"] = "2030-06-14"
    assert problems_of(body) == {"basisInformation.deliveryDate": "2030-06-14 is in the past"}


def test_issue_number_to_must_exceed_from() -> None:
    body = standard_order()
    body["basisInformation"]["issueNumber"] = {"from": 10, "to": 10}
    assert problems_of(body) == {"basisInformation.issueNumber.to": "10 is not greater than from 10"}
    body["basisInformation"]["issueNumber"] = {"from": 10, "to": 11}
    assert problems_of(body) == {}


def test_weights_and_counts_must_be_positive() -> None:
    body = standard_order()
    body["nationalDelivery"]["sortedDelivery"]["sortedShipments"] = [
        {"weight": 0, "countMailMan": -1, "countCity": 0, "countRest": 0},
        {"countMailMan": 1},
    ]
    body["internationalDelivery"]["internationalShipments"][0]["economyShipments"] = [
        {"weight": 50, "count": 0}
    ]
    problems = problems_of(body)
    prefix = "nationalDelivery.sortedDelivery.sortedShipments"
    assert problems == {
        f"{prefix}[0].weight": "Input should be greater than or equal to 1",
        f"{prefix}[0].countMailMan": "Input should be greater than or equal to 0",
        "internationalDelivery.internationalShipments[0].economyShipments[0].count": (
            "Input should be greater than or equal to 1"
        ),
    }
    del body["nationalDelivery"]["sortedDelivery"]["sortedShipments"][0]
    body["internationalDelivery"]["internationalShipments"][0]["economyShipments"] = [{"count": 1}]
    assert problems_of(body) == {}  # weights may be completed in the dispatch-list service


def test_a_sender_postcode_is_an_integer_the_service_judges() -> None:
    body = standard_order()
    body["sender"]["zipCode"] = 10115  # a sender abroad: the spec gives no range
    assert problems_of(body) == {}
    body["sender"]["zipCode"] = "Bern"
    assert problems_of(body) == {
        "sender.zipCode": "Input should be a valid integer, unable to parse string as an integer"
    }


def test_shipment_without_copies_is_refused() -> None:
    body = standard_order()
    body["nationalDelivery"]["sortedDelivery"]["sortedShipments"] = [
        {"weight": 10, "countMailMan": 0, "countCity": 0, "countRest": 0}
    ]
    assert problems_of(body) == {
        "nationalDelivery.sortedDelivery.sortedShipments[0]": (
            "no copies (countMailMan, countCity and countRest are 0 or missing)"
        )
    }


def test_emails_must_be_valid() -> None:
    body = standard_order()
    body["basisInformation"]["confirmationEmails"] = ["ok@example.ch", "not-an-address"]
    problems = problems_of(body)
    assert list(problems) == ["basisInformation.confirmationEmails[1]"]
    assert (
        "'not-an-address' is not a valid e-mail address" in problems["basisInformation.confirmationEmails[1]"]
    )


def test_sender_must_be_complete() -> None:
    problems = problems_of(standard_order(sender={"companyName1": "Verlag AG", "city": " "}))
    assert problems == {
        "sender.address1": "is missing",
        "sender.city": "is missing",
        "sender.zipCode": "is missing",
    }
    assert problems_of(standard_order(sender=None)) == {"sender": "is missing"}


def test_missing_basis_information_fields() -> None:
    problems = problems_of(standard_order(basisInformation={"newspaperNumber": "12a"}))
    assert problems == {"basisInformation.newspaperNumber": "String should match pattern '^\\d+$'"}
    problems = problems_of(standard_order(basisInformation={"newspaperNumber": ""}))
    assert problems == {
        "basisInformation.newspaperNumber": "String should match pattern '^\\d+$'",
    }
    problems = problems_of(standard_order(basisInformation={"newspaperNumber": "12"}))
    assert problems == {
        "basisInformation.deliveryDate": "is missing",
        "basisInformation.issueNumber.from": "is missing",
    }


def test_gratis_order_checks_the_shared_fields() -> None:
    order = GratisOrder.model_validate(
        {
            "basisInformation": {
                "newspaperNumber": "1",
                "issueNumber": {"from": 1},
                "deliveryDate": "2020-01-01",
            },
            "sender": {"companyName1": "A", "address1": "B", "zipCode": 3000, "city": "C"},
            "gratisSpecific": [1, 2],
        }
    )
    assert [str(problem) for problem in check_gratis_order(order, today=TODAY)] == [
        "basisInformation.deliveryDate: 2020-01-01 is in the past"
    ]


def test_ensure_valid_raises_order_invalid_listing_every_field() -> None:
    body = standard_order(sender=None)
    body["basisInformation"]["deliveryDate"] = "2020-01-01"
    problems = check_standard_order(StandardOrder.model_validate(body), today=TODAY)
    with pytest.raises(OrderInvalid) as caught:
        ensure_valid("standard order", problems)
    assert str(caught.value) == (
        "standard order is invalid: basisInformation.deliveryDate: 2020-01-01 is in the past; "
        "sender: is missing"
    )
    assert len(caught.value.problems) == 2
    ensure_valid("standard order", [])


def purchase(**overrides: Any) -> Purchase:
    body: dict[str, Any] = {
        "title": "Members",
        "depositDate": "2030-06-20",
        "offerEmail": "offers@example.ch",
        "addresses": [
            {
                "id": "1",
                "firstName": "Anna",
                "lastName": "Muster",
                "zipCode": 3000,
                "city": "Bern",
                "isoCode": "CH",
            },
            {"id": "2", "lastName": "Abroad", "zipCode": 10115, "city": "Berlin", "isoCode": "DE"},
        ],
        "sortingModule": {
            "sortingParameters": {"weightPerCopyInGram": 80, "issueNumberFrom": 3},
            "simplifiedConfiguration": {"bundle": {"min": 1, "max": 10, "unit": "GRAM"}},
        },
    }
    body.update(overrides)
    return Purchase.model_validate(body)


def purchase_problems(value: Purchase) -> dict[str, str]:
    return {problem.field_path: problem.message for problem in check_purchase(value, today=TODAY)}


def test_a_complete_purchase_is_valid() -> None:
    assert purchase_problems(purchase()) == {}


def test_purchase_problems_name_their_fields() -> None:
    value = purchase(
        depositDate="2030-06-01",
        offerEmail="nope",
        addresses=[
            {"id": "1", "zipCode": 300, "city": "Bern"},
            {"id": "1", "lastName": "X", "zipCode": 3000, "city": "Bern", "isoCode": "che"},
            {"lastName": "Y", "city": "Bern", "isoCode": "CH"},
        ],
        sortingModule={
            "sortingParameters": {"weightPerCopyInGram": 2},
            "simplifiedConfiguration": {"container": {"min": 5, "max": 2}},
        },
    )
    problems = purchase_problems(value)
    assert problems["depositDate"] == "2030-06-01 is in the past"
    assert problems["offerEmail"].startswith("'nope' is not a valid e-mail address")
    assert problems["addresses[0].lastName"].startswith("no name given")
    assert problems["addresses[0].zipCode"] == "300 is not a 4-digit Swiss postcode"
    assert problems["addresses[1].id"] == "'1' is used by an earlier address"
    assert problems["addresses[1].isoCode"] == "'che' is not a 2-letter country code"
    assert problems["addresses[2].id"] == "is missing"
    assert problems["addresses[2].zipCode"] == "is missing"
    assert problems["sortingModule.simplifiedConfiguration.container.max"] == "2 is less than min 5"
    assert purchase_problems(purchase(addresses=[])) == {"addresses": "no addresses"}


def test_statistics_records() -> None:
    good = {"newspaperId": 1, "product": "FRIDAY_EDITION", "deliveryDate": "2030-01-01", "count": 4, "bbz": 0}
    assert check_statistics(StatisticsSubmission.model_validate({"statistics": [good]})) == []
    bad = StatisticsSubmission.model_validate(
        {"statistics": [good, {"newspaperId": 0, "count": -2, "houseKey": -1}]}
    )
    problems = {problem.field_path: problem.message for problem in check_statistics(bad)}
    assert problems == {
        "statistics[1].newspaperId": "0 is not a positive integer",
        "statistics[1].count": "-2 is not a positive integer",
        "statistics[1].deliveryDate": "is missing",
        "statistics[1].product": "is missing",
        "statistics[1].houseKey": "-1 is negative",
    }
    assert [str(problem) for problem in check_statistics(StatisticsSubmission())] == [
        "statistics: no records"
    ]


def test_purchase_sizes_and_weights_are_positive() -> None:
    with pytest.raises(ValidationError) as raised:
        purchase(
            sortingModule={
                "sortingParameters": {"weightPerCopyInGram": 0, "issueNumberFrom": 1},
                "simplifiedConfiguration": {"bundle": {"min": 0, "max": 5}},
            }
        )
    found = {spec_path(error["loc"]): error["msg"] for error in raised.value.errors()}
    assert found == {
        "sortingModule.sortingParameters.weightPerCopyInGram": "Input should be greater than or equal to 1",
        "sortingModule.simplifiedConfiguration.bundle.min": "Input should be greater than or equal to 1",
    }
