"""The requests of the commerce flows around parcels: pickup points near a file's locations, address labels
and return orders from the JSON bodies a user supplies."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from flows.requests.base import RequestPart, argument, flag, option
from flows.requests.common import Concurrent, Resubmission, concurrency

JSON_BODIES = (
    "one JSON object, an array of them, or JSON lines (one object per line); each is sent as it is (the "
    "specification does not show the fields)"
)


SplitStreetLines = Annotated[bool, flag("--split/--no-split")]
"""Whether a pickup file's street lines holding the house number are split, on the command line
``--split/--no-split``."""


def split_street_lines() -> Any:
    """The field of :data:`SplitStreetLines`: split unless told not to."""
    return option(
        "Split house numbers",
        "Split a street cell that holds the house number too ('Bahnhofstr. 1a') where the file has no house "
        "number column, as the address batch does; a line that cannot be split is sent as the street.",
        True,
    )


class PickupPointsRequest(RequestPart):
    """The locations to find pickup points near, and how many queries at once."""

    input_path: Annotated[Path, argument("input_path")] = option(
        "Locations file",
        "The locations, a .csv or .xlsx file on the worker: zip (required), street, houseNumber, city, "
        "countryCode (default CH); optionally gender, firstName, lastName, language, notifyMode, email, "
        "mobileNumber, sent when given.",
    )
    split_house_numbers: SplitStreetLines = split_street_lines()
    concurrency: Concurrent = concurrency(4)


class AddressLabelsRequest(Resubmission):
    """The address label requests to send, and how many at once."""

    input_path: Annotated[Path, argument("input_path")] = option(
        "Label requests file", f"The label requests, a JSON file on the worker: {JSON_BODIES}."
    )
    concurrency: Concurrent = concurrency(4)


class ReturnOrderRequest(Resubmission):
    """The return order (or orders) to send."""

    order_path: Annotated[Path, argument("file")] = option(
        "Return order file", f"The return order, a JSON file on the worker: {JSON_BODIES}."
    )
