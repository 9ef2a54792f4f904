"""Flow runs are named after what they work on: ``<flow>-<file or number>-<start time>``."""

from __future__ import annotations

import re
from pathlib import Path

from prefect.client.orchestration import get_client

from flows.address_query import address_query
from flows.cleanup import cleanup
from flows.naming import run_name
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
STAMP = r"\d{8}-\d{6}"


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
    name = run_name("x", "input_path", "sheet", "order_id", lambda parameters: None)()
    assert re.fullmatch(rf"x-mai\.xlsx-42-{STAMP}", name)
