"""The requests of the newspaper API's flows that read their work from files or the run history: structure
files, master data, statistics and reports. An order's and a purchase's requests, which carry a form of the
spec's bodies, are in :mod:`flows.requests.newspaper_orders`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, WithJsonSchema

from fileio.newspaper.intervals import StatisticsInterval
from flows.forms import Blank, BlankDate, blank_to_none
from flows.requests.base import WORK, RequestPart, argument, flag, option
from flows.requests.common import KeyedWork, Resubmission


class StructureFilesRequest(Resubmission):
    """Which structure files to download, and the address to register for notices of new versions."""

    file_code: Annotated[int, argument("code", required=True)] = option(
        "File code", "Which structure files: 1 = AZ/GZA, 2 = AZA/AZB, 9 = both.", 9, enum=[1, 2, 9]
    )
    notify_email: Annotated[Blank[str], flag("--notify")] = option(
        "Notice e-mail",
        "Register this address for notices of new structure file versions (once: a later run with the same "
        "address sends nothing). Empty: register none.",
        None,
        blank="",
    )


class MasterDataRequest(RequestPart):
    """Which newspaper's master data to sync."""

    newspaper_number: Annotated[Blank[int], argument("newspaper_number", required=True)] = option(
        "Newspaper number",
        "The newspaper whose summary, distribution list and black list are synced (the lists exist for "
        "gratis newspapers only). 0: every newspaper synced before, each as its own run.",
        None,
        blank=0,
        minimum=0,
    )


ANY_INTERVAL = "any"


def _interval(value: Any) -> Any:
    if not isinstance(value, str):
        return blank_to_none(value)
    word = value.strip().upper()
    if not word or word == ANY_INTERVAL.upper():
        return None
    if word not in {interval.value for interval in StatisticsInterval}:
        names = ", ".join(interval.value for interval in StatisticsInterval)
        raise ValueError(
            f"{value!r} is not a statistics interval: choose one of {names} (quarterly, every six months, "
            "yearly)"
        )
    return word


IntervalChoice = Annotated[
    StatisticsInterval | None,
    BeforeValidator(_interval),
    WithJsonSchema({"type": "string", "enum": [ANY_INTERVAL, *(i.value for i in StatisticsInterval)]}),
]
"""A statistics interval, or ``any`` (in the form) / None: no interval is checked."""


class StatisticsRequest(KeyedWork, Resubmission):
    """The statistics to send (a file, or the files waiting in a folder or the inbox) and the issue calendar
    that decides whether a submission closes its period."""

    input_path: Annotated[Blank[Path], argument("file", required=True)] = option(
        "Statistics file",
        "The statistics records, a .csv or .xlsx file on the worker (§2.6 column names or German aliases). A "
        "folder, or empty, sends every file waiting there, each as its own run; empty is the statistics "
        "inbox <data dir>/inbox/newspaper-statistics/<interval>.",
        None,
        blank="",
    )
    calendar_path: Annotated[Blank[Path], flag("--calendar")] = option(
        "Issue calendar file",
        "The year's issue calendar (.csv/.xlsx with a deliveryDate or date column), needed to check an "
        "interval. Empty: none, or for a folder its calendar.csv or calendar.xlsx.",
        None,
        blank="",
    )
    issue_calendar: Blank[list[dt.date]] = option(
        "Issue dates", "The issue calendar as dates, instead of (or besides) a calendar file.", None, blank=[]
    )
    submission_date: Annotated[BlankDate, flag("--date", takes="date"), WORK] = option(
        "Submission date",
        "The submission the statistics belong to, YYYY-MM-DD. Empty: the file's latest deliveryDate.",
        None,
        blank="",
    )
    interval: Annotated[IntervalChoice, flag("--interval", takes="text")] = option(
        "Interval",
        "AZ (quarter), AZA (semester) or AZB (year): send only when this submission is the last of its "
        "period. any: no such check.",
        None,
        blank=ANY_INTERVAL,
    )


class ReportsRequest(RequestPart):
    """Whose reports to fetch: one order, or (without an order id) every recent order whose reports are
    due."""

    order_id: Annotated[Blank[int], argument("order_id")] = option(
        "Order id",
        "The order id the service returned when the order was submitted. 0 or empty: every order of the "
        "last days whose reports are missing or older than its status, each into its own folder.",
        None,
        blank=0,
        minimum=0,
    )
    kind: Blank[Literal["auto", "standard", "gratis"]] = option(
        "Kind of order",
        "Standard or gratis; auto: found out from the original order (a sweep takes each order's kind from "
        "the run history).",
        "auto",
        blank="auto",
    )
    days: Annotated[int, flag("--days", unset=True)] = option(
        "Days back", "A sweep looks at the orders recorded in this many last days.", 30, ge=1
    )
