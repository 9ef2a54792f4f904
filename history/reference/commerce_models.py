"""Delivery reference data of the commerce API (§2.7) in SQL: holidays, additional services and delivery
instructions, one row per natural key (date, code) with the record's fields, its whole JSON and SHA-256.

Rows are upserted by :mod:`history.reference.commerce`; their earlier values are in
``master_data_changes`` (source ``commerce``). Rows that disappear from the service's answer are marked
``removed_at``, never deleted.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Date, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from history.models import Base, utcnow


class ReferenceRecordColumns:
    """What every reference table keeps beside a record's own fields: the names in the four languages, the
    whole record as received, its SHA-256, when it was created, changed and removed, and the last run that
    wrote it."""

    name_de: Mapped[str | None] = mapped_column(Text)
    name_fr: Mapped[str | None] = mapped_column(Text)
    name_it: Mapped[str | None] = mapped_column(Text)
    name_en: Mapped[str | None] = mapped_column(Text)
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    removed_at: Mapped[datetime | None] = mapped_column()
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))


class DeliveryHolidayRow(ReferenceRecordColumns, Base):
    """A holiday (no delivery), keyed by its date."""

    __tablename__ = "delivery_holidays"

    holiday_date: Mapped[date] = mapped_column(Date, primary_key=True)


class AdditionalServiceRow(ReferenceRecordColumns, Base):
    """An additional service (signature, Saturday delivery …), keyed by its code."""

    __tablename__ = "delivery_additional_services"

    code: Mapped[str] = mapped_column(String(100), primary_key=True)
    barcode: Mapped[str | None] = mapped_column(String(100))


class DeliveryInstructionRow(ReferenceRecordColumns, Base):
    """A delivery instruction, keyed by its code, with its place-holder and option names."""

    __tablename__ = "delivery_instructions"

    code: Mapped[str] = mapped_column(String(100), primary_key=True)
    barcode: Mapped[str | None] = mapped_column(String(100))
    editable: Mapped[bool | None] = mapped_column(Boolean)
    place_holder_names: Mapped[list[Any]] = mapped_column(JSON, default=list)
    option_names: Mapped[list[Any]] = mapped_column(JSON, default=list)
