"""The master data change log every upserting sync shares: records upserted by natural key, each difference
written to ``master_data_changes`` under its source (``newspaper``, ``commerce``), rows removed by marking.

A sync hands :func:`sync_records` its :class:`EntityLog`, the rows it holds and the records the service
answered, each with its natural key, its JSON as received and the typed columns taken from it. A new record
is logged ``added`` with its whole JSON; a record whose SHA-256 differs is logged once per ``changed`` field
(old and new value); a record the answer no longer holds is logged ``removed`` and marked ``removed_at``,
never deleted; one that comes back is ``added`` again. Call sites own the transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.redaction import json_safe
from history.models import Base, utcnow
from history.reference.newspaper_models import MasterDataChange
from history.rows import json_mapping

Row = TypeVar("Row", bound=Base)

ADDED = "added"
CHANGED = "changed"
REMOVED = "removed"


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


@dataclass(frozen=True)
class KeyedRecord:
    """One record of a service's answer, ready to be stored.

    Attributes:
        key: the natural key, as the stored rows are looked up by it.
        data: the record's JSON as received.
        columns: the typed columns taken from it, the natural key's columns included.
    """

    key: Hashable
    data: dict[str, Any]
    columns: dict[str, Any]


def content_hash(record: Any) -> str:
    """SHA-256 of the canonical JSON of ``record`` (sorted keys, no whitespace)."""
    canonical = json.dumps(json_safe(record, mask_secret_keys=False), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def plain(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` as the JSON the tables keep."""
    return json_mapping(dict(record), mask_secret_keys=False)


@dataclass(frozen=True)
class EntityLog:
    """The change log of one entity of one source, written by one run.

    Attributes:
        session: The open session.
        source: Which service the records come from (the change log's ``source``).
        entity: What a record is (the change log's ``entity``).
        run_id: The run that fetched them.
    """

    session: Session
    source: str
    entity: str
    run_id: int | None

    def write(self, key: str, change: str, field: str | None, old: Any, new: Any) -> None:
        """Write one change log entry of the record ``key``."""
        self.session.add(
            MasterDataChange(
                source=self.source,
                entity=self.entity,
                entity_key=key,
                change=change,
                field=field,
                old_value=old,
                new_value=new,
                changed_at=utcnow(),
                run_id=self.run_id,
            )
        )

    def field_changes(self, key: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """One ``changed`` entry per top-level field whose value differs (or that appeared or went away)."""
        for field in sorted(set(old) | set(new)):
            if old.get(field) != new.get(field) or (field in old) != (field in new):
                self.write(key, CHANGED, field, old.get(field), new.get(field))


def sync_records(
    log: EntityLog,
    model: type[Row],
    *,
    stored: Mapping[Any, Row],
    records: Iterable[KeyedRecord],
    remove_missing: bool = True,
    key_text: Callable[[Any], str] | None = None,
) -> SyncCounts:
    """Upsert ``records`` into the rows of ``model`` and log every difference in ``log``.

    ``model`` has the columns ``data``, ``sha256``, ``created_at``, ``updated_at`` and ``run_id`` besides
    the record's own; with ``remove_missing`` also ``removed_at``.

    Args:
        log: The change log of the entity, its source and the run that fetched the records.
        model: The table's mapped class.
        stored: The rows this answer replaces, by natural key.
        records: The answer's records; the same key twice is refused unless the content is the same too.
        remove_missing: Mark stored rows the answer no longer holds as removed.
        key_text: How the change log names a key (default: its parts joined by ``/``).

    Returns:
        Counts of added, changed, removed and unchanged records.

    Raises:
        ValueError: the answer holds one key twice with different content.
    """
    name = key_text or default_key_text
    counts = SyncCounts()
    seen: dict[Hashable, str] = {}
    for record in records:
        digest = content_hash(record.data)
        if record.key in seen:
            if seen[record.key] == digest:
                continue
            raise ValueError(
                f"the answer lists {log.entity} {name(record.key)} twice, with different content"
            )
        seen[record.key] = digest
        counts += _upsert(log, model, stored.get(record.key), record, name(record.key), digest)
    if remove_missing:
        for key, row in stored.items():
            if key not in seen and getattr(row, "removed_at", None) is None:
                log.write(name(key), REMOVED, None, _data(row), None)
                _assign(row, removed_at=utcnow(), run_id=log.run_id, updated_at=utcnow())
                counts += SyncCounts(removed=1)
    log.session.flush()
    return counts


def _upsert(
    log: EntityLog, model: type[Row], row: Any, record: KeyedRecord, key: str, digest: str
) -> SyncCounts:
    now = utcnow()
    values = {**record.columns, "data": record.data, "sha256": digest, "run_id": log.run_id}
    if row is None:
        log.session.add(model(**values, created_at=now, updated_at=now))
        log.write(key, ADDED, None, None, record.data)
        return SyncCounts(added=1)
    if getattr(row, "removed_at", None) is not None:
        log.write(key, ADDED, None, None, record.data)
        _assign(row, removed_at=None, updated_at=now, **values)
        return SyncCounts(added=1)
    if row.sha256 == digest:
        return SyncCounts(unchanged=1)
    log.field_changes(key, _data(row), record.data)
    _assign(row, updated_at=now, **values)
    return SyncCounts(changed=1)


def master_data_changes(
    session: Session,
    *,
    source: str | None = None,
    entity: str | None = None,
    key_prefix: str | None = None,
    run_id: int | None = None,
) -> list[MasterDataChange]:
    """The change log, oldest first, optionally of one source, one entity, keys starting with
    ``key_prefix`` or one run."""
    statement = select(MasterDataChange)
    if source is not None:
        statement = statement.where(MasterDataChange.source == source)
    if entity is not None:
        statement = statement.where(MasterDataChange.entity == entity)
    if key_prefix is not None:
        statement = statement.where(MasterDataChange.entity_key.startswith(key_prefix, autoescape=True))
    if run_id is not None:
        statement = statement.where(MasterDataChange.run_id == run_id)
    return list(session.scalars(statement.order_by(MasterDataChange.id)))


def default_key_text(key: Any) -> str:
    """A natural key as the change log names it: the parts of a composite key joined by ``/``."""
    if isinstance(key, tuple):
        return "/".join(str(part) for part in key)
    return str(key)


def _data(row: Any) -> dict[str, Any]:
    data = row.data
    return dict(data) if isinstance(data, Mapping) else {}


def _assign(row: Any, **values: Any) -> None:
    for name, value in values.items():
        setattr(row, name, value)
