"""Commerce delivery reference data in SQL: upsert by date or code and the shared change log, on SQLite and
PostgreSQL; the migration that gave every change its source."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from alembic import command
from sqlalchemy import func, insert, select, text
from sqlalchemy.orm import Session, sessionmaker

import history
from history import (
    AdditionalServiceRow,
    DeliveryHolidayRow,
    DeliveryInstructionRow,
    MasterDataChange,
    SyncCounts,
)
from history.db import alembic_config, create_engine_for, migrate


def name(de: str, fr: str = "fr", it: str = "it", en: str = "en") -> dict[str, str]:
    return {"de": de, "fr": fr, "it": it, "en": en}


HOLIDAYS = [
    {"date": "2026-12-25", "name": name("Weihnachten", "Noël", "Natale", "Christmas")},
    {"date": "2026-12-26", "name": name("Stephanstag", "Saint-Étienne", "Santo Stefano", "St Stephen's Day")},
    {"date": "2027-01-01", "name": name("Neujahr", "Nouvel An", "Capodanno", "New Year's Day")},
]
SERVICES = [
    {"code": "SI", "name": name("Unterschrift"), "barcode": "0001"},
    {"code": "SA", "name": name("Samstagzustellung"), "barcode": "0002"},
]
INSTRUCTIONS = [
    {
        "code": "DOOR",
        "barcode": "9001",
        "name": name("Vor die Tür"),
        "editable": False,
        "placeHolderNames": [],
        "optionNames": ["FRONT", "BACK"],
    },
    {
        "code": "NEIGHBOUR",
        "barcode": "9002",
        "name": name("Beim Nachbarn"),
        "editable": True,
        "placeHolderNames": ["neighbourName"],
        "optionNames": [],
        "validFrom": "2026-01-01",
    },
]


@pytest.fixture
def run_id(history_factory: sessionmaker[Session]) -> int:
    with history_factory.begin() as session:
        return history.start_run(session, flow="delivery-reference-sync").id


def changes(session: Session, entity: str) -> list[tuple[str, str, str | None, Any, Any]]:
    return [
        (c.entity_key, c.change, c.field, c.old_value, c.new_value)
        for c in history.master_data_changes(session, source="commerce", entity=entity)
    ]


def test_holidays_added_then_unchanged_then_name_changed_and_removed(
    history_factory: sessionmaker[Session], run_id: int
) -> None:
    with history_factory.begin() as session:
        assert history.sync_holidays(session, HOLIDAYS, run_id=run_id) == SyncCounts(added=3)
    with history_factory() as session:
        first = {row.holiday_date: (row.updated_at, row.sha256) for row in history.current_holidays(session)}
    with history_factory.begin() as session:
        assert history.sync_holidays(session, list(reversed(HOLIDAYS))) == SyncCounts(unchanged=3)
    with history_factory() as session:
        # Nothing was written: the same timestamps and hashes, the same three log entries.
        assert {r.holiday_date: (r.updated_at, r.sha256) for r in history.current_holidays(session)} == first
        assert session.scalar(select(func.count()).select_from(MasterDataChange)) == 3

    renamed = {"date": "2026-12-26", "name": {**HOLIDAYS[1]["name"], "de": "Stefanstag"}}
    with history_factory.begin() as session:
        counts = history.sync_holidays(session, [HOLIDAYS[0], renamed], run_id=run_id)
    assert counts == SyncCounts(changed=1, removed=1, unchanged=1)
    with history_factory() as session:
        row = session.get(DeliveryHolidayRow, dt.date(2026, 12, 26))
        assert row is not None
        assert (row.name_de, row.name_fr, row.name_en) == ("Stefanstag", "Saint-Étienne", "St Stephen's Day")
        assert row.data == renamed and row.run_id == run_id
        assert [r.holiday_date for r in history.current_holidays(session)] == [
            dt.date(2026, 12, 25),
            dt.date(2026, 12, 26),
        ]
        gone = session.get(DeliveryHolidayRow, dt.date(2027, 1, 1))
        assert gone is not None and gone.removed_at is not None  # kept, marked
        logged = changes(session, "holiday")[3:]
        assert ("2026-12-26", "changed", "name", HOLIDAYS[1]["name"], renamed["name"]) in logged
        assert ("2027-01-01", "removed", None, HOLIDAYS[2], None) in logged
        assert len(logged) == 2
    # A holiday that comes back is added again, not duplicated.
    with history_factory.begin() as session:
        assert history.sync_holidays(session, [HOLIDAYS[0], renamed, HOLIDAYS[2]]) == SyncCounts(
            added=1, unchanged=2
        )
    with history_factory() as session:
        assert session.scalar(select(func.count()).select_from(DeliveryHolidayRow)) == 3
        assert len(history.current_holidays(session, since=dt.date(2026, 12, 26))) == 2


def test_additional_services_and_instructions_keep_their_fields(
    history_factory: sessionmaker[Session], run_id: int
) -> None:
    with history_factory.begin() as session:
        assert history.sync_additional_services(session, SERVICES, run_id=run_id) == SyncCounts(added=2)
        assert history.sync_delivery_instructions(session, INSTRUCTIONS, run_id=run_id) == SyncCounts(added=2)
    with history_factory() as session:
        service = session.get(AdditionalServiceRow, "SA")
        assert service is not None
        assert (service.barcode, service.name_de, service.name_fr) == ("0002", "Samstagzustellung", "fr")
        neighbour = session.get(DeliveryInstructionRow, "NEIGHBOUR")
        assert neighbour is not None
        assert neighbour.editable is True
        assert neighbour.place_holder_names == ["neighbourName"] and neighbour.option_names == []
        assert neighbour.data["validFrom"] == "2026-01-01"  # fields the spec does not name are kept
        assert len(neighbour.sha256) == 64
        assert [row.code for row in history.current_delivery_instructions(session)] == ["DOOR", "NEIGHBOUR"]
        assert [row.code for row in history.current_additional_services(session)] == ["SA", "SI"]

    changed = [{**INSTRUCTIONS[0], "editable": True, "optionNames": ["FRONT"]}, INSTRUCTIONS[1]]
    with history_factory.begin() as session:
        assert history.sync_delivery_instructions(session, changed) == SyncCounts(changed=1, unchanged=1)
        assert history.sync_additional_services(session, SERVICES[:1]) == SyncCounts(removed=1, unchanged=1)
    with history_factory() as session:
        door = session.get(DeliveryInstructionRow, "DOOR")
        assert door is not None and door.editable is True and door.option_names == ["FRONT"]
        assert changes(session, "delivery-instruction")[2:] == [
            ("DOOR", "changed", "editable", False, True),
            ("DOOR", "changed", "optionNames", ["FRONT", "BACK"], ["FRONT"]),
        ]
        assert changes(session, "additional-service")[-1] == ("SA", "removed", None, SERVICES[1], None)


def test_one_key_twice_is_refused_unless_identical(history_factory: sessionmaker[Session]) -> None:
    with history_factory.begin() as session:
        assert history.sync_additional_services(session, [SERVICES[0], dict(SERVICES[0])]) == SyncCounts(
            added=1
        )
    other = {**SERVICES[0], "barcode": "0099"}
    with pytest.raises(ValueError, match="additional-service SI twice"), history_factory.begin() as session:
        history.sync_additional_services(session, [SERVICES[0], other])
    with pytest.raises(ValueError, match="not a date"), history_factory.begin() as session:
        history.sync_holidays(session, [{"date": "25.12.2026", "name": name("Weihnachten")}])


def test_change_log_keeps_each_source_apart(history_factory: sessionmaker[Session]) -> None:
    with history_factory.begin() as session:
        history.sync_holidays(session, HOLIDAYS[:1])
        history.upsert_newspaper_summary(session, newspaper_number=5120, record={"title": "Anzeiger"})
    with history_factory() as session:
        assert [c.entity for c in history.master_data_changes(session, source="commerce")] == ["holiday"]
        assert [c.entity for c in history.master_data_changes(session, source="newspaper")] == [
            "newspaper-summary"
        ]


def test_migration_gives_earlier_changes_the_newspaper_source(database_url: str) -> None:
    engine = create_engine_for(database_url)
    try:
        config = alembic_config()
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "0003")
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO master_data_changes (entity, entity_key, change, changed_at) "
                    "VALUES ('newspaper-summary', '5120', 'added', CURRENT_TIMESTAMP)"
                )
            )
        migrate(engine)
        with engine.begin() as connection:
            assert connection.execute(text("SELECT source FROM master_data_changes")).scalars().all() == [
                "newspaper"
            ]
            # From now on a change without its source is refused.
            with pytest.raises(Exception, match="(?i)null"):
                connection.execute(
                    insert(MasterDataChange.__table__).values(
                        entity="holiday", entity_key="x", change="added", changed_at=dt.datetime.now(dt.UTC)
                    )
                )
    finally:
        engine.dispose()
