"""Newspaper master data tables (newspaper summaries, distribution lists with their details, black list
entries) and the change log every master data sync shares.

Current rows are upserted by natural key; what they held before is kept in ``master_data_changes`` (one row
per added or removed record with its whole JSON, one row per changed field with old and new value), under
the service the records come from. Rows that disappear from the service's answer are marked ``removed_at``,
never deleted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from history.models import Base, utcnow


class NewspaperSummaryRow(Base):
    """The newspaper summary (§2.4), one row per newspaper number."""

    __tablename__ = "newspaper_summaries"

    newspaper_number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    newspaper_id: Mapped[int | None] = mapped_column(Integer)
    title: Mapped[str | None] = mapped_column(String(200))
    publisher_name: Mapped[str | None] = mapped_column(String(200))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))


class DistributionListRow(Base):
    """The list-level fields of a gratis newspaper's distribution list (§2.5 without its details)."""

    __tablename__ = "distribution_lists"

    newspaper_number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))


class DistributionDetailRow(Base):
    """One ``distributionListDetails`` entry, keyed by newspaper, postcode and distribution type."""

    __tablename__ = "distribution_list_details"
    # Named explicitly: the conventional name would exceed PostgreSQL's 63 characters.
    __table_args__ = (
        UniqueConstraint(
            "newspaper_number",
            "zip_code",
            "distribution_type",
            name="uq_distribution_list_details_natural_key",
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    newspaper_number: Mapped[int] = mapped_column(Integer, index=True)
    zip_code: Mapped[int] = mapped_column(Integer)
    # "" when the entry names none, so the natural key stays unique on every database.
    distribution_type: Mapped[str] = mapped_column(String(64))
    city: Mapped[str | None] = mapped_column(String(200))
    location_category: Mapped[str | None] = mapped_column(String(8))
    count: Mapped[int | None] = mapped_column(Integer)
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    removed_at: Mapped[datetime | None] = mapped_column()
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))


class BlackListEntryRow(Base):
    """One black list entry as received; its key is the SHA-256 of its canonical JSON (the shape is open)."""

    __tablename__ = "black_list_entries"
    __table_args__ = (UniqueConstraint("newspaper_number", "entry_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    newspaper_number: Mapped[int] = mapped_column(Integer, index=True)
    entry_key: Mapped[str] = mapped_column(String(64))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    removed_at: Mapped[datetime | None] = mapped_column()
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))


class MasterDataChange(Base):
    """One change of a master data record: ``added``/``removed`` (whole record) or ``changed`` (one field).

    ``source`` names the service (``newspaper``, ``commerce``), ``entity`` the kind of record.
    """

    __tablename__ = "master_data_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source: Mapped[str] = mapped_column(String(32), index=True)
    entity: Mapped[str] = mapped_column(String(64), index=True)
    entity_key: Mapped[str] = mapped_column(String(200), index=True)
    change: Mapped[str] = mapped_column(String(16))
    field: Mapped[str | None] = mapped_column(String(200))
    old_value: Mapped[Any] = mapped_column(JSON, nullable=True)
    new_value: Mapped[Any] = mapped_column(JSON, nullable=True)
    changed_at: Mapped[datetime] = mapped_column(default=utcnow)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
