"""The input of an address purchase: addresses from .csv/.xlsx (§2.7 field names or the address header
aliases), purchase parameters from JSON/YAML, checked together before anything is sent; bad address rows
(including rows the file reader could not read and cells holding a control character) go to the
rejected-rows report (:mod:`fileio.rejected_rows`, the rows named by the id column), and the rows read must
add up to accepted + rejected + empty rows before anything is sent.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from connectors.newspaper import Purchase, PurchaseAddress, check_purchase
from connectors.newspaper.errors import FieldProblem
from connectors.newspaper.validation import ensure_valid
from fileio.errors import InputError
from fileio.headers import field_for_header, header_key, resolve_columns
from fileio.input_rows import RowCells
from fileio.lazy import lazy_module
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.rejected_rows import ID_ALIASES, RejectedRows, id_column
from fileio.structured_files import Format, UnusableFile, body_problems, odd_key, read_structured
from fileio.tables import read_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported on first use: the CLI checks a header without it

ADDRESS_FIELDS = ("id", "firstName", "lastName", "street", "houseNumber", "zipCode", "city", "isoCode")
# Address-service field (recognised through the batch input's aliases) → §2.7 purchase field.
_FROM_ADDRESS_FIELD = {
    "Prename": "firstName",
    "Name": "lastName",
    "Streetname": "street",
    "HouseNo": "houseNumber",
    "ZIPCode": "zipCode",
    "TownName": "city",
    "CountryCode": "isoCode",
}
_BY_KEY = {header_key(name): name for name in ADDRESS_FIELDS}
_ADDRESS_INDEX = re.compile(r"^addresses\[(\d+)\]\.?(.*)$")
_INTEGER = re.compile(r"^\d+(?:\.0+)?$")


@dataclass
class PurchaseInput:
    """The purchase to send (its addresses' 1-based data rows of the file in ``rows``) and the address rows
    rejected on the way (``rejected``: one line per problem; ``rejected_report``: one line per row, as
    ``rejected.csv`` holds it)."""

    purchase: Purchase
    rows: list[int]
    rejected: pd.DataFrame
    rejected_report: pd.DataFrame
    input_rows: int

    @property
    def rejected_rows(self) -> int:
        return len(self.rejected_report)


def purchase_columns(headers: Sequence[str]) -> dict[str, str]:
    """Which header supplies each §2.7 address field (field → header): the spec name first, then an alias."""
    return resolve_columns(headers, (_BY_KEY, _alias))


def _alias(header: str) -> str | None:
    """The §2.7 field a header names as a customer number or as the batch input names an address field."""
    if header_key(header) in ID_ALIASES:
        return "id"
    return _FROM_ADDRESS_FIELD.get(field_for_header(header) or "")


def purchase_header(headers: Sequence[str], *, path: Path) -> dict[str, str]:
    """The §2.7 address fields of a file's header (see :func:`purchase_columns`), with the columns every
    address needs.

    Raises:
        InputError: zipCode, city, or both firstName and lastName are missing.
    """
    columns = purchase_columns(headers)
    missing = [name for name in ("zipCode", "city") if name not in columns]
    if missing or not ({"firstName", "lastName"} & set(columns)):
        raise InputError(
            "address columns missing: need zipCode, city and firstName or lastName; header is "
            f"{list(headers)}",
            path=path,
        )
    return columns


def load_purchase_parameters(path: Path) -> dict[str, Any]:
    """The purchase parameters (§2.7 without the addresses) from a JSON or YAML file, checked against the
    purchase's schema.

    Raises:
        InputError: the file is missing, does not parse, or breaks the schema (each problem named by line,
            column and field, never quoting the file but for the excerpt :mod:`fileio.structured_files`
            allows).
    """
    if not path.is_file():
        raise InputError("purchase parameter file not found", path=path)
    fmt: Format = "json" if path.suffix.lower() == ".json" else "yaml"
    try:
        document = read_structured(path, fmt)
    except OSError as exc:
        raise InputError(f"cannot be read: {exc.strerror or type(exc).__name__}", path=path) from None
    except UnusableFile as exc:
        raise InputError(exc.problem, path=path) from None
    data = document.data
    if not isinstance(data, dict):
        problem = "purchase parameters must be an object (§2.7)"
        raise InputError(document.problem_at(document.locate(()), problem), path=path)
    if "addresses" in data:
        problem = "addresses come from the address file, not from the parameters"
        raise InputError(document.problem_at(document.locate(("addresses",), key=True), problem), path=path)
    odd = odd_key(data)
    if odd is not None:
        problem = "a key that is not a field name (letters, digits, _ and -)"
        raise InputError(document.problem_at(document.locate(odd, key=True), problem), path=path)
    try:
        Purchase.model_validate({**data, "addresses": []})
    except ValidationError as exc:
        problems = document.validation_problems(exc, Purchase)
        raise InputError(f"not valid purchase parameters: {problems}", path=path) from None
    return data


def purchase_parameters_from_body(body: dict[str, Any], *, source: str) -> dict[str, Any]:
    """The purchase parameters (§2.7 without the addresses) filled in a form (named by ``source``), checked
    against the purchase's schema as a file's are.

    Raises:
        InputError: the body holds addresses, or a field breaks its constraint (named by its path).
    """
    if "addresses" in body:
        raise InputError("addresses come from the address file, not from the purchase", path=source)
    try:
        Purchase.model_validate({**body, "addresses": []})
    except ValidationError as exc:
        raise InputError(
            f"not valid purchase parameters: {body_problems(exc, Purchase)}", path=source
        ) from None
    return body


def read_purchase_input(
    addresses_path: Path, parameters: Mapping[str, Any], *, today: dt.date, limits: TableLimits = TABLE_LIMITS
) -> PurchaseInput:
    """Read the address file, check every row and the parameters; rows with problems are rejected. A file
    over ``limits`` is refused before it is read (see :func:`read_table`).

    Raises:
        InputError: the file cannot be read or is over a limit, has no address columns, or no row passes.
        OrderInvalid: a purchase parameter is invalid (named by its §2.7 path); nothing is sent.
    """
    table = read_table(addresses_path, limits=limits)
    headers = [str(header) for header in table.frame.columns]
    columns = purchase_header(headers, path=addresses_path)
    rejected = RejectedRows(table)
    for name, header in columns.items() if table.control_characters else ():
        rejected.check_controls(name, table.frame[header])
    unreadable = rejected.rows
    candidates: list[tuple[int, PurchaseAddress, dict[str, str]]] = []
    input_rows = len(unreadable)
    rows = RowCells(table.frame, columns, skip=unreadable)
    for row, cells in rows:
        input_rows += 1
        address = _row_address(row, cells, rejected)
        if address is not None:
            candidates.append((row, address, cells))
    everything = _purchase_parameters(parameters)
    everything.addresses = [address for _, address, _ in candidates]
    bad_rows: set[int] = set()
    parameter_problems: list[FieldProblem] = []
    for problem in check_purchase(everything, today=today):
        match = _ADDRESS_INDEX.match(problem.field_path)
        if match is None:
            if problem.field_path != "addresses":
                parameter_problems.append(problem)
            continue
        row, _, cells = candidates[int(match.group(1))]
        field = match.group(2)
        rejected.add_line(row, field, cells.get(field, ""), problem.message)
        bad_rows.add(row)
    ensure_valid("purchase", parameter_problems)
    kept = [(row, address) for row, address, _ in candidates if row not in bad_rows]
    rejected.check_accounted(addresses_path, accepted=len(kept), empty=rows.empty)
    if not kept:
        raise InputError("no address row passed the checks", path=addresses_path)
    report = rejected.report(id_column=id_column(headers, known=[columns.get("id")]))
    everything.addresses = [address for _, address in kept]
    return PurchaseInput(everything, [row for row, _ in kept], rejected.lines(), report, input_rows)


def _row_address(row: int, cells: Mapping[str, str], rejected: RejectedRows) -> PurchaseAddress | None:
    """The address a row holds, or None when its zip code is not a number (rejected, in ``rejected``)."""
    zip_text = cells.get("zipCode", "")
    if zip_text and not _INTEGER.match(zip_text):
        rejected.add_line(row, "zipCode", zip_text, "is not a number")
        return None
    body: dict[str, Any] = {name: value for name, value in cells.items() if value}
    body.setdefault("id", str(row))
    if zip_text:
        body["zipCode"] = int(float(zip_text))
    if "isoCode" in body:
        body["isoCode"] = body["isoCode"].upper()
    return PurchaseAddress.model_validate(body)


def _purchase_parameters(parameters: Mapping[str, Any]) -> Purchase:
    """The purchase's parameters, without addresses.

    Raises:
        OrderInvalid: a parameter is invalid (named by its §2.7 path).
    """
    try:
        return Purchase.model_validate({**parameters, "addresses": []})
    except ValidationError as exc:
        problems = [
            FieldProblem(".".join(str(part) for part in error["loc"]), error["msg"]) for error in exc.errors()
        ]
        ensure_valid("purchase", problems)
        raise  # pragma: no cover - ensure_valid raised
