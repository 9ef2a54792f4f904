"""Pydantic models of the newspaper API shapes (§2): the spec's field names as aliases, Pythonic attributes.

Every model keeps fields it does not know (``extra="allow"``) so nothing the service sends is dropped;
enums the spec leaves open are :class:`OpenEnum` strings that accept any value. Responses whose shape the
spec does not show are :class:`RawResponse` (see :mod:`connectors.newspaper.documents`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any, Generic, TypeVar

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
        alias_generator=to_camel, populate_by_name=True, extra="allow", coerce_numbers_to_str=True
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


class IssueNumber(SpecModel):
    from_: int | None = Field(default=None, alias="from")
    to: int | None = None


class BasisInformation(SpecModel):
    newspaper_number: str | None = None
    issue_number: IssueNumber | None = None
    late_delivery: bool | None = None
    delivery_date: dt.date | None = None
    difference_emails: list[str] | None = None
    confirmation_emails: list[str] | None = None


class Sender(SpecModel):
    company_name1: str | None = None
    address1: str | None = None
    zip_code: int | None = None
    city: str | None = None


class SortedShipment(SpecModel):
    weight: int | None = None
    count_mail_man: int | None = None
    count_city: int | None = None
    count_rest: int | None = None
    shipment_remark: str | None = None


class SortedDelivery(SpecModel):
    sorted_shipments: list[SortedShipment] | None = None
    large_edition_shipments: list[dict[str, Any]] | None = None
    appendix_shipments: list[dict[str, Any]] | None = None
    sort_file: dict[str, Any] | None = None


class NationalDelivery(SpecModel):
    sorted_delivery: SortedDelivery | None = None


class InternationalItem(SpecModel):
    weight: int | None = None
    count: int | None = None
    shipment_remark: str | None = None


class InternationalShipment(SpecModel):
    product_label: str | None = None
    country: str | None = None
    contract_price: bool | None = None
    priority_shipments: list[InternationalItem] | None = None
    economy_shipments: list[InternationalItem] | None = None


class InternationalDelivery(SpecModel):
    international_shipments: list[InternationalShipment] | None = None


class StandardOrder(SpecModel):
    language: str | None = None
    basis_information: BasisInformation | None = None
    sender: Sender | None = None
    national_delivery: NationalDelivery | None = None
    international_delivery: InternationalDelivery | None = None


class GratisOrder(SpecModel):
    """The gratis order body is not shown: the fields shared with the standard order, everything else kept."""

    language: str | None = None
    basis_information: BasisInformation | None = None
    sender: Sender | None = None


# --- 2.2-2.5 orders and newspapers ---------------------------------------------------------------------


class OrderStatus(SpecModel):
    status_value: OrderStatusValue | None = None
    status_date: dt.datetime | None = None

    @property
    def in_control(self) -> bool:
        return (self.status_value or "").upper() == OrderStatusValue.CONTROL


class OrderSummary(SpecModel):
    issue_date: dt.date | None = None
    issue_number: IssueNumber | None = None
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
    customer_reference: str | None = None
    dispatcher: str | None = None
    forwarding_name: str | None = None
    issue_number_from: int | None = None
    language: str | None = None
    product_code: ProductCode | None = None
    sender: str | None = None
    sending_international: SendingOption | None = None
    sending_swiss: SendingOption | None = None
    weight_per_copy_in_gram: int | None = None
    postage_paid_impression_swiss: str | None = None
    postage_paid_impression_international: str | None = None


class SizeRange(SpecModel):
    min: int | None = None
    max: int | None = None
    unit: str | None = None


class SimplifiedConfiguration(SpecModel):
    bundle: SizeRange | None = None
    container: SizeRange | None = None


class SortingModule(SpecModel):
    level_sorting: LevelSorting | None = None
    sorting_parameters: SortingParameters | None = None
    simplified_configuration: SimplifiedConfiguration | None = None


class Purchase(SpecModel):
    title: str | None = None
    deposit_date: dt.date | None = None
    language: str | None = None
    franking_licence: str | None = None
    offer_option: OfferOption | None = None
    offer_email: str | None = None
    addresses: list[PurchaseAddress] = Field(default_factory=list)
    level_validation: LevelValidation | None = None
    sorting_module: SortingModule | None = None


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
