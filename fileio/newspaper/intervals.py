"""When statistics are due (§8): AZ newspapers report the last submission of each quarter, AZA the last of
each semester, AZB the last of each year. A pure decision over the issue calendar.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from enum import StrEnum


class StatisticsInterval(StrEnum):
    """The reporting interval of a postage-paid impression."""

    AZ = "AZ"  # quarterly
    AZA = "AZA"  # every six months
    AZB = "AZB"  # yearly

    @property
    def months(self) -> int:
        return {"AZ": 3, "AZA": 6, "AZB": 12}[self.value]


def period_of(day: dt.date, interval: StatisticsInterval) -> tuple[int, int]:
    """(year, number of the quarter/semester/year within it, from 1) that ``day`` falls in."""
    return day.year, (day.month - 1) // interval.months + 1


def period_end(day: dt.date, interval: StatisticsInterval) -> dt.date:
    """The last day of the quarter, semester or year that ``day`` falls in."""
    _, number = period_of(day, interval)
    last_month = number * interval.months
    following = dt.date(day.year + 1, 1, 1) if last_month == 12 else dt.date(day.year, last_month + 1, 1)
    return following - dt.timedelta(days=1)


def is_last_submission(
    calendar: Iterable[dt.date], submission: dt.date, interval: StatisticsInterval
) -> bool:
    """Whether ``submission`` is the last issue of its period: no calendar date after it in the same period.

    The submission date need not be in the calendar. An empty calendar lists no later issue, so every
    submission closes its period.
    """
    period = period_of(submission, interval)
    return not any(day > submission and period_of(day, interval) == period for day in calendar)


def closing_intervals(calendar: Iterable[dt.date], submission: dt.date) -> dict[StatisticsInterval, bool]:
    """For each interval, whether ``submission`` is the last issue of its period."""
    days = sorted(set(calendar))
    return {interval: is_last_submission(days, submission, interval) for interval in StatisticsInterval}


def next_issue_in_period(
    calendar: Iterable[dt.date], submission: dt.date, interval: StatisticsInterval
) -> dt.date | None:
    """The next calendar date after ``submission`` in the same period, or None when it closes the period."""
    period = period_of(submission, interval)
    later = sorted(day for day in calendar if day > submission and period_of(day, interval) == period)
    return later[0] if later else None


def last_issue_in_period(
    calendar: Iterable[dt.date], submission: dt.date, interval: StatisticsInterval
) -> dt.date:
    """The last calendar date of ``submission``'s period (``submission`` itself when none comes later): the
    submission whose statistics the period's transmission carries."""
    period = period_of(submission, interval)
    return max((day for day in calendar if period_of(day, interval) == period), default=submission)
