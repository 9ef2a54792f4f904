"""The days a deliverability check covers: at most :data:`MAX_DAYS` from a first day, or as many explicit
delivery dates, given as a comma-separated list or a file of one date a line (no Prefect here, and nothing
of the connectors before a file is read, so the command line checks them before Prefect loads)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from pathlib import Path

MAX_DAYS = 60
DATES_FILE_MAX_BYTES = 64 << 10
"""Largest file of delivery dates read (64 KiB): :data:`MAX_DAYS` dates need a few hundred bytes."""

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# What a list of dates may hold; anything else is the path of a file.
_LIST = re.compile(r"[\d\s,-]+")
_QUOTES = "\"'"


def requested_days(start: dt.date, days: int) -> list[dt.date]:
    """The ``days`` days from ``start``.

    Raises:
        ValueError: ``days`` is not between 1 and :data:`MAX_DAYS`.
    """
    if not 1 <= days <= MAX_DAYS:
        raise ValueError(f"days must be between 1 and {MAX_DAYS}, got {days}")
    return [start + dt.timedelta(days=offset) for offset in range(days)]


def is_date_list(spec: str) -> bool:
    """Whether ``spec`` is a list of dates (digits, dashes, commas, blanks) rather than a file's path."""
    return "," in spec or _LIST.fullmatch(spec.strip()) is not None


def parse_day(text: str) -> dt.date:
    """A date written YYYY-MM-DD.

    Raises:
        ValueError: naming ``text``.
    """
    value = text.strip()
    try:
        if _DATE.fullmatch(value) is None:
            raise ValueError(value)
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a date YYYY-MM-DD") from None


def date_list(spec: str) -> list[dt.date]:
    """The dates of a comma-separated list, each once, in order (:func:`bounded`).

    Raises:
        ValueError: a value that is not a date (named), no date, or more than :data:`MAX_DAYS`.
    """
    return bounded(parse_day(value) for value in spec.split(",") if value.strip())


def bounded(dates: Iterable[dt.date]) -> list[dt.date]:
    """``dates`` each once, in order; at least one and at most :data:`MAX_DAYS`.

    Raises:
        ValueError: none, or more than :data:`MAX_DAYS`.
    """
    unique = sorted(set(dates))
    if not unique:
        raise ValueError("no delivery date given")
    if len(unique) > MAX_DAYS:
        raise ValueError(f"at most {MAX_DAYS} delivery dates are asked about at once, got {len(unique)}")
    return unique


def read_date_file(path: Path) -> list[dt.date]:
    """The dates of a file of one date a line, or of a one-column CSV file (its first line may be a header
    such as ``date``); blank lines are skipped.

    Raises:
        InputError: the file cannot be read, is over :data:`DATES_FILE_MAX_BYTES`, or a line (named) holds
            more than one column or no date; no date, or more than :data:`MAX_DAYS`.
    """
    from fileio.errors import InputError
    from fileio.textfiles import decode_text

    try:
        if path.stat().st_size > DATES_FILE_MAX_BYTES:
            raise InputError(
                f"a file of delivery dates holds at most {DATES_FILE_MAX_BYTES:,} bytes", path=path
            )
        text = decode_text(path.read_bytes()).text
    except FileNotFoundError:
        raise InputError(
            "no such file, nor a list of dates: give YYYY-MM-DD[,YYYY-MM-DD...] or a file of dates", path=path
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"the file of delivery dates cannot be read: {error}", path=path) from None
    dates: list[dt.date] = []
    for number, line in enumerate(text.splitlines(), start=1):
        cells = [cell.strip().strip(_QUOTES).strip() for cell in re.split("[,;\t]", line)]
        values = [cell for cell in cells if cell]
        if not values:
            continue
        if len(values) > 1:
            raise InputError(f"line {number} holds more than one column: {line.strip()!r}", path=path)
        if number == 1 and not any(char.isdigit() for char in values[0]):
            continue  # a header
        try:
            dates.append(parse_day(values[0]))
        except ValueError as error:
            raise InputError(f"line {number}: {error}", path=path) from None
    try:
        return bounded(dates)
    except ValueError as error:
        raise InputError(str(error), path=path) from None


def delivery_dates(spec: str) -> list[dt.date]:
    """The explicit delivery dates ``spec`` names: a comma-separated list of YYYY-MM-DD, or the path of a
    file of dates (:func:`read_date_file`).

    Raises:
        ValueError: a list holding a value that is not a date (named), no date or too many.
        InputError: the same of a file (naming its line), or a file that cannot be read.
    """
    if is_date_list(spec):
        return date_list(spec)
    return read_date_file(Path(spec.strip()))
