"""Newspaper master data in SQL: upsert by natural key and the change log, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

import history
from history import (
    BlackListEntryRow,
    DistributionDetailRow,
    MasterDataChange,
    NewspaperSummaryRow,
    SyncCounts,
)

SUMMARY = {
    "newspaperNumber": 5120,
    "newspaperID": 105120,
    "title": "Anzeiger Rigi",
    "publisherName": "Rigi Anzeiger AG",
    "periodicity": 52,
}
HEADER = {"distributionType": ["OFFICIAL_PLUS"], "startDate": "2024-01-01", "periodicity": 52}


def detail(zip_code: int, count: int, city: str = "Weggis") -> dict[str, Any]:
    return {
        "zipCode": zip_code,
        "city": city,
        "locationCategory": "A",
        "count": count,
        "distributionType": "OFFICIAL_PLUS",
    }


@pytest.fixture
def run_id(history_factory: sessionmaker[Session]) -> int:
    with history_factory.begin() as session:
        return history.start_run(session, flow="newspaper-master-data").id


def test_summary_inserted_then_unchanged_then_changed_with_field_log(
    history_factory: sessionmaker[Session], run_id: int
) -> None:
    with history_factory.begin() as session:
        assert history.upsert_newspaper_summary(
            session, newspaper_number=5120, record=SUMMARY, run_id=run_id
        ) == SyncCounts(added=1)
    with history_factory.begin() as session:
        assert history.upsert_newspaper_summary(session, newspaper_number=5120, record=SUMMARY) == SyncCounts(
            unchanged=1
        )
    changed = {**SUMMARY, "title": "Anzeiger Rigi und Seeland", "region": "Schwyz"}
    with history_factory.begin() as session:
        counts = history.upsert_newspaper_summary(
            session, newspaper_number=5120, record=changed, run_id=run_id
        )
        assert counts == SyncCounts(changed=1)
    with history_factory() as session:
        row = session.get(NewspaperSummaryRow, 5120)
        assert row is not None
        assert row.title == "Anzeiger Rigi und Seeland"
        assert row.newspaper_id == 105120
        assert row.data["region"] == "Schwyz"
        assert session.scalar(select(func.count()).select_from(NewspaperSummaryRow)) == 1
        changes = history.master_data_changes(session, entity="newspaper-summary")
        assert [(c.change, c.field) for c in changes] == [
            ("added", None),
            ("changed", "region"),
            ("changed", "title"),
        ]
        title_change = changes[2]
        assert (title_change.old_value, title_change.new_value) == (
            "Anzeiger Rigi",
            "Anzeiger Rigi und Seeland",
        )
        assert title_change.run_id == run_id
        assert changes[1].old_value is None and changes[1].new_value == "Schwyz"


def test_distribution_details_upserted_by_zip_and_type_removed_rows_kept(
    history_factory: sessionmaker[Session], run_id: int
) -> None:
    with history_factory.begin() as session:
        counts = history.sync_distribution_list(
            session, newspaper_number=5120, header=HEADER, details=[detail(6353, 2150), detail(6354, 780)]
        )
    assert counts == SyncCounts(added=3)
    with history_factory.begin() as session:
        counts = history.sync_distribution_list(
            session,
            newspaper_number=5120,
            header=HEADER,
            details=[detail(6353, 2200), detail(6405, 960, "Immensee")],
            run_id=run_id,
        )
    assert counts == SyncCounts(added=1, changed=1, removed=1, unchanged=1)
    with history_factory() as session:
        current = history.current_distribution_details(session, 5120)
        assert [(row.zip_code, row.count) for row in current] == [(6353, 2200), (6405, 960)]
        assert session.scalar(select(func.count()).select_from(DistributionDetailRow)) == 3
        changes = history.master_data_changes(session, entity="distribution-detail")
        described = [(c.entity_key, c.change, c.field, c.old_value, c.new_value) for c in changes[2:]]
        assert ("5120/6353/OFFICIAL_PLUS", "changed", "count", 2150, 2200) in described
        assert ("5120/6405/OFFICIAL_PLUS", "added", None, None, detail(6405, 960, "Immensee")) in described
        assert ("5120/6354/OFFICIAL_PLUS", "removed", None, detail(6354, 780), None) in described
    # A detail that comes back is re-added, not duplicated.
    with history_factory.begin() as session:
        counts = history.sync_distribution_list(
            session, newspaper_number=5120, header=HEADER, details=[detail(6353, 2200), detail(6354, 780)]
        )
    assert counts == SyncCounts(added=1, removed=1, unchanged=2)
    with history_factory() as session:
        assert session.scalar(select(func.count()).select_from(DistributionDetailRow)) == 3


def test_duplicate_natural_key_in_one_list_is_refused(history_factory: sessionmaker[Session]) -> None:
    with pytest.raises(ValueError, match="twice"), history_factory.begin() as session:
        history.sync_distribution_list(
            session, newspaper_number=5120, header=HEADER, details=[detail(6353, 1), detail(6353, 2)]
        )


def test_black_list_entries_keyed_by_content_hash(
    history_factory: sessionmaker[Session], run_id: int
) -> None:
    first = {"zipCode": 6353, "street": "Seestrasse", "houseNumber": "12"}
    second = {"zipCode": 6410, "street": "Parkstrasse", "houseNumber": "3a"}
    with history_factory.begin() as session:
        assert history.sync_black_list(session, newspaper_number=5120, entries=[first, second]) == SyncCounts(
            added=2
        )
    with history_factory.begin() as session:
        # The same entries in another key order and order of the list: nothing changed.
        reordered = [dict(reversed(list(second.items()))), first]
        assert history.sync_black_list(session, newspaper_number=5120, entries=reordered) == SyncCounts(
            unchanged=2
        )
    corrected = {**second, "houseNumber": "3b"}
    with history_factory.begin() as session:
        counts = history.sync_black_list(
            session, newspaper_number=5120, entries=[first, corrected], run_id=run_id
        )
    assert counts == SyncCounts(added=1, removed=1, unchanged=1)
    with history_factory() as session:
        assert [row.data for row in history.current_black_list(session, 5120)] == [first, corrected]
        assert session.scalar(select(func.count()).select_from(BlackListEntryRow)) == 3
        log = history.master_data_changes(session, entity="black-list-entry", key_prefix="5120/")
        assert [c.change for c in log] == ["added", "added", "added", "removed"]
        assert log[-1].old_value == second
        assert session.scalar(select(func.count()).select_from(MasterDataChange)) == 4


def test_changes_survive_deleting_the_run(history_factory: sessionmaker[Session], run_id: int) -> None:
    with history_factory.begin() as session:
        history.upsert_newspaper_summary(session, newspaper_number=4711, record=SUMMARY, run_id=run_id)
    with history_factory.begin() as session:
        run = session.get(history.Run, run_id)
        assert run is not None
        session.delete(run)
    with history_factory() as session:
        row = session.get(NewspaperSummaryRow, 4711)
        assert row is not None and row.run_id is None
        assert [c.run_id for c in history.master_data_changes(session)] == [None]
