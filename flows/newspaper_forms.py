"""The newspaper order (§2.1, with a gratis order's ``gratisDelivery``) and the purchase parameters (§2.7
without the addresses) as objects a clerk fills in the Prefect UI, with the spec's field names.

Both are generated from the connector's request models (:mod:`flows.spec_forms`): a title, a description or
a constraint changes there. Every field is optional in the form (a run may name a JSON file instead); what
is left empty is left out of the request body, and the flow reads and checks the body as it does a file's.
Fields the form does not show may still be given by an API caller: they are kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from connectors.newspaper import GratisOrder, Purchase, StandardOrder
from flows.spec_forms import SpecForm, form_model

if TYPE_CHECKING:
    OrderForm = SpecForm
    PurchaseForm = SpecForm
else:
    OrderForm = form_model(
        "OrderForm",
        StandardOrder,
        GratisOrder,
        doc="A newspaper order (§2.1); a gratis order fills ``gratisDelivery`` instead of the deliveries.",
    )
    PurchaseForm = form_model(
        "PurchaseForm",
        Purchase,
        exclude=frozenset({"addresses"}),
        doc="The purchase parameters (§2.7 without the addresses, which come from the address file).",
    )

__all__ = ["OrderForm", "PurchaseForm", "SpecForm"]
