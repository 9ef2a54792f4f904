"""The requests of the newspaper API's flows that submit a body of the spec's: an order (§2.1) and an
address purchase (§2.7), each given as a file or filled in as a form (:mod:`flows.newspaper_forms`, whose
models are generated on import: only these two flows load them)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from flows.forms import AS_GIVEN, Blank, YesNoOrAsGiven
from flows.newspaper_forms import OrderForm, PurchaseForm
from flows.requests.base import WORK, argument, flag, option
from flows.requests.common import KeyedWork, Resubmission


class NewspaperOrderRequest(Resubmission):
    """A newspaper order to submit: a JSON file or the order filled in, standard or gratis, and the
    statuses its wait goes on in."""

    order_path: Annotated[Blank[Path], argument("order", required=True)] = option(
        "Order file",
        "The order as a JSON file on the worker (§2.1; a gratis order adds gratisDelivery). Leave empty when "
        "you fill in the order below.",
        None,
        blank="",
    )
    gratis: Annotated[bool, flag("--gratis")] = option(
        "Gratis order", "Submit a gratis order (orders/gratis) instead of a standard order.", False
    )
    waiting_statuses: Annotated[Blank[list[str]], flag("--wait-status")] = option(
        "Statuses to wait in",
        "Keep checking while the order is in one of these statuses besides CONTROL, which is always waited "
        "out. Empty: CONTROL only, so an order that stays LOADED (weights completed by hand) ends the run at "
        "once; name your contract's statuses (e.g. LOADED) to wait for its final one.",
        None,
        blank=[],
    )
    order: Blank[OrderForm] = option(
        "Order",
        "The order itself, when no order file is given: newspaper, issue and delivery date, sender and the "
        "shipments (a gratis order fills gratis delivery).",
        None,
        blank={},
    )


class AddressPurchaseRequest(Resubmission, KeyedWork):
    """An address purchase: the addresses, and the purchase parameters as a file or filled in."""

    addresses_path: Annotated[Path, argument("addresses")] = option(
        "Address file",
        "The addresses, a .csv or .xlsx file on the worker: id, firstName, lastName, street, houseNumber, "
        "zipCode, city, isoCode (or the address batch's header names).",
    )
    parameters_path: Annotated[Blank[Path], flag("--params", required=True)] = option(
        "Purchase parameters file",
        "The rest of the purchase (§2.7) as a JSON or YAML file on the worker. Leave empty when you fill in "
        "the purchase below.",
        None,
        blank="",
    )
    address_clean_up: Annotated[YesNoOrAsGiven, flag("--clean-up/--no-clean-up"), WORK] = option(
        "Address clean-up",
        "Order the address clean-up (and fetch the non-reusable addresses document): yes, no, or as the "
        "purchase parameters say.",
        None,
        blank=AS_GIVEN,
    )
    purchase: Blank[PurchaseForm] = option(
        "Purchase",
        "The purchase parameters themselves, when no parameters file is given: title, deposit date, franking "
        "licence, validation and sorting.",
        None,
        blank={},
    )
