"""The services' "today" is Swiss: a machine on UTC is a day behind between midnight and one (winter) or two
(summer) in the morning, Swiss time, and its local date must not decide which dates the rules accept."""

from __future__ import annotations

import datetime as dt

import pytest

from connectors.commerce.client import CommerceClient
from connectors.newspaper.client import NewspaperClient
from core.swiss_time import swiss_today


@pytest.mark.parametrize(
    ("utc", "day"),
    [
        ("2026-01-14T22:59:59", "2026-01-14"),  # 23:59:59 in Zurich (CET, +1)
        ("2026-01-14T23:00:00", "2026-01-15"),  # midnight in Zurich, still the 14th in UTC
        ("2026-07-14T21:59:59", "2026-07-14"),  # 23:59:59 in Zurich (CEST, +2)
        ("2026-07-14T22:00:00", "2026-07-15"),
        ("2026-03-29T00:59:59", "2026-03-29"),  # the night the clocks go forward
        ("2026-10-25T00:30:00", "2026-10-25"),  # the night they go back
    ],
)
def test_today_is_the_day_in_zurich(utc: str, day: str) -> None:
    moment = dt.datetime.fromisoformat(utc).replace(tzinfo=dt.UTC)
    assert swiss_today(moment) == dt.date.fromisoformat(day)


def test_a_moment_in_another_zone_is_read_in_zurich() -> None:
    new_york = dt.timezone(dt.timedelta(hours=-5))
    assert swiss_today(dt.datetime(2026, 1, 14, 19, 30, tzinfo=new_york)) == dt.date(2026, 1, 15)


@pytest.mark.parametrize("client", [NewspaperClient, CommerceClient])
def test_the_clients_count_their_date_rules_in_swiss_days(client: type) -> None:
    import inspect

    assert inspect.signature(client.__init__).parameters["today"].default is swiss_today
