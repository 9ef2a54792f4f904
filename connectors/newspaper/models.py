"""Pydantic models of the newspaper API shapes (§2): the spec's field names as aliases, Pythonic attributes.

Every model keeps fields it does not know (``extra="allow"``) so nothing the service sends is dropped;
enums the spec leaves open are :class:`OpenEnum` strings that accept any value. Responses whose shape the
spec does not show are :class:`RawResponse` (see :mod:`connectors.newspaper.documents`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from connectors.models import OpenEnum as OpenEnum
from connectors.newspaper.errors import NewspaperMessage

T = TypeVar("T")


class OrderStatusValue(OpenEnum):
    LOADED = "LOADED"
    CONTROL = "CONTROL"


class PostCustomerService(OpenEnum):
    CENTRAL = "CENTRAL"


class NewspaperFormat(OpenEnum):
    TALLER_THAN_B_5 = "TALLER_THAN_B_5"


class AddressMethod(OpenEnum):
    ADDRESSED = "ADDRESSED"


class DistributionType(OpenEnum):
    OFFICIAL_PLUS = "OFFICIAL_PLUS"


class StatisticsProduct(OpenEnum):
    TUESDAY_EDITION = "TUESDAY_EDITION"
    FRIDAY_EDITION = "FRIDAY_EDITION"


class BundleType(OpenEnum):
    NOT_BUNDLED = "NOT_BUNDLED"
    CITY = "CITY"


class OfferOption(OpenEnum):
    NO_PRICE = "NO_PRICE"


class LevelValidation(OpenEnum):
    COMPLETE = "COMPLETE"


class LevelSorting(OpenEnum):
    NORMAL = "NORMAL"


class ProductCode(OpenEnum):
    AZA_WEEKLY_AND_BI_MONTHLY = "AZA_WEEKLY_AND_BI_MONTHLY"


class SendingOption(OpenEnum):
    PRIORITY = "PRIORITY"


class ProcessingStatus(OpenEnum):
    READY = "READY"


class BundleInfo(OpenEnum):
    MANUALLY = "MANUALLY"


class Scope(StrEnum):
    """OAuth scopes of §4, one per endpoint group."""

    ORDERS = "SENDINGS_NEWSPAPER_SUBMISSION_ORDERS"
    NEWSPAPERS = "SENDINGS_NEWSPAPER_SUBMISSION_NEWSPAPERS"
    DISTRIBUTION = "SENDINGS_NEWSPAPER_SUBMISSION_DISTRIBUTION"
    STATISTIC = "SENDINGS_NEWSPAPER_STATISTIC"
    ADDRESS = "SENDINGS_NEWSPAPER_ADDRESS"


class PurchaseDocumentKind(StrEnum):
    """The seven document endpoints of a purchase; values are the path segments as §4 lists them (the
    client also tries ``original-addresses`` where the list spells ``original-addresse``)."""

    ORIGINAL_ADDRESSES = "original-addresse"
    OUTPUT_ADDRESSES = "output-addresses"
    NON_REUSABLE_ADDRESSES = "non-reusable-addresses"
    BUNDLE_LABELS = "bundle-labels"
    CONTAINER_LABELS = "container-labels"
    SORT_PROTOCOL = "sort-protocol"
    ORDER_CONFIRMATION = "order-confirmation"


class StructureFileCode(IntEnum):
    """fileCode of the structure files: 1 = AZ/GZA, 2 = AZA/AZB, 9 = both."""

    AZ_GZA = 1
    AZA_AZB = 2
    BOTH = 9


class SpecModel(BaseModel):
    """Base: camelCase aliases as in the spec, Python names accepted too, unknown fields kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        coerce_numbers_to_str=True,
        defer_build=True,
    )

    def to_body(self) -> dict[str, Any]:
        """The JSON request body: spec names, absent fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


@dataclass(frozen=True)
class ApiResult(Generic[T]):
    """A call's payload with the warnings its response carried, for the caller to record; ``errors`` are
    those of an answer that took a submission all the same (an order or purchase answered with its id)."""

    value: T
    warnings: tuple[NewspaperMessage, ...] = ()
    errors: tuple[NewspaperMessage, ...] = ()


# --- 2.1 standard order -------------------------------------------------------------------------------
# The request bodies carry the words a clerk reads (title, description) and the constraints of the spec's
# tables; the Prefect forms are generated from them (flows/spec_forms.py). Rules that span fields or need
# today's date (required fields, dates today or later) are in connectors/newspaper/validation.py.


def described(title: str, description: str, **constraints: Any) -> Any:
    """An optional field of a request body: its title and description, and the constraints it must meet."""
    return Field(default=None, title=title, description=description, **constraints)


class IssueNumber(SpecModel):
    from_: int | None = described("Issue number", "The number of this issue.", alias="from", ge=1)
    to: int | None = described(
        "Issue number to", "Last issue number, for several issues (greater than from)."
    )


class BasisInformation(SpecModel):
    newspaper_number: str | None = described(
        "Newspaper number", "The newspaper's number (digits).", pattern=r"^\d+$", examples=["4711"]
    )
    issue_number: IssueNumber | None = described("Issue number", "The issue's number.")
    late_delivery: bool | None = described("Late delivery", "The issue is delivered late.")
    delivery_date: dt.date | None = described("Delivery date", "The delivery date: today or later.")
    difference_emails: list[str] | None = described(
        "E-mails on discrepancy", "Who is told when the delivered quantities differ."
    )
    confirmation_emails: list[str] | None = described(
        "Confirmation e-mails", "Who receives the confirmation."
    )


class Sender(SpecModel):
    company_name1: str | None = described("Company", "The sender's company name.", alias="companyName1")
    address1: str | None = described("Address", "Street and house number.")
    # §2.1 types the postcode as an integer and gives no range: a sender abroad is the service's to judge.
    zip_code: int | None = described("Postcode", "The sender's postcode.")
    city: str | None = described("City", "The sender's city.")


class SortedShipment(SpecModel):
    weight: int | None = described("Weight (g)", "Weight of one copy in grams.", ge=1)
    count_mail_man: int | None = described("Copies for mail carriers", "Copies bundled per carrier.", ge=0)
    count_city: int | None = described("Copies per locality", "Copies bundled per locality.", ge=0)
    count_rest: int | None = described("Other copies", "Copies in other bundles.", ge=0)
    shipment_remark: str | None = described("Remark", "A remark on this shipment.")


class SortedDelivery(SpecModel):
    sorted_shipments: list[SortedShipment] | None = described(
        "Sorted shipments", "One entry per weight class."
    )
    # Element shapes not shown (§2.1): passed on as given, not offered in a form.
    large_edition_shipments: list[dict[str, Any]] | None = None
    appendix_shipments: list[dict[str, Any]] | None = None
    sort_file: dict[str, Any] | None = None


class NationalDelivery(SpecModel):
    sorted_delivery: SortedDelivery | None = described("Sorted delivery", "Copies sorted for Switzerland.")


class InternationalItem(SpecModel):
    weight: int | None = described("Weight (g)", "Weight of one copy in grams.", ge=1)
    count: int | None = described("Copies", "Number of copies.", ge=1)
    shipment_remark: str | None = described("Remark", "A remark on this shipment.")


class InternationalShipment(SpecModel):
    product_label: str | None = described("Product", "The international product's label.")
    country: str | None = described("Country", "Two-letter ISO code, e.g. DE.", pattern=r"^[A-Za-z]{2}$")
    contract_price: bool | None = described(
        "Contract price", "Charged at the contract price, not the list price."
    )
    priority_shipments: list[InternationalItem] | None = described(
        "Priority", "Copies sent by Priority mail."
    )
    economy_shipments: list[InternationalItem] | None = described("Economy", "Copies sent by Economy mail.")


class InternationalDelivery(SpecModel):
    international_shipments: list[InternationalShipment] | None = described(
        "International shipments", "One entry per country and product."
    )


class GratisShipment(SpecModel):
    """A gratis order's shipment (the gratis body is not shown: the location categories of §2.5)."""

    location_category: Literal["A", "B", "C"] | None = described(
        "Location category", "A, B or C, as on the distribution list."
    )
    weight: int | None = described("Weight (g)", "Weight of one copy in grams.", ge=1)
    count: int | None = described(
        "Copies", "Number of copies; empty: the current circulation of the category.", ge=0
    )
    shipment_remark: str | None = described("Remark", "A remark on this shipment.")


class GratisDelivery(SpecModel):
    gratis_shipments: list[GratisShipment] | None = described(
        "Gratis shipments", "One entry per location category."
    )


_LANGUAGE = described("Language", "Language of the order, e.g. DE, FR, IT or EN.", examples=["DE"])
_BASIS = described(
    "Basis information", "Newspaper, issue and delivery date: together they identify the order."
)
_SENDER = described("Sender", "The company that sends the copies.")


class StandardOrder(SpecModel):
    language: str | None = _LANGUAGE
    basis_information: BasisInformation | None = _BASIS
    sender: Sender | None = _SENDER
    national_delivery: NationalDelivery | None = described("National delivery", "Copies for Switzerland.")
    international_delivery: InternationalDelivery | None = described(
        "International delivery", "Copies for other countries."
    )


class GratisOrder(SpecModel):
    """The gratis order body is not shown: the fields shared with the standard order and the shipments per
    location category, everything else kept."""

    language: str | None = _LANGUAGE
    basis_information: BasisInformation | None = _BASIS
    sender: Sender | None = _SENDER
    gratis_delivery: GratisDelivery | None = described(
        "Gratis delivery", "A gratis order's shipments per location category (gratis orders only)."
    )


# --- 2.2-2.5 orders and newspapers ---------------------------------------------------------------------


class OrderStatus(SpecModel):
    status_value: OrderStatusValue | None = None
    status_date: dt.datetime | None = None

    @property
    def in_control(self) -> bool:
        return (self.status_value or "").upper() == OrderStatusValue.CONTROL


class SummaryIssueNumber(SpecModel):
    """An order summary's issue number, as the service answers it (no constraint of the request's)."""

    from_: int | None = Field(default=None, alias="from")
    to: int | None = None


class OrderSummary(SpecModel):
    issue_date: dt.date | None = None
    issue_number: SummaryIssueNumber | None = None
    barcode_number: str | None = None
    total_newspaper: int | None = None
    status_value: OrderStatusValue | None = None
    difference: bool | None = None


class NewspaperSummary(SpecModel):
    newspaper_number: int | None = None
    newspaper_id: int | None = Field(default=None, alias="newspaperID")
    title: str | None = None
    publisher_name: str | None = None
    printer_name: str | None = None
    post_customer_service: PostCustomerService | None = None
    region: str | None = None
    periodicity: int | None = None
    format: NewspaperFormat | None = None
    language: str | None = None
    text_quota: int | None = None
    address_method: AddressMethod | None = None
    sending_zip_code: int | None = None
    sending_city: str | None = None
    postage_paid_impression: str | None = None
    postage_paid_impression_zip_code: int | None = None
    postage_paid_impression_city: str | None = None


class DistributionListDetail(SpecModel):
    zip_code: int | None = None
    city: str | None = None
    canton: str | None = None
    location_category: str | None = None
    count: int | None = None
    po_box: bool | None = None
    distribution_type: DistributionType | None = None
    packed_in_sacks: bool | None = None
    bundles_in_sb: bool | None = Field(default=None, alias="bundlesInSB")
    delivery_zip_code: int | None = None
    unload_zip_code: int | None = None
    unload_place: str | None = None
    unload_time: dt.time | None = None
    container_target_id: str | None = None


class DistributionList(SpecModel):
    distribution_type: list[DistributionType] | None = None
    start_date: dt.date | None = None
    last_distribution_data_update: dt.date | None = None
    deposit_day: list[Any] | None = None
    distribution_day: list[Any] | None = None
    periodicity: int | None = None
    distribution_list_details: list[DistributionListDetail] | None = None


# --- 2.6 statistics -------------------------------------------------------------------------------------


class StatisticsRecord(SpecModel):
    newspaper_id: int | None = None
    split: str | None = None
    product: StatisticsProduct | None = None
    house_key: int | None = None
    bbz: int | None = None
    aplz: int | None = None
    city: str | None = None
    delivery_date: dt.date | None = None
    bundle_type: BundleType | None = None
    count: int | None = None


class StatisticsSubmission(SpecModel):
    statistics: list[StatisticsRecord] = Field(default_factory=list)


# --- 2.7 purchases --------------------------------------------------------------------------------------


class PurchaseAddress(SpecModel):
    id: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    street: str | None = None
    house_number: str | None = None
    zip_code: int | None = None
    city: str | None = None
    iso_code: str | None = None


class SortingParameters(SpecModel):
    customer_reference: str | None = described("Customer reference", "Your reference for this purchase.")
    dispatcher: str | None = described("Dispatcher", "Who dispatches the copies.")
    forwarding_name: str | None = described("Forwarding name", "The name the shipment is forwarded under.")
    issue_number_from: int | None = described("Issue number", "The first issue number.", ge=1)
    language: str | None = described("Language", "Language code, e.g. DE, FR, IT or EN.", examples=["DE"])
    product_code: ProductCode | None = described(
        "Product code", "The product, e.g. AZA_WEEKLY_AND_BI_MONTHLY."
    )
    sender: str | None = described("Sender", "The sender as printed.")
    sending_international: SendingOption | None = described(
        "Sending abroad", "How copies abroad are sent, e.g. PRIORITY."
    )
    sending_swiss: SendingOption | None = described(
        "Sending in Switzerland", "How copies in Switzerland go, e.g. PRIORITY."
    )
    weight_per_copy_in_gram: int | None = described(
        "Weight per copy (g)", "Weight of one copy in grams.", ge=1
    )
    postage_paid_impression_swiss: str | None = described(
        "Postage paid impression (CH)", "As printed in Switzerland, e.g. AZA 6280 Hochdorf."
    )
    postage_paid_impression_international: str | None = described(
        "Postage paid impression (abroad)", "As printed abroad, e.g. PP Hochdorf."
    )


class SizeRange(SpecModel):
    min: int | None = described("Minimum", "The smallest size, in the unit below.", ge=1)
    max: int | None = described("Maximum", "The largest size, in the unit below.", ge=1)
    unit: str | None = described("Unit", "The unit of minimum and maximum, e.g. GRAM.", examples=["GRAM"])


class SimplifiedConfiguration(SpecModel):
    bundle: SizeRange | None = described("Bundle", "The size range of a bundle.")
    container: SizeRange | None = described("Container", "The size range of a container.")


class SortingModule(SpecModel):
    level_sorting: LevelSorting | None = described("Sorting level", "How finely to sort, e.g. NORMAL.")
    sorting_parameters: SortingParameters | None = described(
        "Sorting parameters", "How the addresses are sorted and labelled."
    )
    simplified_configuration: SimplifiedConfiguration | None = described(
        "Bundles and containers", "Size ranges of bundles and containers."
    )


class Purchase(SpecModel):
    title: str | None = described("Title", "Names the purchase (shown to the service's staff).")
    deposit_date: dt.date | None = described("Deposit date", "When the copies are deposited: today or later.")
    language: str | None = described("Language", "Language code, e.g. DE, FR, IT or EN.", examples=["DE"])
    franking_licence: str | None = described("Franking licence", "The franking licence, e.g. AZA-6280-0001.")
    offer_option: OfferOption | None = described("Offer", "Whether an offer is made, e.g. NO_PRICE.")
    offer_email: str | None = described("Offer e-mail", "The e-mail address the offer is sent to.")
    addresses: list[PurchaseAddress] = Field(default_factory=list)
    level_validation: LevelValidation | None = described(
        "Validation level", "How thoroughly to validate, e.g. COMPLETE."
    )
    sorting_module: SortingModule | None = described(
        "Sorting",
        "Sorting by mail carrier district and route; leave empty for validation only.",
    )


class PurchaseProgress(SpecModel):
    validation_status: ProcessingStatus | None = None
    validation_progress_percent: int | None = None
    sorting_status: ProcessingStatus | None = None

    @property
    def is_ready(self) -> bool:
        """Both validation and sorting report READY."""
        ready = ProcessingStatus.READY
        return self.validation_status == ready and self.sorting_status == ready


class OutputAddress(SpecModel):
    status_code: str | None = None
    bundle_id: str | None = None
    bundle_info: BundleInfo | None = None
    id: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    street: str | None = None
    house_number: str | None = None
    zip_code: int | None = None
    city: str | None = None
    iso_code: str | None = None
    quantity: int | None = None


class OutputAddresses(SpecModel):
    output_addresses: list[OutputAddress] = Field(default_factory=list)
