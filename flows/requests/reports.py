"""The request of the history report: which address runs, which days, whether the month in progress counts."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationInfo, WithJsonSchema, field_validator

from flows.forms import BlankDate
from flows.requests.base import RequestPart, flag, option

ADDRESS_FLOWS = ("address-batch", "address-query", "address-validation")
"""The flows whose runs the report's address figures are taken from."""
EVERY_ADDRESS_FLOW = "all"


def _address_flow(value: Any) -> str | None:
    if value is None:
        return None
    word = str(value).strip().casefold()
    if word in ("", EVERY_ADDRESS_FLOW):
        return None
    if word not in ADDRESS_FLOWS:
        raise ValueError(f"{value!r} is not an address flow: choose one of {', '.join(ADDRESS_FLOWS)}")
    return word


AddressFlowChoice = Annotated[
    str | None,
    BeforeValidator(_address_flow),
    WithJsonSchema({"type": "string", "enum": [EVERY_ADDRESS_FLOW, *ADDRESS_FLOWS]}),
]
"""One of :data:`ADDRESS_FLOWS`, or ``all`` (in the form) / None: every one of them."""


class HistoryReportRequest(RequestPart):
    """What the history report covers."""

    flow: Annotated[AddressFlowChoice, flag("--flow", takes="text")] = option(
        "Address flow",
        f"Only the runs of this address flow in the address figures ({', '.join(ADDRESS_FLOWS)}); "
        f"{EVERY_ADDRESS_FLOW}: every one of them. The figures per API count every flow.",
        None,
        blank=EVERY_ADDRESS_FLOW,
    )
    since: Annotated[BlankDate, flag("--since", takes="date")] = option(
        "First day",
        "Count the runs from this day on, YYYY-MM-DD (Swiss time); the report starts with its month. "
        "Empty: the day of the first run recorded.",
        None,
        blank="",
    )
    until: Annotated[BlankDate, flag("--until", takes="date")] = option(
        "Last day",
        "Count the runs up to this day, YYYY-MM-DD, included (Swiss time). Empty: today.",
        None,
        blank="",
    )
    whole_months: Annotated[bool, flag("--whole-months")] = option(
        "Whole months only",
        "Leave the last day's month out: the report ends with the month before, the last whole one (the "
        "monthly schedule's report ends with the month just over).",
        False,
    )

    @field_validator("until")
    @classmethod
    def _after_the_first(cls, value: dt.date | None, info: ValidationInfo) -> dt.date | None:
        since = info.data.get("since")
        if value is not None and since is not None and since > value:
            raise ValueError(f"the last day {value.isoformat()} comes before the first, {since.isoformat()}")
        return value
