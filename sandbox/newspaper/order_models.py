"""Request bodies of the order endpoints as the sandbox reads them: standard order (spec 2.1), gratis order.

Unknown fields are kept, not refused: the spec leaves several shapes open and which fields are required is
not shown, so only what the checks need is typed. ``deliveryDate`` stays a string so a bad format can be
answered with ``0005`` rather than a schema error.

The gratis order body is not shown in the spec; the sandbox accepts the standard order's ``language``,
``basisInformation`` and ``sender`` plus::

    "gratisDelivery": {
        "gratisShipments": [
            {"locationCategory": "A" | "B" | "C", "weight": 90, "count": 2930, "shipmentRemark": "..."}
        ],
        "insertShipments": [ ... ]            # shape open, kept as sent
    }

``count`` may be left out: the current circulation of that category in the distribution list is used.

Guesses: §2.1 shows ``largeEditionShipments`` and ``appendixShipments`` without their elements' shape, and
no field at all for unaddressed, military or unsorted copies, nor for a tariff group, although §7 has codes
for each. So that every §7 code can be earned, the sandbox reads (and these shapes are its own)::

    "nationalDelivery": {
        "sortedDelivery": {
            "largeEditionShipments": [{"edition": "MONDAY_FRIDAY" | "SATURDAY", "weight": 250, "count": 900}],
            "appendixShipments": [{"description": "Prospekt", "weight": 40, "count": 1200}]   # inserts
        },
        "unaddressedShipments": [{"weight": 180, "count": 50, "military": false}],
        "unsortedDelivery": {"unsortedShipments": [{"weight": 180, "count": 30, "military": false}]}
    },
    "internationalDelivery": {"internationalShipments": [{..., "tariffGroup": 2}]},
    "gratisDelivery": {"insertShipments": [{"description": "Beilage", "weight": 20, "count": 500}]}

An insert is lighter or heavier than the newspaper it goes with: the heaviest sorted (or gratis) shipment,
else the newspaper's standard weight.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class _Body(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class IssueNumber(_Body):
    from_: int = Field(alias="from")
    to: int | None = None


class BasisInformation(_Body):
    newspaper_number: str
    issue_number: IssueNumber
    late_delivery: bool = False
    delivery_date: str
    difference_emails: list[str] = []
    confirmation_emails: list[str] = []


class Sender(_Body):
    company_name1: str = ""
    address1: str = ""
    zip_code: int | None = None
    city: str = ""


class SortedShipment(_Body):
    weight: int | None = None
    count_mail_man: int = Field(default=0, ge=0)
    count_city: int = Field(default=0, ge=0)
    count_rest: int = Field(default=0, ge=0)
    shipment_remark: str = ""

    @property
    def copies(self) -> int:
        return self.count_mail_man + self.count_city + self.count_rest


class LargeEditionShipment(_Body):
    """A large print run (a guessed shape, see the module)."""

    edition: Literal["MONDAY_FRIDAY", "SATURDAY"] = "MONDAY_FRIDAY"
    weight: int | None = None
    count: int = Field(default=0, ge=0)
    shipment_remark: str = ""


class InsertShipment(_Body):
    """Inserts going with the newspaper (a guessed shape, see the module)."""

    description: str = ""
    weight: int | None = None
    count: int = Field(default=0, ge=0)


class CopiesShipment(_Body):
    """Unaddressed or unsorted copies, military ones when ``military`` (a guessed shape, see the module)."""

    weight: int | None = None
    count: int = Field(default=0, ge=0)
    military: bool = False
    shipment_remark: str = ""


class SortedDelivery(_Body):
    sorted_shipments: list[SortedShipment] = []
    large_edition_shipments: list[LargeEditionShipment] = []
    appendix_shipments: list[InsertShipment] = []
    sort_file: dict[str, Any] | None = None


class UnsortedDelivery(_Body):
    unsorted_shipments: list[CopiesShipment] = []


class NationalDelivery(_Body):
    sorted_delivery: SortedDelivery | None = None
    unaddressed_shipments: list[CopiesShipment] = []
    unsorted_delivery: UnsortedDelivery | None = None


class InternationalItem(_Body):
    weight: int | None = None
    count: int = Field(default=0, ge=0)
    shipment_remark: str = ""


class InternationalShipment(_Body):
    product_label: str = ""
    country: str
    contract_price: bool = False
    tariff_group: int | None = None
    priority_shipments: list[InternationalItem] = []
    economy_shipments: list[InternationalItem] = []


class InternationalDelivery(_Body):
    international_shipments: list[InternationalShipment] = []


class OrderBase(_Body):
    language: str = "DE"
    basis_information: BasisInformation
    sender: Sender | None = None


class StandardOrder(OrderBase):
    national_delivery: NationalDelivery | None = None
    international_delivery: InternationalDelivery | None = None

    @property
    def sorted_shipments(self) -> list[SortedShipment]:
        if self.national_delivery is None or self.national_delivery.sorted_delivery is None:
            return []
        return self.national_delivery.sorted_delivery.sorted_shipments

    @property
    def sorted_delivery(self) -> SortedDelivery:
        if self.national_delivery is None or self.national_delivery.sorted_delivery is None:
            return SortedDelivery()
        return self.national_delivery.sorted_delivery

    @property
    def international_shipments(self) -> list[InternationalShipment]:
        if self.international_delivery is None:
            return []
        return self.international_delivery.international_shipments


class GratisShipment(_Body):
    location_category: Literal["A", "B", "C"]
    weight: int | None = None
    count: int | None = Field(default=None, ge=0)
    shipment_remark: str = ""


class GratisDelivery(_Body):
    gratis_shipments: list[GratisShipment] = Field(min_length=1)
    insert_shipments: list[InsertShipment] = []


class GratisOrder(OrderBase):
    gratis_delivery: GratisDelivery
