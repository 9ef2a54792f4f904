"""The newspaper order (§2.1, with a gratis order's ``gratisDelivery``) and the purchase parameters (§2.7
without the addresses) as objects a clerk fills in the Prefect UI, with the spec's field names.

Every field is optional in the form (a run may name a JSON file instead); what is left empty is left out of
the request body, and the flow checks the body as it checks a file's. Fields the form does not show may
still be given by an API caller: they are kept.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from flows.forms import Blank


def _no_default(schema: dict[str, Any]) -> None:
    # An empty optional field is omitted by the form; a `null` default would be sent and refused.
    schema.pop("default", None)


def optional(title: str, description: str, **schema: Any) -> Any:
    """An optional field: empty in the form, None (left out of the body) in Python."""
    return Field(default=None, title=title, description=description, json_schema_extra=_with(schema))


def _with(extra: dict[str, Any]) -> Any:
    def update(schema: dict[str, Any]) -> None:
        _no_default(schema)
        schema.update(extra)

    return update


class SpecForm(BaseModel):
    """Base: the spec's camelCase names in the form and the body, Python names in code, extra fields kept."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def to_body(self) -> dict[str, Any]:
        """The request body: spec names; empty values, lists and objects left out."""
        pruned = _prune(self.model_dump(mode="json", by_alias=True, exclude_none=True))
        return pruned if isinstance(pruned, dict) else {}

    def is_empty(self) -> bool:
        """Nothing but defaults filled in (the form's untouched object)."""
        return not _prune(self.model_dump(mode="json", by_alias=True, exclude_defaults=True))


def _prune(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {key: _prune(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if item not in ("", [], {}, None)}
    if isinstance(value, list):
        return [item for item in (_prune(item) for item in value) if item not in ("", [], {}, None)]
    return value


# --- §2.1 order ------------------------------------------------------------------------------------------


class IssueNumberForm(SpecForm):
    from_: Blank[int] = Field(
        default=None,
        alias="from",
        title="Issue number",
        description="The number of this issue.",
        json_schema_extra=_with({"minimum": 1}),
    )
    to: Blank[int] = optional("Issue number to", "Last issue number, for several issues (greater than from).")


class BasisInformationForm(SpecForm):
    newspaper_number: Blank[str] = optional(
        "Newspaper number", "The newspaper's number (digits).", pattern=r"^\d*$", examples=["4711"]
    )
    issue_number: IssueNumberForm = Field(
        default_factory=IssueNumberForm, title="Issue number", description="The issue's number."
    )
    late_delivery: bool = Field(
        default=False, title="Late delivery", description="The issue is delivered late."
    )
    delivery_date: Blank[dt.date] = optional("Delivery date", "The delivery date: today or later.")
    difference_emails: list[str] = Field(
        default_factory=list,
        title="E-mails on discrepancy",
        description="Who is told when the delivered quantities differ.",
    )
    confirmation_emails: list[str] = Field(
        default_factory=list, title="Confirmation e-mails", description="Who receives the confirmation."
    )


class SenderForm(SpecForm):
    company_name1: Blank[str] = Field(
        default=None,
        alias="companyName1",
        title="Company",
        description="The sender's company name.",
        json_schema_extra=_with({}),
    )
    address1: Blank[str] = optional("Address", "Street and house number.")
    zip_code: Blank[int] = optional(
        "Postcode", "The sender's postcode, four digits.", minimum=1000, maximum=9999
    )
    city: Blank[str] = optional("City", "The sender's city.")


class SortedShipmentForm(SpecForm):
    weight: Blank[int] = optional("Weight (g)", "Weight of one copy in grams.", minimum=1)
    count_mail_man: Blank[int] = optional(
        "Copies for mail carriers", "Copies bundled per carrier.", minimum=0
    )
    count_city: Blank[int] = optional("Copies per locality", "Copies bundled per locality.", minimum=0)
    count_rest: Blank[int] = optional("Other copies", "Copies in other bundles.", minimum=0)
    shipment_remark: Blank[str] = optional("Remark", "A remark on this shipment.")


class SortedDeliveryForm(SpecForm):
    sorted_shipments: list[SortedShipmentForm] = Field(
        default_factory=list, title="Sorted shipments", description="One entry per weight class."
    )


class NationalDeliveryForm(SpecForm):
    sorted_delivery: SortedDeliveryForm = Field(
        default_factory=SortedDeliveryForm,
        title="Sorted delivery",
        description="Copies sorted for Switzerland.",
    )


class InternationalItemForm(SpecForm):
    weight: Blank[int] = optional("Weight (g)", "Weight of one copy in grams.", minimum=1)
    count: Blank[int] = optional("Copies", "Number of copies.", minimum=0)
    shipment_remark: Blank[str] = optional("Remark", "A remark on this shipment.")


class InternationalShipmentForm(SpecForm):
    product_label: Blank[str] = optional("Product", "The international product's label.")
    country: Blank[str] = optional("Country", "Two-letter ISO code, e.g. DE.", pattern=r"^([A-Za-z]{2})?$")
    contract_price: bool = Field(
        default=False,
        title="Contract price",
        description="Charged at the contract price, not the list price.",
    )
    priority_shipments: list[InternationalItemForm] = Field(
        default_factory=list, title="Priority", description="Copies sent by Priority mail."
    )
    economy_shipments: list[InternationalItemForm] = Field(
        default_factory=list, title="Economy", description="Copies sent by Economy mail."
    )


class InternationalDeliveryForm(SpecForm):
    international_shipments: list[InternationalShipmentForm] = Field(
        default_factory=list,
        title="International shipments",
        description="One entry per country and product.",
    )


class GratisShipmentForm(SpecForm):
    location_category: Literal["A", "B", "C"] = Field(
        default="A", title="Location category", description="A, B or C, as on the distribution list."
    )
    weight: Blank[int] = optional("Weight (g)", "Weight of one copy in grams.", minimum=1)
    count: Blank[int] = optional(
        "Copies", "Number of copies; empty: the current circulation of the category.", minimum=0
    )
    shipment_remark: Blank[str] = optional("Remark", "A remark on this shipment.")


class GratisDeliveryForm(SpecForm):
    gratis_shipments: list[GratisShipmentForm] = Field(
        default_factory=list, title="Gratis shipments", description="One entry per location category."
    )


class OrderForm(SpecForm):
    """A newspaper order (§2.1); a gratis order fills ``gratisDelivery`` instead of the deliveries."""

    language: Blank[str] = optional(
        "Language", "Language of the order, e.g. DE, FR, IT or EN.", examples=["DE"]
    )
    basis_information: BasisInformationForm = Field(
        default_factory=BasisInformationForm,
        title="Basis information",
        description="Newspaper, issue and delivery date: together they identify the order.",
    )
    sender: SenderForm = Field(
        default_factory=SenderForm, title="Sender", description="The company that sends the copies."
    )
    national_delivery: NationalDeliveryForm = Field(
        default_factory=NationalDeliveryForm, title="National delivery", description="Copies for Switzerland."
    )
    international_delivery: InternationalDeliveryForm = Field(
        default_factory=InternationalDeliveryForm,
        title="International delivery",
        description="Copies for other countries.",
    )
    gratis_delivery: GratisDeliveryForm = Field(
        default_factory=GratisDeliveryForm,
        title="Gratis delivery",
        description="A gratis order's shipments per location category (gratis orders only).",
    )


# --- §2.7 purchase ---------------------------------------------------------------------------------------


class SortingParametersForm(SpecForm):
    customer_reference: Blank[str] = optional("Customer reference", "Your reference for this purchase.")
    dispatcher: Blank[str] = optional("Dispatcher", "Who dispatches the copies.")
    forwarding_name: Blank[str] = optional("Forwarding name", "The name the shipment is forwarded under.")
    issue_number_from: Blank[int] = optional("Issue number", "The first issue number.", minimum=1)
    language: Blank[str] = optional("Language", "Language code, e.g. DE, FR, IT or EN.", examples=["DE"])
    product_code: Blank[str] = optional(
        "Product code", "The product, e.g. AZA_WEEKLY_AND_BI_MONTHLY.", examples=["AZA_WEEKLY_AND_BI_MONTHLY"]
    )
    sender: Blank[str] = optional("Sender", "The sender as printed.")
    sending_international: Blank[str] = optional(
        "Sending abroad", "How copies abroad are sent, e.g. PRIORITY.", examples=["PRIORITY"]
    )
    sending_swiss: Blank[str] = optional(
        "Sending in Switzerland", "How copies in Switzerland go, e.g. PRIORITY.", examples=["PRIORITY"]
    )
    weight_per_copy_in_gram: Blank[int] = optional(
        "Weight per copy (g)", "Weight of one copy in grams.", minimum=1
    )
    postage_paid_impression_swiss: Blank[str] = optional(
        "Postage paid impression (CH)", "As printed in Switzerland, e.g. AZA 6280 Hochdorf."
    )
    postage_paid_impression_international: Blank[str] = optional(
        "Postage paid impression (abroad)", "As printed abroad, e.g. PP Hochdorf."
    )


class SizeRangeForm(SpecForm):
    min: Blank[int] = optional("Minimum", "The smallest size, in the unit below.", minimum=0)
    max: Blank[int] = optional("Maximum", "The largest size, in the unit below.", minimum=0)
    unit: Blank[str] = optional("Unit", "The unit of minimum and maximum, e.g. GRAM.", examples=["GRAM"])


class SimplifiedConfigurationForm(SpecForm):
    bundle: SizeRangeForm = Field(
        default_factory=SizeRangeForm, title="Bundle", description="The size range of a bundle."
    )
    container: SizeRangeForm = Field(
        default_factory=SizeRangeForm, title="Container", description="The size range of a container."
    )


class SortingModuleForm(SpecForm):
    level_sorting: Blank[str] = optional(
        "Sorting level", "How finely to sort, e.g. NORMAL.", examples=["NORMAL"]
    )
    sorting_parameters: SortingParametersForm = Field(
        default_factory=SortingParametersForm,
        title="Sorting parameters",
        description="How the addresses are sorted and labelled.",
    )
    simplified_configuration: SimplifiedConfigurationForm = Field(
        default_factory=SimplifiedConfigurationForm,
        title="Bundles and containers",
        description="Size ranges of bundles and containers.",
    )


class PurchaseForm(SpecForm):
    """The purchase parameters (§2.7 without the addresses, which come from the address file)."""

    title: Blank[str] = optional("Title", "Names the purchase (shown to the service's staff).")
    deposit_date: Blank[dt.date] = optional("Deposit date", "When the copies are deposited: today or later.")
    language: Blank[str] = optional("Language", "Language code, e.g. DE, FR, IT or EN.", examples=["DE"])
    franking_licence: Blank[str] = optional("Franking licence", "The franking licence, e.g. AZA-6280-0001.")
    offer_option: Blank[str] = optional(
        "Offer", "Whether an offer is made, e.g. NO_PRICE.", examples=["NO_PRICE"]
    )
    offer_email: Blank[str] = optional("Offer e-mail", "The e-mail address the offer is sent to.")
    level_validation: Blank[str] = optional(
        "Validation level", "How thoroughly to validate, e.g. COMPLETE.", examples=["COMPLETE"]
    )
    sorting_module: SortingModuleForm = Field(
        default_factory=SortingModuleForm,
        title="Sorting",
        description="Sorting by mail carrier district and route; leave empty for validation only.",
    )
