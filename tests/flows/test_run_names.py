"""Flow runs are named after what they work on: ``<flow>-<file or number>-<start time>-<id>``, the start in
Swiss time, the id's first hex digits keeping runs of the same second apart."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client

from flows import naming
from flows.address_query import address_query
from flows.cleanup import cleanup
from flows.naming import run_name
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
STAMP = r"\d{8}-\d{6}-[0-9a-f]{4}"


async def name_of(state) -> str:  # type: ignore[no-untyped-def]
    async with get_client() as client:
        run = await client.read_flow_run(state.state_details.flow_run_id)
    return str(run.name)


async def test_a_file_flow_is_named_by_its_file(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    state = await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", return_state=True)
    assert state.is_completed()
    assert re.fullmatch(rf"address-query-address-batch\.csv-{STAMP}", await name_of(state))


async def test_a_flow_without_a_file_is_named_by_its_parameters(sandbox: Sandbox, flow_env: Path) -> None:
    state = await call(cleanup, older_than_hours=12, return_state=True)
    assert re.fullmatch(rf"cleanup-older-than-12h-{STAMP}", await name_of(state))
    forced = await call(cleanup, older_than_hours=12, force=True, return_state=True)
    assert re.fullmatch(rf"cleanup-older-than-12h-force-{STAMP}", await name_of(forced))


def test_names_leave_empty_values_out_and_name_paths_by_their_file(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from prefect.runtime import flow_run

    monkeypatch.setattr(
        flow_run, "parameters", {"input_path": "C:\\Kunden\\mai.xlsx", "sheet": "", "order_id": 42}
    )
    monkeypatch.setattr(flow_run, "id", str(uuid.uuid4()))
    name = run_name("x", "input_path", "sheet", "order_id", lambda parameters: None)()
    assert re.fullmatch(rf"x-mai\.xlsx-42-{STAMP}", name)


@pytest.mark.parametrize(
    ("utc", "swiss"),
    [("2026-01-15T04:30:00", "20260115-053000"), ("2026-07-15T03:30:00", "20260715-053000")],
    ids=["winter", "summer"],
)
def test_the_time_is_swiss_whatever_the_workers_zone(
    monkeypatch: pytest.MonkeyPatch, utc: str, swiss: str
) -> None:
    """The 05:30 Zurich run is named ...-053000 on a worker that runs in UTC (or in any other zone)."""
    from prefect.runtime import flow_run

    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setattr(naming, "_now", lambda: dt.datetime.fromisoformat(utc).replace(tzinfo=dt.UTC))
    monkeypatch.setattr(flow_run, "parameters", {"input_path": "/in/a.csv"})
    monkeypatch.setattr(flow_run, "id", "9c1e07aa-5b6d-4a0e-8f3a-2d1c0b9e8f7a")
    assert run_name("address-batch", "input_path")() == f"address-batch-a.csv-{swiss}-9c1e"


def test_two_runs_started_in_the_same_second_get_different_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.runtime import flow_run

    moment = dt.datetime(2026, 3, 2, 7, 15, tzinfo=dt.UTC)
    monkeypatch.setattr(naming, "_now", lambda: moment)
    monkeypatch.setattr(flow_run, "parameters", {"input_path": "/in/a.csv"})
    names = set()
    for run_id in ("0b7d2c4e-0000-4000-8000-000000000001", "5e21aa90-0000-4000-8000-000000000002"):
        monkeypatch.setattr(flow_run, "id", run_id)
        names.add(run_name("address-batch", "input_path")())
    assert names == {"address-batch-a.csv-20260302-081500-0b7d", "address-batch-a.csv-20260302-081500-5e21"}
