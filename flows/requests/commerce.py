"""The requests of the commerce API's flows."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import ValidationInfo, field_validator

from fileio.commerce.days import MAX_DAYS as MAX_DAYS  # the command line reads it here
from fileio.commerce.days import date_list, is_date_list
from fileio.writeback_policy import CERTIFIED, FURTHER_QUALITIES, FurtherQuality
from flows.forms import SPLIT_HOUSE_NUMBERS, Blank, BlankDate
from flows.requests.base import RequestPart, argument, flag, option
from flows.requests.common import Concurrency, Concurrent, Resubmission, TableReading, concurrency
from flows.requests.parcels import SplitStreetLines, split_street_lines

DEFAULT_DAYS = 14


class CommerceAddressFile(RequestPart):
    """An address file on the worker, for the commerce API."""

    input_path: Annotated[Path, argument("input_path")] = option(
        "Address file",
        "The address file on the worker: .csv or .xlsx; zip and city required, street and house number "
        "optional.",
    )


class CommerceAddressRequest(Concurrency, TableReading, CommerceAddressFile):
    """A commerce flow's address file, how it is read (house numbers split from the street, as the address
    batch does) and how many requests go at once."""

    split_house_numbers: Annotated[bool, flag("--split/--no-split")] = option(
        "Split house numbers", SPLIT_HOUSE_NUMBERS, True
    )

    def identity(self) -> dict[str, Any]:
        """How the file is read (as the commerce flows have always named it in their keys; a split left out
        is named too)."""
        identity = {
            "sheet": self.input_sheet,
            "delimiter": self.input_delimiter,
            "encoding": self.input_encoding,
        }
        return identity if self.split_house_numbers else {**identity, "split_house_numbers": False}


class QualitiesWrittenBack(RequestPart):
    """Which answers of an address validation go back into the copy of the customer's own file besides the
    certified ones."""

    apply: Annotated[Blank[list[FurtherQuality]], flag("--apply")] = option(
        "Write back also",
        "writeback.<ext>, the copy of your file in its own layout, takes the addresses answered CERTIFIED. "
        f"Name further qualities to write theirs too ({', '.join(FURTHER_QUALITIES)}; --apply once for "
        "each). Every other changed row stays as you gave it and is listed in writeback-skipped.csv.",
        None,
        blank=[],
    )

    @field_validator("apply", mode="before")
    @classmethod
    def _known_qualities(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        unknown = [name for name in value if name != CERTIFIED and name not in FURTHER_QUALITIES]
        if unknown:
            raise ValueError(
                f"{', '.join(map(str, unknown))}: not a quality to write back; the qualities are "
                f"{', '.join(FURTHER_QUALITIES)} (CERTIFIED is always written back)"
            )
        return [name for name in value if name != CERTIFIED]


class AddressValidationRequest(QualitiesWrittenBack, CommerceAddressRequest):
    """The addresses to validate."""


class DeliverabilityRequest(CommerceAddressRequest):
    """The addresses and the days to ask about."""

    start: Annotated[BlankDate, flag("--from", takes="date")] = option(
        "First day", "The first day, YYYY-MM-DD. Empty: today.", None, blank=""
    )
    days: Annotated[int, flag("--days", unset=True)] = option(
        "Days",
        f"How many days from the first (1 to {MAX_DAYS}); {DEFAULT_DAYS} when not given.",
        DEFAULT_DAYS,
        minimum=1,
        maximum=MAX_DAYS,
    )
    dates: Annotated[Blank[str], flag("--dates")] = option(
        "Delivery dates",
        f"Explicit delivery dates instead of a first day and a number of days: YYYY-MM-DD separated by "
        f"commas, or the path of a file on the worker with one date a line (a one-column CSV); at most "
        f"{MAX_DAYS}. Empty: the days from the first day.",
        None,
        blank="",
    )

    @field_validator("dates")
    @classmethod
    def _dates_or_days(cls, value: str | None, info: ValidationInfo) -> str | None:
        """A list of dates is checked here (a file is read by the flow, and by the command's pre-check);
        either dates or a first day and a number of days."""
        if value is None:
            return None
        if info.data.get("start") is not None or info.data.get("days", DEFAULT_DAYS) != DEFAULT_DAYS:
            raise ValueError(
                "explicit delivery dates exclude a first day and a number of days (--from, --days): give one "
                "or the other"
            )
        if is_date_list(value):
            date_list(value)
        return value.strip()


class PickupRegistrationRequest(Resubmission):
    """The pickup users to register, and how many at once."""

    input_path: Annotated[Path, argument("input_path")] = option(
        "Pickup users file",
        "The pickup users, a .csv or .xlsx file on the worker: gender, firstName, lastName, language, "
        "street, houseNumber, zip, city, countryCode (default CH), notifyMode (default EMAIL), email, "
        "mobileNumber.",
    )
    split_house_numbers: SplitStreetLines = split_street_lines()
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
