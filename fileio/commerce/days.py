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
# A cell of a line of a file of dates: up to a comma, semicolon or tab.
_CELL = re.compile("[^,;\t]*")


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
    such as ``date``); blank lines are skipped. At most :data:`DATES_FILE_MAX_BYTES` are read, whatever the
    path is (a device, a pipe).

    A refused line is named by its number and column and what was expected there; its value is quoted only
    as the short excerpt a file in the working directory or the data dir allows
    (:func:`fileio.structured_files.may_quote`): the path may name any file, a password file given by
    mistake.

    Raises:
        InputError: the file cannot be read, is over :data:`DATES_FILE_MAX_BYTES`, or a line (named) holds
            more than one column or no date; no date, or more than :data:`MAX_DAYS`.
    """
    from fileio.errors import InputError
    from fileio.files import ReadTooLarge, read_bounded
    from fileio.textfiles import decode_text

    try:
        text = decode_text(read_bounded(path, DATES_FILE_MAX_BYTES)).text
    except FileNotFoundError:
        raise InputError(
            "no such file, nor a list of dates: give YYYY-MM-DD[,YYYY-MM-DD...] or a file of dates", path=path
        ) from None
    except ReadTooLarge:
        raise InputError(
            f"a file of delivery dates holds at most {DATES_FILE_MAX_BYTES:,} bytes; not read", path=path
        ) from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise InputError(f"the file of delivery dates cannot be read: {reason}", path=path) from None
    except UnicodeDecodeError:
        raise InputError("the file of delivery dates is not text", path=path) from None
    dates: list[dt.date] = []
    quotable: bool | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        cells = [(_column(match), _cell(match.group())) for match in _CELL.finditer(line)]
        values = [(column, cell) for column, cell in cells if cell]
        if not values:
            continue
        if number == 1 and len(values) == 1 and not any(char.isdigit() for char in values[0][1]):
            continue  # a header
        problem = None
        if len(values) > 1:
            problem = f"column {values[1][0]}: expected one date a line, found a second column"
        else:
            try:
                dates.append(parse_day(values[0][1]))
            except ValueError:
                problem = f"column {values[0][0]}: expected a date YYYY-MM-DD"
        if problem is not None:
            quotable = _may_quote(path) if quotable is None else quotable
            shown = f" — line {number} reads {_excerpt(line)}" if quotable else ""
            raise InputError(f"line {number}, {problem}{shown}", path=path)
    try:
        return bounded(dates)
    except ValueError as error:
        raise InputError(str(error), path=path) from None


def _column(match: re.Match[str]) -> int:
    """The 1-based column where a cell's value starts (after its leading blanks)."""
    raw = match.group()
    return match.start() + len(raw) - len(raw.lstrip()) + 1


def _cell(text: str) -> str:
    return text.strip().strip(_QUOTES).strip()


def _may_quote(path: Path) -> bool:
    from fileio.structured_files import may_quote

    return may_quote(path)


def _excerpt(line: str) -> str:
    from fileio.structured_files import excerpt

    return excerpt(line)


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
