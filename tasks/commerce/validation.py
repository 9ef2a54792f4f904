"""Address validation of a file's rows (§4.1 addresses/validation): the request of each row, the certified
address read from each answer, and the results table with the input address beside the certified one.

A field counts as changed when the certified value differs from the input once case and whitespace are
ignored (``"lindenstrasse  12"`` equals ``"Lindenstrasse 12"``); an empty input and an empty answer are
equal. A field the answer does not carry at all (no ``addressee`` object, say) is not compared: the service
said nothing about it.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.commerce import CommerceClient, ValidationRequest, ValidationResult
from fileio.checkpoint import RowCheckpoint
from fileio.commerce.address_input import LEAF_FIELDS, ROW, address_records, field_text
from fileio.lazy import lazy_module
from tasks.commerce.per_row import ChunkAnswers, RowAsking, RowOutcome, answer_in_chunks, ask_chunk
from tasks.fanout import ChunkPart, ClientFactory
from tasks.sending import SendCounter

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

STATUS_COLUMN = "ValidationStatus"
HTTP_STATUS_COLUMN = "HttpStatus"
ERROR_COLUMN = "ValidationError"
QUALITY_COLUMN = "quality"
CHANGED_COLUMN = "ChangedFields"
CERTIFIED_PREFIX = "certified_"
CERTIFIED_COLUMNS: tuple[str, ...] = tuple(CERTIFIED_PREFIX + field for field in LEAF_FIELDS)
DETAIL_COLUMNS: tuple[str, ...] = ("houseKey", "expires", "addressId", "addressType")
# Every column the results add to the customer's: a pass-through column must not be named so.
RESULT_COLUMNS: tuple[str, ...] = (
    STATUS_COLUMN,
    HTTP_STATUS_COLUMN,
    ERROR_COLUMN,
    QUALITY_COLUMN,
    *CERTIFIED_COLUMNS,
    CHANGED_COLUMN,
    *DETAIL_COLUMNS,
)
# The outcome of a row as the results name it.
STATUS_NAMES: Mapping[str, str] = {
    "answered": "validated",
    "refused": "refused",
    "not found": "not found",
    "failed": "failed",
}


def validation_request(record: Mapping[str, Any], *, full_validation: bool = True) -> ValidationRequest:
    """The validation request (§2.2) of one input row given with the leaf field names."""
    return ValidationRequest.of(
        {name: field_text(record, name) for name in LEAF_FIELDS}, full_validation=full_validation
    )


def certified_fields(result: ValidationResult) -> dict[str, str | None]:
    """The certified address of an answer by leaf field; None for a field the answer does not carry.

    Street, house number and additional address come from the geographic location's house, else from the
    logistic location's; zip and city likewise.
    """
    address = result.address
    if address is None:
        return dict.fromkeys(LEAF_FIELDS)
    addressee = address.addressee
    geographic, logistic = address.geographic_location, address.logistic_location
    houses = [location.house for location in (geographic, logistic) if location and location.house]
    zips = [location.zip for location in (geographic, logistic) if location and location.zip]
    return {
        "firstName": addressee.first_name if addressee else None,
        "lastName": addressee.last_name if addressee else None,
        "street": _first(house.street for house in houses),
        "houseNumber": _first(house.house_number for house in houses),
        "additionalAddress": _first(house.additional_address for house in houses),
        "zip": _first(zip_.zip for zip_ in zips),
        "city": _first(zip_.city for zip_ in zips),
        "postBoxNumber": logistic.post_box_number if logistic else None,
    }


def house_key(result: ValidationResult) -> str | None:
    """The certified building's key (geographic location first)."""
    address = result.address
    if address is None:
        return None
    locations = (address.geographic_location, address.logistic_location)
    return _first(location.house.house_key for location in locations if location and location.house)


def _first(values: Any) -> str | None:
    return next((value for value in values if value is not None), None)


def normalised(value: object) -> str:
    """A value as compared: whitespace collapsed, case folded, missing as empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return " ".join(str(value).split()).casefold()


def changed_fields(record: Mapping[str, Any], certified: Mapping[str, str | None]) -> list[str]:
    """The leaf fields whose certified value differs from the input (see the module docstring)."""
    return [
        field
        for field in LEAF_FIELDS
        if certified.get(field) is not None and normalised(record.get(field)) != normalised(certified[field])
    ]


def still_valid(result: ValidationResult, *, now: dt.datetime | None = None) -> bool:
    """Whether a certified answer has not expired (an answer without ``expires`` does not)."""
    if result.expires is None:
        return True
    moment = now or dt.datetime.now(dt.UTC)
    expires = result.expires if result.expires.tzinfo else result.expires.replace(tzinfo=dt.UTC)
    return expires > moment


@task(
    name="commerce-validate-rows",
    task_run_name="commerce-validate-rows-{part.label}",
    cache_policy=NO_CACHE,
)
async def validate_rows(
    rows: pd.DataFrame,
    *,
    part: ChunkPart,
    concurrency: int,
    connect: ClientFactory[CommerceClient],
    checkpoint: RowCheckpoint | None = None,
    full_validation: bool = True,
) -> ChunkAnswers[ValidationResult]:
    """Validate the records of one chunk with a client of its own; each row's final outcome is checkpointed.

    Raises:
        AuthFailed: the service refused our credentials.
    """
    requests = [
        (int(record[ROW]), validation_request(record, full_validation=full_validation))
        for record in address_records(rows)
    ]

    async def ask(client: CommerceClient, request: ValidationRequest) -> ValidationResult:
        return await client.validate_address(request)

    return await ask_chunk(connect, requests, ask, part=part, concurrency=concurrency, checkpoint=checkpoint)


async def validate_addresses(
    connect: ClientFactory[CommerceClient],
    records: pd.DataFrame,
    *,
    concurrency: int = 8,
    checkpoint: RowCheckpoint | None = None,
    full_validation: bool = True,
    sends: SendCounter | None = None,
) -> list[RowOutcome[ValidationResult]]:
    """Validate every record; each ends validated, refused (400) or failed. The records not answered by an
    interrupted run (in ``checkpoint``, same request, not expired) are validated in chunks on the flow's
    task runner (see :mod:`tasks.fanout`), at most ``concurrency`` requests in flight.

    Args:
        connect: builds a commerce client; each chunk task builds its own.
        records: the accepted rows (``row`` and the leaf fields).
        concurrency: validations in flight at once.
        checkpoint: answers of an interrupted run, and where this run's answers are kept.
        full_validation: ask for the full validation of each address.
        sends: counts the validation requests sent.

    Returns:
        One outcome per record, in the order of ``records``.

    Raises:
        AuthFailed: the service refused our credentials.
    """
    requests = [
        (int(record[ROW]), validation_request(record, full_validation=full_validation))
        for record in address_records(records)
    ]
    return await answer_in_chunks(
        RowAsking(validate_rows, ValidationResult, "address validation", reusable=still_valid),
        records,
        requests,
        concurrency=concurrency,
        checkpoint=checkpoint,
        sends=sends,
        connect=connect,
        full_validation=full_validation,
    )


@dataclass
class ValidationTable:
    """The results: one row per accepted input row, and which certified cells changed.

    Attributes:
        frame: ``row``, the pass-through columns, the outcome, quality, the input address, the certified
            address, the changed fields and the answer's details.
        changed: per result row, the leaf fields that changed (same order as ``frame``).
    """

    frame: pd.DataFrame
    changed: list[list[str]]

    def status_counts(self) -> dict[str, int]:
        return dict(Counter(self.frame[STATUS_COLUMN]))

    def quality_counts(self) -> dict[str, int]:
        qualities = self.frame.loc[self.frame[STATUS_COLUMN] == "validated", QUALITY_COLUMN]
        return dict(Counter(str(value) if value is not None else "(none)" for value in qualities))

    @property
    def rows_changed(self) -> int:
        return sum(1 for fields in self.changed if fields)


def validation_table(
    records: pd.DataFrame, outcomes: Sequence[RowOutcome[ValidationResult]], passthrough: Sequence[str]
) -> ValidationTable:
    """The results table of ``records`` (input order) and their ``outcomes`` (one per record, same order)."""
    rows: list[dict[str, Any]] = []
    changed: list[list[str]] = []
    for record, outcome in zip(address_records(records), outcomes, strict=True):
        row: dict[str, Any] = {ROW: record[ROW]}
        row.update({column: record.get(column) for column in passthrough})
        row[STATUS_COLUMN] = STATUS_NAMES[outcome.status]
        row[HTTP_STATUS_COLUMN] = outcome.http_status
        row[ERROR_COLUMN] = outcome.error
        result = outcome.answer
        row[QUALITY_COLUMN] = str(result.quality) if result and result.quality is not None else None
        row.update({field: record.get(field) for field in LEAF_FIELDS})
        certified = certified_fields(result) if result else dict.fromkeys(LEAF_FIELDS)
        row.update({CERTIFIED_PREFIX + field: value for field, value in certified.items()})
        fields = changed_fields(record, certified) if result else []
        row[CHANGED_COLUMN] = ", ".join(fields) or None
        row["houseKey"] = house_key(result) if result else None
        row["expires"] = result.expires.isoformat() if result and result.expires else None
        address = result.address if result else None
        row["addressId"] = address.id if address else None
        row["addressType"] = str(address.type) if address and address.type is not None else None
        rows.append(row)
        changed.append(fields)
    columns = [
        ROW,
        *passthrough,
        STATUS_COLUMN,
        HTTP_STATUS_COLUMN,
        ERROR_COLUMN,
        QUALITY_COLUMN,
        *LEAF_FIELDS,
        *CERTIFIED_COLUMNS,
        CHANGED_COLUMN,
        *DETAIL_COLUMNS,
    ]
    frame = pd.DataFrame(rows, columns=columns, dtype=object)
    frame[ROW] = frame[ROW].astype("int64")
    frame[HTTP_STATUS_COLUMN] = frame[HTTP_STATUS_COLUMN].astype("Int64")
    return ValidationTable(frame, changed)
