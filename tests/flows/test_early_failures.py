"""A run that fails before it opens its history record (a missing input file, a parameter the flow does not
take) is in the history all the same, FAILED with its reason; a run that recorded itself is not recorded
twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect.client.orchestration import get_client

import history
from fileio.errors import InputError
from flows.address_query import address_query
from flows.pickup_registration import pickup_registration
from runtime.settings import get_settings
from tasks.address_service.ping import PingFailed
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"


def _runs() -> list[history.Run]:
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        return list(reversed(history.list_runs(session, limit=10)))


async def test_a_missing_input_file_is_a_failed_run_in_the_history(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "users.csv"
    state = await call(
        pickup_registration, input_path=missing, output_dir=tmp_path / "out", return_state=True
    )
    assert state.is_failed()
    with pytest.raises(InputError):
        await state.result()

    [run] = _runs()
    assert run.flow == "pickup-registration" and run.state == "FAILED"
    assert "input file not found" in (run.error or "") and str(missing) in (run.error or "")
    assert run.flow_run_id == str(state.state_details.flow_run_id)
    assert run.parameters["request"]["input_path"] == str(missing)
    assert sandbox.transport.count("/pickup/v1/users") == 0


async def test_a_parameter_the_flow_does_not_take_is_a_failed_run_naming_it(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    """As a deployment run with an unknown parameter fails: the flow never starts; its reason names it."""
    state = await address_query(  # type: ignore[call-arg]
        request={"input_path": str(EXAMPLE), "inputpath": str(EXAMPLE)},
        output={"output_dir": str(tmp_path / "out")},
        return_state=True,
    )
    assert state.is_failed()

    [run] = _runs()
    assert run.flow == "address-query" and run.state == "FAILED" and "inputpath" in (run.error or "")
    async with get_client() as client:
        flow_run = await client.read_flow_run(state.state_details.flow_run_id)
    assert run.flow_run_id == str(flow_run.id)


async def test_a_run_that_recorded_itself_is_recorded_once(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.config.address_password = "the-password-the-service-expects"
    with pytest.raises(PingFailed):
        await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out")

    [run] = _runs()
    assert run.state == "FAILED" and run.error is not None and run.error.startswith("PingFailed: ")
