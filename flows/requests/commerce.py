"""The requests of the commerce API's flows."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from flows.forms import Blank, BlankDate
from flows.requests.base import RequestPart, argument, flag, option
from flows.requests.common import Concurrency, Concurrent, Resubmission, TableReading, concurrency

MAX_DAYS = 60
"""The most days a deliverability check asks about (fileio.commerce.days', which the command line does not
import before a flow runs; a test holds them equal)."""


class CommerceAddressFile(RequestPart):
    """An address file on the worker, for the commerce API."""

    input_path: Annotated[Path, argument("input_path")] = option(
        "Address file",
        "The address file on the worker: .csv or .xlsx; zip and city required, street and house number "
        "optional.",
    )


class CommerceAddressRequest(Concurrency, TableReading, CommerceAddressFile):
    """A commerce flow's address file, how it is read and how many requests go at once."""

    def identity(self) -> dict[str, Any]:
        """How the file is read (as the commerce flows have always named it in their keys)."""
        return {"sheet": self.input_sheet, "delimiter": self.input_delimiter, "encoding": self.input_encoding}


class AddressValidationRequest(CommerceAddressRequest):
    """The addresses to validate."""


class DeliverabilityRequest(CommerceAddressRequest):
    """The addresses and the days to ask about."""

    start: Annotated[BlankDate, flag("--from", takes="date")] = option(
        "First day", "The first day, YYYY-MM-DD. Empty: today.", None, blank=""
    )
    days: Annotated[int, flag("--days")] = option(
        "Days", f"How many days from the first (1 to {MAX_DAYS}).", 14, minimum=1, maximum=MAX_DAYS
    )


class PickupRegistrationRequest(Resubmission):
    """The pickup users to register, and how many at once."""

    input_path: Annotated[Path, argument("input_path")] = option(
        "Pickup users file",
        "The pickup users, a .csv or .xlsx file on the worker: gender, firstName, lastName, language, "
        "street, houseNumber, zip, city, countryCode (default CH), notifyMode (default EMAIL), email, "
        "mobileNumber.",
    )
    concurrency: Concurrent = concurrency(4)


class ReferenceDataOutput(RequestPart):
    """Where a reference data sync writes the lists as received, if anywhere."""

    output_dir: Annotated[Blank[Path], flag("--out", "-o")] = option(
        "Output folder",
        "Folder on the worker for the lists as received (JSON) and summary.md. Empty: none are written (the "
        "tables and the run's summary have everything).",
        None,
        blank="",
    )
