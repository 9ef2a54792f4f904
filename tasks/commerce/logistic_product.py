"""The logistic product look-up (§2.6, GET deliverabilities/how/{productCode}): the answer, the names of its
delivery instructions and additional services from the stored reference data (when a delivery-sync stored
them), and the readable summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE

import history
from connectors.commerce import CommerceClient, LogisticProduct
from connectors.errors import NotFound
from fileio.lazy import lazy_module
from fileio.reports import markdown_table
from tasks.retrying import idempotent_step

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

API = "commerce"
MANDATORY = "mandatory"


@dataclass(frozen=True)
class OptionNames:
    """The names the stored reference data gives the codes (German first, else the first language given);
    empty when no delivery-sync has stored them."""

    additional_services: dict[str, str] = field(default_factory=dict)
    delivery_instructions: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, dict[str, str]]:
        return {
            "additionalServices": dict(self.additional_services),
            "deliveryInstructions": dict(self.delivery_instructions),
        }


@idempotent_step("commerce-logistic-product")
async def fetch_logistic_product(client: CommerceClient, product_code: str) -> LogisticProduct:
    """GET deliverabilities/how/{productCode}.

    Raises:
        NotFound: the service knows no such product (its 404, "no results" in §7), naming the code.
    """
    try:
        return await client.logistic_product(product_code)
    except NotFound as error:
        raise NotFound(
            f"{API}: no such product {product_code!r} (the service answered HTTP {error.status_code})",
            api=API,
            status_code=error.status_code,
        ) from None


@task(name="commerce-stored-option-names", cache_policy=NO_CACHE)
def stored_option_names(database_url: str) -> OptionNames:
    """The names of the additional services and delivery instructions the delivery-sync stored."""
    factory = history.session_factory(database_url)
    with factory() as session:
        services = {row.code: _name(row) for row in history.current_additional_services(session)}
        instructions = {row.code: _name(row) for row in history.current_delivery_instructions(session)}
    return OptionNames(
        {code: name for code, name in services.items() if name},
        {code: name for code, name in instructions.items() if name},
    )


def _name(row: Any) -> str:
    names = (row.name_de, row.name_fr, row.name_it, row.name_en)
    return next((str(name) for name in names if name), "")


def as_received(product: LogisticProduct) -> dict[str, Any]:
    """The product's fields as the service sent them (unknown fields kept)."""
    return product.model_dump(mode="json", by_alias=True, exclude_unset=True)


def instruction_rows(product: LogisticProduct, names: OptionNames) -> pd.DataFrame:
    """One row per delivery instruction: its code and stored name."""
    rows = [(item.code, names.delivery_instructions.get(item.code)) for item in product.delivery_instructions]
    return pd.DataFrame(rows, columns=["code", "name"], dtype=object)


def service_rows(product: LogisticProduct, names: OptionNames) -> pd.DataFrame:
    """One row per additional service: its code, whether it is mandatory and its stored name."""
    rows = [
        (item.code, "yes" if item.mandatory else "no", names.additional_services.get(item.code))
        for item in product.additional_services
    ]
    return pd.DataFrame(rows, columns=["code", MANDATORY, "name"], dtype=object)


def product_markdown(product: LogisticProduct, names: OptionNames) -> str:
    """The product as markdown: its code and barcode, its delivery instructions and its additional services
    (the mandatory ones marked)."""
    mandatory = [item.code for item in product.additional_services if item.mandatory]
    facts = pd.DataFrame(
        [
            ("product code", product.product_code),
            ("barcode", product.barcode or ""),
            ("mandatory additional services", ", ".join(mandatory) or "none"),
        ],
        columns=["what", "value"],
    )
    instructions, services = instruction_rows(product, names), service_rows(product, names)
    report = f"# Logistic product {product.product_code}\n\n{markdown_table(facts)}\n"
    report += "\n## Delivery instructions\n\n"
    report += (markdown_table(instructions) if len(instructions) else "_none_") + "\n"
    report += "\n## Additional services\n\n"
    report += (markdown_table(services) if len(services) else "_none_") + "\n"
    if not (names.additional_services or names.delivery_instructions):
        report += (
            "\n_Names come from the stored reference data: run `postflows delivery-sync` to have them._\n"
        )
    return report
