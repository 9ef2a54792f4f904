"""The requests of the commerce flows around parcels: pickup points near a file's locations, address labels
and return orders from the JSON bodies a user supplies."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from flows.requests.base import RequestPart, argument, option
from flows.requests.common import Concurrent, Resubmission, concurrency

JSON_BODIES = (
    "one JSON object, an array of them, or JSON lines (one object per line); each is sent as it is (the "
    "specification does not show the fields)"
)


class PickupPointsRequest(RequestPart):
    """The locations to find pickup points near, and how many queries at once."""

    input_path: Annotated[Path, argument("input_path")] = option(
        "Locations file",
        "The locations, a .csv or .xlsx file on the worker: zip (required), street, houseNumber, city, "
        "countryCode (default CH); optionally gender, firstName, lastName, language, notifyMode, email, "
        "mobileNumber, sent when given.",
    )
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
