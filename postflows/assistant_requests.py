"""The address assistant's auto-complete as the ``postflows autocomplete`` command takes it: one request
part (:mod:`flows.requests.base`), declared as the flows' commands declare theirs, so its options are read
from one model (:func:`postflows.cli_requests.request_command`). Nothing here imports the connectors: the
command line builds its options from it before anything is asked."""

from __future__ import annotations

from typing import Annotated, Literal

from flows.requests.base import RequestPart, argument, flag, option


class AutocompleteRequest(RequestPart):
    """What to complete (§4.3), how to restrict it, and which version of /autocomplete asks."""

    target: Annotated[Literal["towns", "streets", "buildings"], argument("target")] = option(
        "Target", "What to complete"
    )
    zip_code: Annotated[str, flag("--zip")] = option("Zip", "Postcode or its beginning", "")
    town_name: Annotated[str, flag("--town")] = option(
        "Town", "Town name or the beginning of one of its words", ""
    )
    street_name: Annotated[str, flag("--street")] = option(
        "Street", "Street name or the beginning of a word", ""
    )
    onrp: Annotated[int, flag("--onrp")] = option("Town number", "Restrict streets to this town number", 0)
    strid: Annotated[int, flag("--strid")] = option(
        "Street number", "Restrict buildings to this street number", 0
    )
    house_no: Annotated[str, flag("--house-no")] = option("House number", "House number or its beginning", "")
    house_no_addition: Annotated[str, flag("--addition")] = option(
        "House number addition", "House number addition", ""
    )
    zip_order_mode: Annotated[int, flag("--order")] = option("Order", "zipOrderMode 0, 1 or 2", 0)
    zip_filter_mode: Annotated[int, flag("--zip-filter-mode")] = option(
        "Zip filter mode",
        "zipFilterMode of autocomplete4 (the specification shows 0 and no other value's meaning)",
        0,
        ge=0,
    )
    version: Annotated[int, flag("--version")] = option("Version", "autocomplete 4, 3 or 2", 4)
