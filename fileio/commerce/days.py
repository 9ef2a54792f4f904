"""The days a deliverability check covers: at most :data:`MAX_DAYS` from a first day (no Prefect here, so the
CLI checks ``--days`` before Prefect loads)."""

from __future__ import annotations

import datetime as dt

MAX_DAYS = 60


def requested_days(start: dt.date, days: int) -> list[dt.date]:
    """The ``days`` days from ``start``.

    Raises:
        ValueError: ``days`` is not between 1 and :data:`MAX_DAYS`.
    """
    if not 1 <= days <= MAX_DAYS:
        raise ValueError(f"days must be between 1 and {MAX_DAYS}, got {days}")
    return [start + dt.timedelta(days=offset) for offset in range(days)]
