"""The master data flow against the sandbox: tables upserted, changes kept, workbook written."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from openpyxl import load_workbook
from sqlalchemy import func, select

import history
from connectors.newspaper import NewspaperRejected
from fileio.sandbox_marks import BANNER_SHEET
from flows.newspaper_master_data import MasterDataNotSynced, MasterDataSweepResult, newspaper_master_data
from history import BlackListEntryRow, DistributionDetailRow, NewspaperSummaryRow
from sandbox.newspaper import reference
from tests.flows.calls import call
from tests.flows.conftest import Sandbox


def factory(data_dir: Path):  # type: ignore[no-untyped-def]
    return history.session_factory(f"sqlite:///{data_dir / 'history.db'}")


async def test_gratis_newspaper_synced_then_changes_logged(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await call(newspaper_master_data, 5120, tmp_path / "first")
    assert first.counts["newspaper summary"]["added"] == 1
    assert first.counts["distribution list"]["added"] == 6  # list header + 5 postcodes
    assert first.counts["black list"]["added"] == 2
    for name in ("newspaper-summary.json", "distribution-list.json", "black-list.json", "master-data.xlsx"):
        assert (tmp_path / "first" / name).is_file(), name
    assert json.loads((tmp_path / "first" / "black-list.json").read_text())["blackListDetails"]

    again = await call(newspaper_master_data, 5120, tmp_path / "again")
    assert again.changes == 0
    assert again.counts["distribution list"] == {"added": 0, "changed": 0, "removed": 0, "unchanged": 6}

    paper = reference.NEWSPAPERS[5120]
    changed = dataclasses.replace(
        paper,
        title="Anzeiger Rigi & Seeland",
        distribution=(dataclasses.replace(paper.distribution[0], count=2222), *paper.distribution[1:4]),
        black_list=paper.black_list[:1],
    )
    monkeypatch.setitem(reference.NEWSPAPERS, 5120, changed)
    third = await call(newspaper_master_data, 5120, tmp_path / "third")
    assert third.counts["newspaper summary"]["changed"] == 1
    assert third.counts["distribution list"] == {"added": 0, "changed": 1, "removed": 1, "unchanged": 4}
    assert third.counts["black list"] == {"added": 0, "changed": 0, "removed": 1, "unchanged": 1}

    with factory(flow_env)() as session:
        summary_row = session.get(NewspaperSummaryRow, 5120)
        assert summary_row is not None and summary_row.title == "Anzeiger Rigi & Seeland"
        assert session.scalar(select(func.count()).select_from(DistributionDetailRow)) == 5
        assert len(history.current_distribution_details(session, 5120)) == 4
        assert session.scalar(select(func.count()).select_from(BlackListEntryRow)) == 2
        logged = history.master_data_changes(session, entity="newspaper-summary")
        title = [c for c in logged if c.field == "title"]
        assert [(c.old_value, c.new_value) for c in title] == [("Anzeiger Rigi", "Anzeiger Rigi & Seeland")]
    workbook = load_workbook(tmp_path / "third" / "master-data.xlsx", read_only=True)
    assert workbook.sheetnames == [
        BANNER_SHEET,
        "newspaper",
        "distribution list",
        "distribution details",
        "black list",
        "changes",
    ]
    assert len(list(workbook["changes"].iter_rows(min_row=2))) == third.changes == 4


async def test_standard_newspaper_has_no_lists(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    summary = await call(newspaper_master_data, 4711, tmp_path / "out")
    assert set(summary.counts) == {"newspaper summary"}
    assert any("0100" in note for note in summary.notes)
    assert "0100" in (tmp_path / "out" / "summary.md").read_text()
    assert sandbox.transport.count("/black-list") == 0


async def test_foreign_newspaper_fails_with_its_code(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    with pytest.raises(NewspaperRejected) as caught:
        await call(newspaper_master_data, 9001, tmp_path / "out")
    assert caught.value.code == "0001"


async def test_without_a_number_every_synced_newspaper_is_synced_again(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    nothing = await call(
        newspaper_master_data,
    )
    assert nothing == MasterDataSweepResult(newspapers=[], changes={}, failed={}, sandbox=True)
    assert sum(sandbox.transport.calls.values()) == 0

    await call(newspaper_master_data, 5120, tmp_path / "first")
    await call(newspaper_master_data, 4711, tmp_path / "first-4711")
    summaries = sandbox.transport.count("/summary")

    daily = await call(
        newspaper_master_data,
    )
    assert daily == MasterDataSweepResult(
        newspapers=[4711, 5120], changes={4711: 0, 5120: 0}, failed={}, sandbox=True
    )
    # Printed as before: the newspapers' numbers are the keys of the changes.
    assert daily.summary() == {
        "newspapers": [4711, 5120],
        "changes": {"4711": 0, "5120": 0},
        "failed": {},
        "sandbox": True,
    }
    assert sandbox.transport.count("/summary") == summaries + 2
    # Each newspaper is its own recorded run, written to the data dir by default.
    assert (flow_env / "newspaper-master-data" / "5120" / "master-data.xlsx").is_file()
    assert (flow_env / "newspaper-master-data" / "4711" / "summary.md").is_file()
    with factory(flow_env)() as session:
        runs = history.list_runs(session, limit=10, flow="newspaper-master-data")
    assert len(runs) == 4 and {run.state for run in runs} == {"COMPLETED"}


async def test_one_newspaper_failing_does_not_stop_the_others(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    await call(newspaper_master_data, 5120, tmp_path / "first")
    await call(newspaper_master_data, 4711, tmp_path / "first-4711")
    sandbox.inject(api="newspaper", endpoint="*4711/summary", kind="http_status", value=403, times=None)
    with pytest.raises(MasterDataNotSynced, match="1 of 2 newspapers not synced: 4711"):
        await call(newspaper_master_data, output_dir=tmp_path / "daily")
    assert (tmp_path / "daily" / "5120" / "summary.md").is_file()
