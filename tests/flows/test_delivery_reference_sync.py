"""The delivery reference data sync against the sandbox: tables filled, a second run changes nothing, a
renamed holiday is logged field by field; the command prints the counts and lists the holidays."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

import history
from flows.delivery_reference_sync import delivery_reference_sync
from history import AdditionalServiceRow, DeliveryHolidayRow, DeliveryInstructionRow, MasterDataChange
from postflows.cli import app
from sandbox.commerce import delivery
from sandbox.commerce.delivery_options import ADDITIONAL_SERVICES, DELIVERY_INSTRUCTIONS
from sandbox.commerce.holidays import Holiday, swiss_holidays
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

UNCHANGED = {"added": 0, "changed": 0, "removed": 0}


def factory(data_dir: Path):  # type: ignore[no-untyped-def]
    return history.session_factory(f"sqlite:///{data_dir / 'history.db'}")


def renamed_stephens_day(year: int) -> tuple[Holiday, ...]:
    return tuple(
        Holiday(h.day, {**h.name, "de": "Stefanstag"}) if h.name["de"] == "Stephanstag" else h
        for h in swiss_holidays(year)
    )


async def test_sync_twice_changes_nothing_then_a_renamed_holiday_is_logged(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await call(delivery_reference_sync, tmp_path / "first")
    holidays = first.counts["holidays"]["added"]
    assert holidays >= 18  # this year's and next year's
    assert first.counts["additional services"]["added"] == len(ADDITIONAL_SERVICES)
    assert first.counts["delivery instructions"]["added"] == len(DELIVERY_INSTRUCTIONS)
    assert first.changes == holidays + len(ADDITIONAL_SERVICES) + len(DELIVERY_INSTRUCTIONS)
    received = json.loads((tmp_path / "first" / "delivery-instructions.json").read_text())
    assert received == list(DELIVERY_INSTRUCTIONS)
    assert (tmp_path / "first" / "summary.md").is_file()

    second = await call(
        delivery_reference_sync,
    )
    assert second.changes == 0 and second.files == []
    for counts in second.counts.values():
        assert counts == {**UNCHANGED, "unchanged": counts["unchanged"]}
    assert sandbox.transport.count("/options/holidays") == 2

    monkeypatch.setattr(delivery, "swiss_holidays", renamed_stephens_day)
    third = await call(delivery_reference_sync, tmp_path / "third")
    assert third.counts["holidays"] == {**UNCHANGED, "changed": 2, "unchanged": holidays - 2}
    assert third.changes == 2
    report = (tmp_path / "third" / "summary.md").read_text()
    assert "| holidays | 0 | 2 | 0 |" in report and "Stefanstag" in report

    with factory(flow_env)() as session:
        assert session.scalar(select(func.count()).select_from(DeliveryHolidayRow)) == holidays
        assert session.scalar(select(func.count()).select_from(AdditionalServiceRow)) == len(
            ADDITIONAL_SERVICES
        )
        assert session.scalar(select(func.count()).select_from(DeliveryInstructionRow)) == len(
            DELIVERY_INSTRUCTIONS
        )
        renamed = [
            c for c in history.master_data_changes(session, source="commerce") if c.change == "changed"
        ]
        assert [(c.entity, c.entity_key[5:], c.field) for c in renamed] == [("holiday", "12-26", "name")] * 2
        assert renamed[0].old_value["de"] == "Stephanstag" and renamed[0].new_value["de"] == "Stefanstag"
        assert renamed[0].new_value["fr"] == renamed[0].old_value["fr"]
        stored = session.get(DeliveryHolidayRow, dt.date.fromisoformat(renamed[0].entity_key))
        assert stored is not None and stored.name_de == "Stefanstag"
        assert session.scalar(select(func.count()).select_from(MasterDataChange)) == first.changes + 2


def test_command_prints_counts_and_lists_the_holidays(
    sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(app, ["delivery-sync", "--show"])
    assert result.exit_code == 0, result.output
    start = result.output.index("{\n")
    summary = json.JSONDecoder().raw_decode(result.output[start:])[0]
    assert summary["counts"]["additional services"] == {
        **UNCHANGED,
        "added": len(ADDITIONAL_SERVICES),
        "unchanged": 0,
    }
    assert (
        "Holidays from" in result.output
        and "Weihnachten" in result.output
        and "Christmas Day" in result.output
    )
    assert "commerce API: embedded sandbox" in result.output
