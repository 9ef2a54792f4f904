"""The embedded sandbox only when asked: a run of a deployment (a worker's, ``postflows serve``'s) without its
service's URL uses the sandbox only with ``POSTFLOWS_SANDBOX=1``, else it fails at its start in one line
naming the URL's variable and ``POSTFLOWS_SANDBOX``, writing nothing; ``POSTFLOWS_SANDBOX=0`` refuses the
sandbox everywhere; a command (no deployment) uses it when nothing is set, as always."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.flow_engine import run_flow

from flows.address_batch import address_batch
from runtime import wiring
from runtime.endpoints import ConfigurationError, in_deployment_run, require_sandbox_allowed
from runtime.settings import Settings
from tests.flows.calls import call, json_parameters
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}
NAMED = ("POSTFLOWS_ADDRESS_SERVICE_URL", "POSTFLOWS_SANDBOX")


@pytest.fixture
async def deployment() -> AsyncIterator[UUID]:
    """The address batch as a deployment of the test server (the test runs its runs in-process)."""
    runner_deployment = await address_batch.to_deployment(name="sandbox-gate-test")  # type: ignore[misc]
    deployment_id: UUID = await runner_deployment.apply()
    yield deployment_id
    async with get_client() as client:
        await client.delete_deployment(deployment_id)


async def _deployment_run(deployment: UUID, out: Path) -> object:
    """A run of ``deployment`` run in this process, as a worker runs it; its final state."""
    parameters = json_parameters(address_batch, input_path=str(EXAMPLE), output_dir=str(out), **FAST)
    async with get_client() as client:
        flow_run = await client.create_flow_run_from_deployment(deployment, parameters=parameters)
    flow: Any = address_batch
    return await run_flow(flow, flow_run=flow_run, return_type="state")  # type: ignore[misc]


async def test_a_deployment_run_without_the_url_fails_at_its_start_and_writes_nothing(
    sandbox: Sandbox, flow_env: Path, deployment: UUID, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    state = await _deployment_run(deployment, out)
    assert state.is_failed()  # type: ignore[attr-defined]
    message = str(state.message)  # type: ignore[attr-defined]
    assert "ConfigurationError" in message and all(name in message for name in NAMED), message
    assert "\n" not in message
    assert not out.exists() or not any(out.rglob("*"))
    assert not sandbox.transport.calls


async def test_a_deployment_run_given_sandbox_1_runs_on_the_sandbox(
    sandbox: Sandbox, flow_env: Path, deployment: UUID, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_SANDBOX", "1")
    state = await _deployment_run(deployment, tmp_path / "out")
    assert state.is_completed(), state.message  # type: ignore[attr-defined]
    assert (tmp_path / "out" / "summary.md").is_file()


async def test_a_command_uses_the_sandbox_unless_sandbox_0(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert summary.result_rows > 0
    monkeypatch.setenv("POSTFLOWS_SANDBOX", "0")
    with pytest.raises(ConfigurationError) as refused:
        await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "refused", **FAST)
    assert all(name in str(refused.value) for name in NAMED)
    assert "refuses the embedded sandbox" in str(refused.value)
    assert not (tmp_path / "refused").exists() or not any((tmp_path / "refused").rglob("*"))


def test_the_rule_where_a_flow_run_id_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's or serve's run process has PREFECT__FLOW_RUN_ID: the sandbox is refused there unless asked
    for; a real URL is never affected; 0 refuses it on the command line too."""
    assert not in_deployment_run()
    require_sandbox_allowed(Settings(), "newspaper")  # the command line: as always
    monkeypatch.setenv("PREFECT__FLOW_RUN_ID", "00000000-0000-0000-0000-000000000001")
    assert in_deployment_run()
    for api, variable in (
        ("address-service", "POSTFLOWS_ADDRESS_SERVICE_URL"),
        ("newspaper", "POSTFLOWS_NEWSPAPER_URL"),
        ("commerce", "POSTFLOWS_COMMERCE_URL"),
    ):
        with pytest.raises(ConfigurationError, match=rf"{variable} is not set .*POSTFLOWS_SANDBOX=1"):
            wiring.endpoint(Settings(), api)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match=variable):
            wiring.resolve(Settings(), api)  # type: ignore[arg-type]
        assert wiring.resolve(Settings(sandbox=True), api).sandbox  # type: ignore[arg-type]
    real = Settings(address_service_url="https://a.example/REST/v1", address_service_user="u")
    assert wiring.endpoint(real, "address-service").base_url == "https://a.example/REST/v1"
    monkeypatch.delenv("PREFECT__FLOW_RUN_ID")
    with pytest.raises(ConfigurationError, match="POSTFLOWS_SANDBOX=0 refuses the embedded sandbox"):
        wiring.resolve(Settings(sandbox=False), "commerce")
