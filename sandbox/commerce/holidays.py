"""Swiss national public holidays the sandbox's delivery calendar keeps (fixed dates and the Easter-based
ones), and which days are working days for letters and parcels: Monday to Saturday, holidays excepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache

_SUNDAY = 6


@dataclass(frozen=True)
class Holiday:
    day: date
    name: dict[str, str]


def _name(de: str, fr: str, it: str, en: str) -> dict[str, str]:
    return {"de": de, "fr": fr, "it": it, "en": en}


def easter_sunday(year: int) -> date:
    """Easter Sunday of the Gregorian calendar (the anonymous Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 19 * weekday) // 433
    month = (h + weekday - 7 * m + 90) // 25
    return date(year, month, (h + weekday - 7 * m + 33 * month + 19) % 32)


@cache
def swiss_holidays(year: int) -> tuple[Holiday, ...]:
    """The holidays of ``year`` in date order."""
    easter = easter_sunday(year)
    days = [
        Holiday(date(year, 1, 1), _name("Neujahr", "Nouvel An", "Capodanno", "New Year's Day")),
        Holiday(
            date(year, 1, 2), _name("Berchtoldstag", "Saint-Berthold", "San Bertoldo", "Berchtold's Day")
        ),
        Holiday(
            easter - timedelta(days=2), _name("Karfreitag", "Vendredi saint", "Venerdì santo", "Good Friday")
        ),
        Holiday(
            easter + timedelta(days=1),
            _name("Ostermontag", "Lundi de Pâques", "Lunedì dell'Angelo", "Easter Monday"),
        ),
        Holiday(easter + timedelta(days=39), _name("Auffahrt", "Ascension", "Ascensione", "Ascension Day")),
        Holiday(
            easter + timedelta(days=50),
            _name("Pfingstmontag", "Lundi de Pentecôte", "Lunedì di Pentecoste", "Whit Monday"),
        ),
        Holiday(
            date(year, 8, 1), _name("Bundesfeier", "Fête nationale", "Festa nazionale", "Swiss National Day")
        ),
        Holiday(date(year, 12, 25), _name("Weihnachten", "Noël", "Natale", "Christmas Day")),
        Holiday(
            date(year, 12, 26), _name("Stephanstag", "Saint-Etienne", "Santo Stefano", "St Stephen's Day")
        ),
    ]
    return tuple(days)


def is_holiday(day: date) -> bool:
    return any(holiday.day == day for holiday in swiss_holidays(day.year))


def is_working_day(day: date) -> bool:
    """Monday to Saturday, holidays excepted."""
    return day.weekday() != _SUNDAY and not is_holiday(day)


def previous_working_day(day: date) -> date:
    """The last working day before ``day``."""
    earlier = day - timedelta(days=1)
    while not is_working_day(earlier):
        earlier -= timedelta(days=1)
    return earlier
