"""Storing newspaper master data: upsert by natural key, every difference written to the change log.

Call sites own the transaction (``with factory.begin() as session: sync_black_list(session, ...)``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from history.masterdata_models import (
    BlackListEntryRow,
    DistributionDetailRow,
    DistributionListRow,
    MasterDataChange,
    NewspaperSummaryRow,
)
from history.models import utcnow
from history.scrub import json_safe

ENTITY_SUMMARY = "newspaper-summary"
ENTITY_DISTRIBUTION_LIST = "distribution-list"
ENTITY_DISTRIBUTION_DETAIL = "distribution-detail"
ENTITY_BLACK_LIST = "black-list-entry"


@dataclass(frozen=True)
class SyncCounts:
    """What one sync did to the stored records."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0

    def __add__(self, other: SyncCounts) -> SyncCounts:
        return SyncCounts(
            self.added + other.added,
            self.changed + other.changed,
            self.removed + other.removed,
            self.unchanged + other.unchanged,
        )


def content_hash(record: Any) -> str:
    """SHA-256 of the canonical JSON of ``record`` (sorted keys, no whitespace)."""
    canonical = json.dumps(json_safe(record, mask_secret_keys=False), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def upsert_newspaper_summary(
    session: Session, *, newspaper_number: int, record: Mapping[str, Any], run_id: int | None = None
) -> SyncCounts:
    """Insert or update the summary of one newspaper; changed fields go to the change log.

    Args:
        session: The open session.
        newspaper_number: The newspaper the summary describes.
        record: The summary as received (§2.4 field names).
        run_id: The run that fetched it.

    Returns:
        One added, changed or unchanged record.
    """
    data = _plain(record)
    digest = content_hash(data)
    row = session.get(NewspaperSummaryRow, newspaper_number)
    key = str(newspaper_number)
    columns = {
        "newspaper_id": _int_or_none(data.get("newspaperID")),
        "title": _text_or_none(data.get("title")),
        "publisher_name": _text_or_none(data.get("publisherName")),
    }
    if row is None:
        session.add(
            NewspaperSummaryRow(
                newspaper_number=newspaper_number,
                data=data,
                sha256=digest,
                run_id=run_id,
                **_now(),
                **columns,
            )
        )
        _log(session, ENTITY_SUMMARY, key, "added", None, None, data, run_id)
        session.flush()
        return SyncCounts(added=1)
    if row.sha256 == digest:
        return SyncCounts(unchanged=1)
    _log_field_changes(session, ENTITY_SUMMARY, key, row.data, data, run_id)
    _assign(row, data=data, sha256=digest, run_id=run_id, updated_at=utcnow(), **columns)
    session.flush()
    return SyncCounts(changed=1)


def sync_distribution_list(
    session: Session,
    *,
    newspaper_number: int,
    header: Mapping[str, Any],
    details: Sequence[Mapping[str, Any]],
    run_id: int | None = None,
) -> SyncCounts:
    """Store a distribution list: its list-level fields and one row per detail (newspaper, zipCode,
    distributionType); details no longer listed are marked removed.

    Args:
        session: The open session.
        newspaper_number: The gratis newspaper.
        header: The list without ``distributionListDetails``.
        details: The ``distributionListDetails`` entries as received.
        run_id: The run that fetched the list.

    Returns:
        Counts over the list header and its details.
    """
    counts = _sync_list_header(session, newspaper_number, _plain(header), run_id)
    stored = {
        (row.zip_code, row.distribution_type): row
        for row in session.scalars(
            select(DistributionDetailRow).where(DistributionDetailRow.newspaper_number == newspaper_number)
        )
    }
    seen: set[tuple[int, str]] = set()
    for detail in details:
        data = _plain(detail)
        zip_code = _int_or_none(data.get("zipCode"))
        if zip_code is None:
            raise ValueError(f"distribution list detail without zipCode: {data}")
        natural = (zip_code, str(data.get("distributionType") or ""))
        if natural in seen:
            raise ValueError(f"distribution list names zipCode {natural[0]} type {natural[1]!r} twice")
        seen.add(natural)
        key = f"{newspaper_number}/{natural[0]}/{natural[1]}"
        digest = content_hash(data)
        columns = {
            "city": _text_or_none(data.get("city")),
            "location_category": _text_or_none(data.get("locationCategory")),
            "count": _int_or_none(data.get("count")),
        }
        row = stored.get(natural)
        if row is None:
            session.add(
                DistributionDetailRow(
                    newspaper_number=newspaper_number,
                    zip_code=natural[0],
                    distribution_type=natural[1],
                    data=data,
                    sha256=digest,
                    run_id=run_id,
                    **_now(),
                    **columns,
                )
            )
            _log(session, ENTITY_DISTRIBUTION_DETAIL, key, "added", None, None, data, run_id)
            counts += SyncCounts(added=1)
        elif row.removed_at is not None:
            _log(session, ENTITY_DISTRIBUTION_DETAIL, key, "added", None, None, data, run_id)
            _assign(
                row, data=data, sha256=digest, removed_at=None, run_id=run_id, updated_at=utcnow(), **columns
            )
            counts += SyncCounts(added=1)
        elif row.sha256 != digest:
            _log_field_changes(session, ENTITY_DISTRIBUTION_DETAIL, key, row.data, data, run_id)
            _assign(row, data=data, sha256=digest, run_id=run_id, updated_at=utcnow(), **columns)
            counts += SyncCounts(changed=1)
        else:
            counts += SyncCounts(unchanged=1)
    for natural, row in stored.items():
        if natural not in seen and row.removed_at is None:
            key = f"{newspaper_number}/{natural[0]}/{natural[1]}"
            _log(session, ENTITY_DISTRIBUTION_DETAIL, key, "removed", None, row.data, None, run_id)
            _assign(row, removed_at=utcnow(), run_id=run_id, updated_at=utcnow())
            counts += SyncCounts(removed=1)
    session.flush()
    return counts


def sync_black_list(
    session: Session,
    *,
    newspaper_number: int,
    entries: Sequence[Any],
    run_id: int | None = None,
) -> SyncCounts:
    """Store a black list: one row per distinct entry (keyed by its content hash); entries no longer listed
    are marked removed. A changed entry therefore shows as one removal and one addition.

    Args:
        session: The open session.
        newspaper_number: The gratis newspaper.
        entries: The entries as received (any JSON value each).
        run_id: The run that fetched the list.

    Returns:
        Counts of added, removed and unchanged entries.
    """
    stored = {
        row.entry_key: row
        for row in session.scalars(
            select(BlackListEntryRow).where(BlackListEntryRow.newspaper_number == newspaper_number)
        )
    }
    counts = SyncCounts()
    seen: set[str] = set()
    for entry in entries:
        data = _plain(entry if isinstance(entry, Mapping) else {"value": entry})
        entry_key = content_hash(data)
        if entry_key in seen:
            continue
        seen.add(entry_key)
        key = f"{newspaper_number}/{entry_key}"
        row = stored.get(entry_key)
        if row is None:
            session.add(
                BlackListEntryRow(
                    newspaper_number=newspaper_number, entry_key=entry_key, data=data, run_id=run_id, **_now()
                )
            )
            _log(session, ENTITY_BLACK_LIST, key, "added", None, None, data, run_id)
            counts += SyncCounts(added=1)
        elif row.removed_at is not None:
            _log(session, ENTITY_BLACK_LIST, key, "added", None, None, data, run_id)
            _assign(row, removed_at=None, run_id=run_id, updated_at=utcnow())
            counts += SyncCounts(added=1)
        else:
            counts += SyncCounts(unchanged=1)
    for entry_key, row in stored.items():
        if entry_key not in seen and row.removed_at is None:
            _log(
                session,
                ENTITY_BLACK_LIST,
                f"{newspaper_number}/{entry_key}",
                "removed",
                None,
                row.data,
                None,
                run_id,
            )
            _assign(row, removed_at=utcnow(), run_id=run_id, updated_at=utcnow())
            counts += SyncCounts(removed=1)
    session.flush()
    return counts


def master_data_changes(
    session: Session, *, entity: str | None = None, key_prefix: str | None = None
) -> list[MasterDataChange]:
    """The change log, oldest first, optionally of one entity and of keys starting with ``key_prefix``."""
    statement = select(MasterDataChange)
    if entity is not None:
        statement = statement.where(MasterDataChange.entity == entity)
    if key_prefix is not None:
        statement = statement.where(MasterDataChange.entity_key.startswith(key_prefix, autoescape=True))
    return list(session.scalars(statement.order_by(MasterDataChange.id)))


def current_distribution_details(session: Session, newspaper_number: int) -> list[DistributionDetailRow]:
    """The details currently on a newspaper's distribution list, by postcode."""
    statement = (
        select(DistributionDetailRow)
        .where(
            DistributionDetailRow.newspaper_number == newspaper_number,
            DistributionDetailRow.removed_at.is_(None),
        )
        .order_by(DistributionDetailRow.zip_code, DistributionDetailRow.distribution_type)
    )
    return list(session.scalars(statement))


def current_black_list(session: Session, newspaper_number: int) -> list[BlackListEntryRow]:
    """The entries currently on a newspaper's black list, oldest first."""
    statement = (
        select(BlackListEntryRow)
        .where(BlackListEntryRow.newspaper_number == newspaper_number, BlackListEntryRow.removed_at.is_(None))
        .order_by(BlackListEntryRow.id)
    )
    return list(session.scalars(statement))


def _sync_list_header(
    session: Session, newspaper_number: int, data: dict[str, Any], run_id: int | None
) -> SyncCounts:
    digest = content_hash(data)
    row = session.get(DistributionListRow, newspaper_number)
    key = str(newspaper_number)
    if row is None:
        session.add(
            DistributionListRow(
                newspaper_number=newspaper_number, data=data, sha256=digest, run_id=run_id, **_now()
            )
        )
        _log(session, ENTITY_DISTRIBUTION_LIST, key, "added", None, None, data, run_id)
        return SyncCounts(added=1)
    if row.sha256 == digest:
        return SyncCounts(unchanged=1)
    _log_field_changes(session, ENTITY_DISTRIBUTION_LIST, key, row.data, data, run_id)
    _assign(row, data=data, sha256=digest, run_id=run_id, updated_at=utcnow())
    return SyncCounts(changed=1)


def _log_field_changes(
    session: Session,
    entity: str,
    key: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    run_id: int | None,
) -> None:
    for field in sorted(set(old) | set(new)):
        if old.get(field) != new.get(field) or (field in old) != (field in new):
            _log(session, entity, key, "changed", field, old.get(field), new.get(field), run_id)


def _log(
    session: Session,
    entity: str,
    key: str,
    change: str,
    field: str | None,
    old: Any,
    new: Any,
    run_id: int | None,
) -> None:
    session.add(
        MasterDataChange(
            entity=entity,
            entity_key=key,
            change=change,
            field=field,
            old_value=old,
            new_value=new,
            changed_at=utcnow(),
            run_id=run_id,
        )
    )


def _plain(record: Mapping[str, Any]) -> dict[str, Any]:
    safe = json_safe(dict(record), mask_secret_keys=False)
    assert isinstance(safe, dict)
    return safe


def _now() -> dict[str, Any]:
    now = utcnow()
    return {"created_at": now, "updated_at": now}


def _assign(row: Any, **values: Any) -> None:
    for name, value in values.items():
        setattr(row, name, value)


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
