"""Storing the commerce API's delivery reference data (§2.7): upsert by natural key, every difference written
to the change log (:mod:`history.reference.changelog`, source ``commerce``).

Records come as received (the spec's field names). Call sites own the transaction
(``with factory.begin() as session: sync_holidays(session, holidays, run_id=...)``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from history.models import Base
from history.reference.changelog import EntityLog, KeyedRecord, SyncCounts, plain, sync_records
from history.reference.commerce_models import AdditionalServiceRow, DeliveryHolidayRow, DeliveryInstructionRow

SOURCE = "commerce"
ENTITY_HOLIDAY = "holiday"
ENTITY_ADDITIONAL_SERVICE = "additional-service"
ENTITY_DELIVERY_INSTRUCTION = "delivery-instruction"
LANGUAGES = ("de", "fr", "it", "en")
CODE_LENGTH = 100

Row = TypeVar("Row", bound=Base)


def sync_holidays(
    session: Session, holidays: Sequence[Mapping[str, Any]], *, run_id: int | None = None
) -> SyncCounts:
    """Store the holidays (``date``, ``name``) by date; holidays no longer listed are marked removed.

    Raises:
        ValueError: a holiday without a valid ``date``, or one date listed twice with different content.
    """
    records = []
    for holiday in holidays:
        data = plain(holiday)
        day = _date(data.get("date"))
        records.append(KeyedRecord(day, data, {"holiday_date": day, **_names(data)}))
    return _sync(session, DeliveryHolidayRow, ENTITY_HOLIDAY, records, run_id, key="holiday_date")


def sync_additional_services(
    session: Session, services: Sequence[Mapping[str, Any]], *, run_id: int | None = None
) -> SyncCounts:
    """Store the additional services (``code``, ``name``, ``barcode``) by code.

    Raises:
        ValueError: a service without a code, or one code listed twice with different content.
    """
    records = []
    for service in services:
        data = plain(service)
        code = _code(data, ENTITY_ADDITIONAL_SERVICE)
        columns = {"code": code, "barcode": _text(data.get("barcode")), **_names(data)}
        records.append(KeyedRecord(code, data, columns))
    return _sync(session, AdditionalServiceRow, ENTITY_ADDITIONAL_SERVICE, records, run_id)


def sync_delivery_instructions(
    session: Session, instructions: Sequence[Mapping[str, Any]], *, run_id: int | None = None
) -> SyncCounts:
    """Store the delivery instructions (``code``, ``barcode``, ``name``, ``editable``, ``placeHolderNames``,
    ``optionNames``) by code.

    Raises:
        ValueError: an instruction without a code, or one code listed twice with different content.
    """
    records = []
    for instruction in instructions:
        data = plain(instruction)
        code = _code(data, ENTITY_DELIVERY_INSTRUCTION)
        editable = data.get("editable")
        columns = {
            "code": code,
            "barcode": _text(data.get("barcode")),
            "editable": editable if isinstance(editable, bool) else None,
            "place_holder_names": _list(data.get("placeHolderNames")),
            "option_names": _list(data.get("optionNames")),
            **_names(data),
        }
        records.append(KeyedRecord(code, data, columns))
    return _sync(session, DeliveryInstructionRow, ENTITY_DELIVERY_INSTRUCTION, records, run_id)


def current_holidays(session: Session, *, since: dt.date | None = None) -> list[DeliveryHolidayRow]:
    """The holidays currently listed, by date; from ``since`` on when given."""
    statement = select(DeliveryHolidayRow).where(DeliveryHolidayRow.removed_at.is_(None))
    if since is not None:
        statement = statement.where(DeliveryHolidayRow.holiday_date >= since)
    return list(session.scalars(statement.order_by(DeliveryHolidayRow.holiday_date)))


def current_additional_services(session: Session) -> list[AdditionalServiceRow]:
    """The additional services currently listed, by code."""
    statement = select(AdditionalServiceRow).where(AdditionalServiceRow.removed_at.is_(None))
    return list(session.scalars(statement.order_by(AdditionalServiceRow.code)))


def current_delivery_instructions(session: Session) -> list[DeliveryInstructionRow]:
    """The delivery instructions currently listed, by code."""
    statement = select(DeliveryInstructionRow).where(DeliveryInstructionRow.removed_at.is_(None))
    return list(session.scalars(statement.order_by(DeliveryInstructionRow.code)))


def _sync(
    session: Session,
    model: type[Row],
    entity: str,
    records: list[KeyedRecord],
    run_id: int | None,
    *,
    key: str = "code",
) -> SyncCounts:
    stored = {getattr(row, key): row for row in session.scalars(select(model))}
    log = EntityLog(session, SOURCE, entity, run_id)
    return sync_records(log, model, stored=stored, records=records, key_text=_key_text)


def _key_text(key: Any) -> str:
    return key.isoformat() if isinstance(key, dt.date) else str(key)


def _names(data: Mapping[str, Any]) -> dict[str, str | None]:
    name = data.get("name")
    names = name if isinstance(name, Mapping) else {}
    return {f"name_{language}": _text(names.get(language)) for language in LANGUAGES}


def _date(value: Any) -> dt.date:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"holiday with date {value!r}: not a date YYYY-MM-DD") from None


def _code(data: Mapping[str, Any], entity: str) -> str:
    code = data.get("code")
    if code is None or not str(code).strip():
        raise ValueError(f"{entity} without a code: {data}")
    if len(str(code)) > CODE_LENGTH:
        raise ValueError(f"{entity} code {str(code)[:40]!r}… is longer than {CODE_LENGTH} characters")
    return str(code)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]
