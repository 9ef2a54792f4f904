"""The input of a pickup registration and of a pickup-points query: pickup users (or just their locations)
from .csv/.xlsx, one per row, checked before anything is sent. Columns are the request's leaf fields (gender,
firstName, lastName, language, street, houseNumber, zip, city, countryCode, notifyMode, email, mobileNumber),
matched case-insensitively, or named as the address batch names them (Vorname, Strasse, PLZ, Ort, Land …);
other columns are kept for the results. A country may be written out (``Schweiz``), and a street line that
holds the house number (``Bahnhofstrasse 12a``) is split where the file has no house number column (unless
told not to), and a column holding postcode and town (``PLZ Ort``: "8001 Zürich") gives both, as the address
batch reads them; a line the batch could not split is sent as the street, since a pickup user's address
needs no house number. Rows with problems go to the
rejected-rows report (:mod:`fileio.rejected_rows`); the rows read must add up to accepted + rejected + empty
rows.

A registration needs the names and, for its notification (EMAIL unless given), an e-mail address or a mobile
number. A pickup-points query takes a body "shaped like the pickup user request" (§4.3) but the spec names no
field it needs: only the zip is required (it locates the points), every other field is sent when given, and a
notification mode only when given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from connectors.commerce import PickupUserRequest
from connectors.validation import email_problem
from fileio.address_cells import NO_POSTCODE, split_zip_town
from fileio.commerce.address_input import FROM_BATCH_FIELD
from fileio.countries import ACCEPTED, country_code
from fileio.errors import InputError
from fileio.headers import field_for_header, header_key, resolve_columns, with_zip_town
from fileio.input_rows import RowCells
from fileio.lazy import lazy_module
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.rejected_rows import RejectedRows, id_column, row_lines
from fileio.street_lines import split_street_line
from fileio.tables import read_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported on first use: the CLI checks a header without it

PICKUP_FIELDS = (
    "gender",
    "firstName",
    "lastName",
    "language",
    "street",
    "houseNumber",
    "zip",
    "city",
    "countryCode",
    "notifyMode",
    "email",
    "mobileNumber",
)
REQUIRED_COLUMNS = ("firstName", "lastName", "zip")
LOCATION_REQUIRED_COLUMNS = ("zip",)
DEFAULT_COUNTRY = "CH"
DEFAULT_NOTIFY_MODE = "EMAIL"
# Upper-cased on the way in: codes of the service, not free text.
_CODES = ("gender", "language", "countryCode", "notifyMode")
_SWISS_ZIP = re.compile(r"^[1-9]\d{3}$")
_FOREIGN_ZIP = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 -]{0,9}$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")
_FOUR_DIGIT_COUNTRIES = frozenset({"CH", "LI"})
# What a notification mode needs to be delivered: e-mail to an address, a text message to a mobile number.
_NOTIFY_NEEDS = {"EMAIL": "email", "SMS": "mobileNumber"}
_BY_KEY = {header_key(name): name for name in PICKUP_FIELDS}
# The address batch's names of the same fields (Vorname, Strasse, PLZ, Ort, Land …) and the contact fields'
# common spellings (header_key form).
_FROM_BATCH = {
    **{batch: leaf for batch, leaf in FROM_BATCH_FIELD.items() if leaf in PICKUP_FIELDS},
    "CountryCode": "countryCode",
}
_CONTACT_ALIASES = {
    **dict.fromkeys(("mail", "emailadresse", "emailaddress", "epost", "courriel"), "email"),
    **dict.fromkeys(
        ("mobile", "mobil", "natel", "handy", "mobilnummer", "mobiltelefon", "portable", "cellulare"),
        "mobileNumber",
    ),
    **dict.fromkeys(("sprache", "langue", "lingua", "korrespondenzsprache"), "language"),
    **dict.fromkeys(("geschlecht", "sexe", "sesso"), "gender"),
}


@dataclass(frozen=True)
class PickupRow:
    """One accepted row: its 1-based data row number and the request made from its normalised cells."""

    row: int
    request: PickupUserRequest


@dataclass
class PickupInput:
    """The accepted rows, the rejected rows (``rejected``: one line per problem; ``rejected_report``: one
    line per row, as ``rejected.csv`` holds it) and the file as read (every column, by row number), with the
    column that names a row for people (``id_column``) and the line of the file each accepted row starts on
    (``lines``, by row)."""

    frame: pd.DataFrame
    columns: dict[str, str]
    rows: list[PickupRow]
    rejected: pd.DataFrame
    rejected_report: pd.DataFrame
    empty_rows: int
    id_column: str | None = None
    lines: dict[int, int] = field(default_factory=dict)

    @property
    def rejected_rows(self) -> int:
        return len(self.rejected_report)


def pickup_columns(headers: Sequence[str]) -> dict[str, str]:
    """Which header supplies each request field (field → header): the field's own name (any case, spaces,
    dashes and underscores ignored) first, then the address batch's names and aliases of the same field
    (``Vorname``, ``Strasse``, ``PLZ``, ``Ort``, ``Land``) and the contact fields' common spellings
    (``E-Mail``, ``Natel``, ``Sprache``); among equals the leftmost column wins. A column holding postcode
    and town in one (``PLZ Ort``) gives both where the file has neither."""
    return with_zip_town(resolve_columns(headers, (_BY_KEY, _alias)), headers, ("zip", "city"))


def _alias(header: str) -> str | None:
    return _FROM_BATCH.get(field_for_header(header) or "") or _CONTACT_ALIASES.get(header_key(header))


def pickup_header(
    headers: Sequence[str], *, path: Path, required: Sequence[str] = REQUIRED_COLUMNS
) -> dict[str, str]:
    """The request fields of a file's header (see :func:`pickup_columns`), with the columns every row needs
    (``required``: a registration's by default; :data:`LOCATION_REQUIRED_COLUMNS` for pickup points).

    Raises:
        InputError: a required column is missing (the message names it and the header).
    """
    columns = pickup_columns(headers)
    missing = [name for name in required if name not in columns]
    if missing:
        raise InputError(
            f"column {', '.join(missing)} missing; the header is {list(headers)} (expected "
            f"{', '.join(PICKUP_FIELDS)}, in any case)",
            path=path,
        )
    return columns


def read_pickup_input(
    path: Path, *, limits: TableLimits = TABLE_LIMITS, split_house_numbers: bool = True
) -> PickupInput:
    """Read the pickup users of ``path`` and check every row; rows with problems are rejected. A file over
    ``limits`` is refused before it is read (see :func:`read_table`); ``split_house_numbers``: split a
    street line holding the house number where the file has no house number column (see the module).

    Raises:
        InputError: the file cannot be read or is over a limit, lacks a required column, or its rows do not
            add up.
    """
    return _read(path, _Checks(REQUIRED_COLUMNS, row_problems, pickup_request), limits, split_house_numbers)


def read_pickup_locations(
    path: Path, *, limits: TableLimits = TABLE_LIMITS, split_house_numbers: bool = True
) -> PickupInput:
    """Read the locations of ``path`` to ask for pickup points near (see the module docstring: the zip is
    required, every other field optional) and check every row, as :func:`read_pickup_input` does.

    Raises:
        InputError: the file cannot be read or is over a limit, lacks a zip column, or its rows do not add up.
    """
    checks = _Checks(LOCATION_REQUIRED_COLUMNS, location_problems, location_request)
    return _read(path, checks, limits, split_house_numbers)


@dataclass(frozen=True)
class _Checks:
    """What a use of the file needs: its required columns, a row's problems, the request of a row."""

    required: Sequence[str]
    problems_of: Callable[[Mapping[str, str]], list[tuple[str, str]]]
    request_of: Callable[[Mapping[str, str]], PickupUserRequest]


def _read(path: Path, checks: _Checks, limits: TableLimits, split_house_numbers: bool) -> PickupInput:
    table = read_table(path, limits=limits)
    frame = table.frame
    headers = [str(header) for header in frame.columns]
    columns = pickup_header(headers, path=path, required=checks.required)
    rejected = RejectedRows(table)
    for name, header in columns.items() if table.control_characters else ():
        rejected.check_controls(name, frame[header])
    rows: list[PickupRow] = []
    to_check = RowCells(frame, columns, skip=rejected.rows, cell=_cell)
    split = split_house_numbers and "street" in columns and "houseNumber" not in columns
    zip_town = columns["zip"] == columns.get("city")
    for row, read in to_check:
        cells = _as_sent(read, split=split, zip_town=zip_town)
        problems = checks.problems_of(cells)
        for name, reason in problems:
            if zip_town and name == "zip" and not cells.get("zip"):
                reason = NO_POSTCODE
            rejected.add_line(row, columns.get(name, name), cells.get(name) or read.get(name) or "", reason)
        if not problems:
            rows.append(PickupRow(row, checks.request_of(cells)))
    rejected.check_accounted(path, accepted=len(rows), empty=to_check.empty)
    identified_by = id_column(headers)
    report = rejected.report(id_column=identified_by)
    accepted = pd.Index([row.row for row in rows], dtype="int64")
    lines = dict(zip(accepted.tolist(), row_lines(table, accepted).tolist(), strict=True))
    return PickupInput(
        frame, columns, rows, rejected.lines(), report, to_check.empty, id_column=identified_by, lines=lines
    )


def _as_sent(cells: Mapping[str, str], *, split: bool, zip_town: bool) -> dict[str, str]:
    """A row's cells as the request carries them, as the address batch reads them: a country written out
    (``Schweiz``) as its ISO code; with ``split`` (the file has no house number column), a street line
    that holds the house number split into street and house number (a line without a number stays the
    street as given: a pickup user's address needs no house number); with ``zip_town``, the cell holding
    postcode and town split into both (the town alone where it has no postcode)."""
    sent = dict(cells)
    if zip_town:
        zip_and_town = split_zip_town(sent.get("city") or "")
        sent["zip"], sent["city"] = zip_and_town or ("", sent.get("city") or "")
    if country := country_code(sent.get("countryCode") or ""):
        sent["countryCode"] = country
    line = sent.get("street") or ""
    if split and line and (parts := split_street_line(line)).kind == "street":
        sent["street"], sent["houseNumber"] = parts.street, parts.house_no
    return sent


def row_problems(cells: Mapping[str, str]) -> list[tuple[str, str]]:
    """(field, reason) for every problem of one row's normalised cells; empty when the row can be sent."""
    problems = [(name, "missing") for name in ("firstName", "lastName") if not cells.get(name)]
    return problems + location_problems(cells, notify_default=DEFAULT_NOTIFY_MODE)


def location_problems(
    cells: Mapping[str, str], *, notify_default: str | None = None
) -> list[tuple[str, str]]:
    """(field, reason) for every problem of a row's location (country code, zip) and of the contact fields
    it gives (an e-mail address; what its notification mode, ``notify_default`` unless given, needs)."""
    problems: list[tuple[str, str]] = []
    country = _code(cells.get("countryCode")) or DEFAULT_COUNTRY
    if not _COUNTRY.match(country):
        problems.append(("countryCode", f"not a country: {ACCEPTED}"))
    zip_code = cells.get("zip") or ""
    if not zip_code:
        problems.append(("zip", "missing"))
    elif country in _FOUR_DIGIT_COUNTRIES and not _SWISS_ZIP.match(zip_code):
        problems.append(("zip", f"not a postcode of {country}: 4 digits, 1000-9999"))
    elif not _FOREIGN_ZIP.match(zip_code):
        problems.append(("zip", "not a postcode: letters, digits, spaces and dashes, at most 10"))
    mode = _code(cells.get("notifyMode")) or notify_default or ""
    needed = _NOTIFY_NEEDS.get(mode)
    if needed is not None and not cells.get(needed):
        problems.append((needed, f"missing: notifyMode {mode} needs it"))
    email = cells.get("email")
    if email and (problem := email_problem(email)):
        problems.append(("email", problem))
    return problems


def pickup_request(
    cells: Mapping[str, str], *, notify_default: str | None = DEFAULT_NOTIFY_MODE
) -> PickupUserRequest:
    """The §2.9 request of one checked row: codes upper-cased, country CH and notification
    ``notify_default`` (EMAIL) unless given, empty cells left out."""
    values = {name: (_code(value) if name in _CODES else value) or None for name, value in cells.items()}
    return PickupUserRequest.model_validate(
        {
            "userDetails": {
                "gender": values.get("gender"),
                "firstName": values.get("firstName"),
                "lastName": values.get("lastName"),
                "language": values.get("language"),
            },
            "address": {
                "house": {"street": values.get("street"), "houseNumber": values.get("houseNumber")},
                "zip": {
                    "zip": values.get("zip"),
                    "city": values.get("city"),
                    "countryCode": values.get("countryCode") or DEFAULT_COUNTRY,
                },
            },
            "notification": {
                "notifyMode": values.get("notifyMode") or notify_default,
                "email": values.get("email"),
                "mobileNumber": values.get("mobileNumber"),
            },
        }
    )


def location_request(cells: Mapping[str, str]) -> PickupUserRequest:
    """The pickup-points body of one checked row: as :func:`pickup_request`, with no notification mode
    unless given."""
    return pickup_request(cells, notify_default=None)


def _cell(value: object) -> str:
    """A cell as text with its whitespace normalised (trimmed, runs of blanks as one space)."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return " ".join(str(value).split())


def _code(value: str | None) -> str:
    return (value or "").upper()
