"""The requests of the commerce API's look-up flows: a logistic product (§2.6) and the same-day acceptance
points of an address (§2.8), and where their answers go."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

from pydantic import field_validator

from flows.forms import Blank, BlankDate
from flows.requests.base import RequestPart, argument, flag, option

_ZIP = re.compile(r"\d{4}")
LONGEST_PRODUCT_CODE = 50


class LogisticProductRequest(RequestPart):
    """The logistic product to look up."""

    product_code: Annotated[str, argument("code")] = option(
        "Product code",
        "The logistic product's code, as a deliverability answer lists it (ECO, PRI, …).",
        maxLength=LONGEST_PRODUCT_CODE,
    )

    @field_validator("product_code")
    @classmethod
    def _a_code(cls, value: str) -> str:
        code = value.strip()
        if not code or len(code) > LONGEST_PRODUCT_CODE or any(char.isspace() for char in code):
            raise ValueError(f"a product code is one word of at most {LONGEST_PRODUCT_CODE} characters")
        return code


class SameDayAcceptanceRequest(RequestPart):
    """The address a same-day delivery goes to, and its day."""

    zip_code: Annotated[str, flag("--zip")] = option(
        "Zip", "The address's postcode (4 digits).", pattern=r"^\s*\d{4}\s*$", examples=["8001"]
    )
    city: Annotated[Blank[str], flag("--city")] = option("City", "The address's town.", None, blank="")
    street: Annotated[Blank[str], flag("--street")] = option(
        "Street", "The address's street.", None, blank=""
    )
    house_number: Annotated[Blank[str], flag("--house-number")] = option(
        "House number", "The address's house number.", None, blank=""
    )
    delivery_date: Annotated[BlankDate, flag("--date", takes="date")] = option(
        "Delivery date", "The day of the delivery, YYYY-MM-DD. Empty: today (Swiss time).", None, blank=""
    )

    @field_validator("zip_code")
    @classmethod
    def _swiss_zip(cls, value: str) -> str:
        if _ZIP.fullmatch(value.strip()) is None:
            raise ValueError(f"a postcode has 4 digits, got {value!r}")
        return value.strip()


class LookupOutput(RequestPart):
    """Where a look-up writes its answer, if anywhere."""

    output_dir: Annotated[Blank[Path], flag("--out", "-o")] = option(
        "Output folder",
        "Folder on the worker for the answer and summary.md. Empty: none are written (the run's summary "
        "shows the answer).",
        None,
        blank="",
    )
