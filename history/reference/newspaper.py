"""Storing newspaper master data: upsert by natural key, every difference written to the change log
(:mod:`history.reference.changelog`, source ``newspaper``).

Call sites own the transaction (``with factory.begin() as session: sync_black_list(session, ...)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from history.models import utcnow
from history.reference.changelog import (
    ADDED,
    REMOVED,
    EntityLog,
    KeyedRecord,
    SyncCounts,
    content_hash,
    plain,
    sync_records,
)
from history.reference.changelog import master_data_changes as master_data_changes
from history.reference.newspaper_models import (
    BlackListEntryRow,
    DistributionDetailRow,
    DistributionListRow,
    NewspaperSummaryRow,
)

SOURCE = "newspaper"
ENTITY_SUMMARY = "newspaper-summary"
ENTITY_DISTRIBUTION_LIST = "distribution-list"
ENTITY_DISTRIBUTION_DETAIL = "distribution-detail"
ENTITY_BLACK_LIST = "black-list-entry"


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
    data = plain(record)
    row = session.get(NewspaperSummaryRow, newspaper_number)
    columns = {
        "newspaper_number": newspaper_number,
        "newspaper_id": _int_or_none(data.get("newspaperID")),
        "title": _text_or_none(data.get("title")),
        "publisher_name": _text_or_none(data.get("publisherName")),
    }
    return sync_records(
        EntityLog(session, SOURCE, ENTITY_SUMMARY, run_id),
        NewspaperSummaryRow,
        stored={} if row is None else {newspaper_number: row},
        records=[KeyedRecord(newspaper_number, data, columns)],
        remove_missing=False,
    )


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

    Raises:
        ValueError: a detail without zipCode, or one postcode and type listed twice with different content.
    """
    list_row = session.get(DistributionListRow, newspaper_number)
    counts = sync_records(
        EntityLog(session, SOURCE, ENTITY_DISTRIBUTION_LIST, run_id),
        DistributionListRow,
        stored={} if list_row is None else {newspaper_number: list_row},
        records=[KeyedRecord(newspaper_number, plain(header), {"newspaper_number": newspaper_number})],
        remove_missing=False,
    )
    stored = {
        (row.zip_code, row.distribution_type): row
        for row in session.scalars(
            select(DistributionDetailRow).where(DistributionDetailRow.newspaper_number == newspaper_number)
        )
    }
    return counts + sync_records(
        EntityLog(session, SOURCE, ENTITY_DISTRIBUTION_DETAIL, run_id),
        DistributionDetailRow,
        stored=stored,
        records=[_distribution_detail(newspaper_number, detail) for detail in details],
        key_text=lambda key: f"{newspaper_number}/{key[0]}/{key[1]}",
    )


def _distribution_detail(newspaper_number: int, detail: Mapping[str, Any]) -> KeyedRecord:
    data = plain(detail)
    zip_code = _int_or_none(data.get("zipCode"))
    if zip_code is None:
        raise ValueError(f"distribution list detail without zipCode: {data}")
    # "" when the entry names none, so the natural key stays unique on every database.
    distribution_type = str(data.get("distributionType") or "")
    columns = {
        "newspaper_number": newspaper_number,
        "zip_code": zip_code,
        "distribution_type": distribution_type,
        "city": _text_or_none(data.get("city")),
        "location_category": _text_or_none(data.get("locationCategory")),
        "count": _int_or_none(data.get("count")),
    }
    return KeyedRecord((zip_code, distribution_type), data, columns)


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
    log = EntityLog(session, SOURCE, ENTITY_BLACK_LIST, run_id)
    stored = {
        row.entry_key: row
        for row in session.scalars(
            select(BlackListEntryRow).where(BlackListEntryRow.newspaper_number == newspaper_number)
        )
    }
    counts = SyncCounts()
    seen: set[str] = set()
    for entry in entries:
        data = plain(entry if isinstance(entry, Mapping) else {"value": entry})
        entry_key = content_hash(data)
        if entry_key not in seen:
            seen.add(entry_key)
            counts += _keep_black_list_entry(log, newspaper_number, stored.get(entry_key), entry_key, data)
    for entry_key, row in stored.items():
        if entry_key not in seen and row.removed_at is None:
            log.write(f"{newspaper_number}/{entry_key}", REMOVED, None, row.data, None)
            row.removed_at, row.run_id, row.updated_at = utcnow(), run_id, utcnow()
            counts += SyncCounts(removed=1)
    session.flush()
    return counts


def _keep_black_list_entry(
    log: EntityLog, newspaper_number: int, row: BlackListEntryRow | None, entry_key: str, data: dict[str, Any]
) -> SyncCounts:
    """Store one listed entry: added when new or removed before, else unchanged."""
    key = f"{newspaper_number}/{entry_key}"
    if row is None:
        now = utcnow()
        log.session.add(
            BlackListEntryRow(
                newspaper_number=newspaper_number,
                entry_key=entry_key,
                data=data,
                run_id=log.run_id,
                created_at=now,
                updated_at=now,
            )
        )
    elif row.removed_at is not None:
        row.removed_at, row.run_id, row.updated_at = None, log.run_id, utcnow()
    else:
        return SyncCounts(unchanged=1)
    log.write(key, ADDED, None, None, data)
    return SyncCounts(added=1)


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


def synced_newspaper_numbers(session: Session) -> list[int]:
    """The numbers of every newspaper whose summary was synced at least once, ascending."""
    statement = select(NewspaperSummaryRow.newspaper_number).order_by(NewspaperSummaryRow.newspaper_number)
    return list(session.scalars(statement))


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
