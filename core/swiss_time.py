"""The day as the postal services count it: their date rules ("today or later", a first delivery day, a
submission date) are Swiss, so "today" is today in Europe/Zurich, whatever zone the machine runs in (a
worker in UTC is still on yesterday between midnight and one or two in the morning, Swiss time)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

SWISS_ZONE = ZoneInfo("Europe/Zurich")


def swiss_today(now: dt.datetime | None = None) -> dt.date:
    """Today in Switzerland; ``now`` (aware) is the moment to read it at, default the present."""
    moment = now if now is not None else dt.datetime.now(dt.UTC)
    return moment.astimezone(SWISS_ZONE).date()
