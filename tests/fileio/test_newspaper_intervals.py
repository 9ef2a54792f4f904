"""When statistics are due: the last submission of its quarter (AZ), semester (AZA) or year (AZB)."""

from __future__ import annotations

import datetime as dt

import pytest

from fileio.newspaper.intervals import (
    StatisticsInterval,
    closing_intervals,
    is_last_submission,
    next_issue_in_period,
    period_end,
    period_of,
)

AZ, AZA, AZB = StatisticsInterval.AZ, StatisticsInterval.AZA, StatisticsInterval.AZB


def weekly(year: int, weekday: int = 1) -> list[dt.date]:
    """Every given weekday (0 = Monday) of ``year``."""
    day = dt.date(year, 1, 1)
    day += dt.timedelta(days=(weekday - day.weekday()) % 7)
    dates = []
    while day.year == year:
        dates.append(day)
        day += dt.timedelta(days=7)
    return dates


@pytest.mark.parametrize(
    ("day", "interval", "period"),
    [
        (dt.date(2025, 1, 1), AZ, (2025, 1)),
        (dt.date(2025, 3, 31), AZ, (2025, 1)),
        (dt.date(2025, 4, 1), AZ, (2025, 2)),
        (dt.date(2025, 12, 31), AZ, (2025, 4)),
        (dt.date(2025, 6, 30), AZA, (2025, 1)),
        (dt.date(2025, 7, 1), AZA, (2025, 2)),
        (dt.date(2025, 12, 31), AZB, (2025, 1)),
    ],
)
def test_period_of(day: dt.date, interval: StatisticsInterval, period: tuple[int, int]) -> None:
    assert period_of(day, interval) == period


def test_period_end_handles_leap_february_and_year_end() -> None:
    assert period_end(dt.date(2024, 2, 29), AZ) == dt.date(2024, 3, 31)
    assert period_end(dt.date(2024, 11, 5), AZ) == dt.date(2024, 12, 31)
    assert period_end(dt.date(2024, 2, 1), AZA) == dt.date(2024, 6, 30)
    assert period_end(dt.date(2024, 7, 1), AZB) == dt.date(2024, 12, 31)


def test_last_tuesday_of_each_quarter_closes_it() -> None:
    calendar = weekly(2025, weekday=1)  # Tuesdays
    last_of_q1 = max(day for day in calendar if day.month <= 3)
    assert last_of_q1 == dt.date(2025, 3, 25)
    assert is_last_submission(calendar, last_of_q1, AZ)
    assert not is_last_submission(calendar, last_of_q1, AZA)
    assert not is_last_submission(calendar, dt.date(2025, 3, 18), AZ)
    assert next_issue_in_period(calendar, dt.date(2025, 3, 18), AZ) == dt.date(2025, 3, 25)
    assert next_issue_in_period(calendar, last_of_q1, AZ) is None


def test_closing_intervals_at_year_end() -> None:
    calendar = weekly(2025, weekday=1)
    assert closing_intervals(calendar, dt.date(2025, 12, 30)) == {AZ: True, AZA: True, AZB: True}
    assert closing_intervals(calendar, dt.date(2025, 6, 24)) == {AZ: True, AZA: True, AZB: False}
    assert closing_intervals(calendar, dt.date(2025, 9, 30)) == {AZ: True, AZA: False, AZB: False}
    assert closing_intervals(calendar, dt.date(2025, 9, 23)) == {AZ: False, AZA: False, AZB: False}


def test_leap_day_issue_counts_in_the_first_quarter() -> None:
    calendar = [dt.date(2024, 2, 22), dt.date(2024, 2, 29), dt.date(2024, 4, 4)]
    assert not is_last_submission(calendar, dt.date(2024, 2, 22), AZ)
    assert is_last_submission(calendar, dt.date(2024, 2, 29), AZ)
    assert not is_last_submission(calendar, dt.date(2024, 2, 29), AZA)


def test_issues_of_the_next_year_do_not_keep_a_period_open() -> None:
    calendar = [dt.date(2024, 12, 27), dt.date(2025, 1, 3)]
    assert is_last_submission(calendar, dt.date(2024, 12, 27), AZB)
    assert is_last_submission(calendar, dt.date(2024, 12, 27), AZ)


def test_submission_not_in_calendar_is_judged_by_later_issues() -> None:
    calendar = [dt.date(2025, 5, 6), dt.date(2025, 5, 13)]
    assert not is_last_submission(calendar, dt.date(2025, 5, 7), AZ)
    assert is_last_submission(calendar, dt.date(2025, 5, 14), AZ)


def test_empty_calendar_lists_no_later_issue() -> None:
    assert closing_intervals([], dt.date(2025, 2, 11)) == {AZ: True, AZA: True, AZB: True}
    assert next_issue_in_period([], dt.date(2025, 2, 11), AZB) is None


def test_duplicates_and_order_do_not_matter() -> None:
    calendar = [dt.date(2025, 3, 25), dt.date(2025, 3, 4), dt.date(2025, 3, 25)]
    assert closing_intervals(calendar, dt.date(2025, 3, 25))[AZ]
    assert not closing_intervals(reversed(calendar), dt.date(2025, 3, 4))[AZ]
