"""Newspaper §2 models: spec names as aliases, open enums, unknown fields kept."""

from __future__ import annotations

import datetime as dt

from connectors.newspaper.models import (
    DistributionList,
    GratisOrder,
    NewspaperSummary,
    OrderStatus,
    OrderStatusValue,
    OutputAddresses,
    PurchaseProgress,
    StandardOrder,
    StatisticsSubmission,
)


def test_standard_order_round_trips_spec_names() -> None:
    body = {
        "language": "DE",
        "basisInformation": {
            "newspaperNumber": "123456",
            "issueNumber": {"from": 5, "to": 6},
            "lateDelivery": False,
            "deliveryDate": "2031-01-02",
            "differenceEmails": ["a@example.ch"],
        },
        "sender": {"companyName1": "Verlag AG", "address1": "Weg 1", "zipCode": 3000, "city": "Bern"},
        "nationalDelivery": {
            "sortedDelivery": {
                "sortedShipments": [{"weight": 120, "countMailMan": 10, "countCity": 0, "countRest": 2}],
                "largeEditionShipments": [{"anything": 1}],
            }
        },
        "internationalDelivery": {
            "internationalShipments": [
                {
                    "productLabel": "X",
                    "country": "DE",
                    "contractPrice": True,
                    "economyShipments": [{"weight": 1}],
                }
            ]
        },
        "futureField": {"kept": True},
    }
    order = StandardOrder.model_validate(body)
    assert order.basis_information.issue_number.from_ == 5
    assert order.basis_information.delivery_date == dt.date(2031, 1, 2)
    assert order.sender.company_name1 == "Verlag AG"
    assert order.national_delivery.sorted_delivery.sorted_shipments[0].count_mail_man == 10
    assert order.to_body() == body


def test_models_accept_python_names_and_drop_none_from_bodies() -> None:
    order = GratisOrder(language="FR", basis_information={"newspaper_number": "1"}, distributionPlan={"x": 1})
    assert order.to_body() == {
        "language": "FR",
        "basisInformation": {"newspaperNumber": "1"},
        "distributionPlan": {"x": 1},
    }


def test_open_enum_accepts_unknown_values_and_knows_constants() -> None:
    status = OrderStatus.model_validate(
        {"statusValue": "RELEASED", "statusDate": "2030-05-01T10:00:00+02:00"}
    )
    assert status.status_value == "RELEASED"
    assert isinstance(status.status_value, OrderStatusValue)
    assert not status.status_value.is_known
    assert not status.in_control
    control = OrderStatus.model_validate({"statusValue": "CONTROL"})
    assert control.status_value == OrderStatusValue.CONTROL
    assert control.status_value.is_known
    assert control.in_control
    assert OrderStatusValue.known_values() == {"LOADED", "CONTROL"}
    assert control.model_dump(by_alias=True, exclude_none=True) == {"statusValue": "CONTROL"}


def test_newspaper_summary_uses_the_spec_spelling_of_newspaper_id() -> None:
    summary = NewspaperSummary.model_validate(
        {"newspaperNumber": 123, "newspaperID": 9, "format": "TALLER_THAN_B_5", "postCustomerService": "NEW"}
    )
    assert summary.newspaper_id == 9
    assert summary.format == "TALLER_THAN_B_5"
    assert summary.post_customer_service == "NEW"


def test_distribution_list_details() -> None:
    parsed = DistributionList.model_validate(
        {
            "distributionType": ["OFFICIAL_PLUS", "SOMETHING_NEW"],
            "startDate": "2030-01-01",
            "distributionListDetails": [
                {"zipCode": 8000, "canton": "ZH", "bundlesInSB": True, "unloadTime": "05:30:00", "extra": 1}
            ],
        }
    )
    detail = parsed.distribution_list_details[0]
    assert detail.bundles_in_sb is True
    assert detail.unload_time == dt.time(5, 30)
    assert detail.model_extra == {"extra": 1}
    assert parsed.distribution_type == ["OFFICIAL_PLUS", "SOMETHING_NEW"]


def test_statistics_and_purchase_shapes() -> None:
    submission = StatisticsSubmission.model_validate(
        {"statistics": [{"newspaperId": 1, "product": "FRIDAY_EDITION", "bundleType": "CITY", "count": 3}]}
    )
    assert submission.statistics[0].newspaper_id == 1
    progress = PurchaseProgress.model_validate(
        {"validationStatus": "READY", "validationProgressPercent": 100, "sortingStatus": "READY"}
    )
    assert progress.is_ready
    assert not PurchaseProgress.model_validate(
        {"validationStatus": "READY", "sortingStatus": "RUNNING"}
    ).is_ready
    addresses = OutputAddresses.model_validate(
        {"outputAddresses": [{"id": 17, "houseNumber": 4, "zipCode": "3000", "bundleInfo": "MANUALLY"}]}
    )
    first = addresses.output_addresses[0]
    assert (first.id, first.house_number, first.zip_code) == ("17", "4", 3000)
