"""``postflows deploy`` on the session's Prefect test server: the work pools, every catalog deployment on its
API's pool, the rate limits and the automations; a second run changes nothing; what an operator changed in
the UI (a paused schedule, parameter defaults) is left alone and said, unless ``--reset``. Everything made
here is deleted again: the server is shared by the flow tests of the process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import DeploymentUpdate
from prefect.exceptions import ObjectNotFound
from prefect.runner import Runner
from prefect.utilities.callables import parameter_schema
from typer.testing import CliRunner

from deployments.automations import CRASH_SILENT_RUNS, RETRY_CRASHED_RUNS
from deployments.catalog import CATALOG, spec_named
from deployments.deploy import CODE_ROOT
from deployments.serve import parameter_schema_of
from postflows.cli import app
from runtime.api_limits import ADDRESS_SERVICE, COMMERCE_API, NEWSPAPER_API

runner = CliRunner()
POOLS = ("address-service", "newspaper", "commerce")
ONE_POOL = "postflows-test-one-pool"


async def _delete_deployments_and_pools() -> None:
    async with get_client() as client:
        for spec in CATALOG:
            with contextlib.suppress(ObjectNotFound):
                deployment = await client.read_deployment_by_name(spec.full_name)
                await client.delete_deployment(deployment.id)
        for pool in (*POOLS, ONE_POOL):
            with contextlib.suppress(ObjectNotFound):
                await client.delete_work_pool(pool)


@pytest.fixture
def deploy_env(setup_env: None) -> Iterator[None]:
    """``setup_env`` (limits and automations deleted afterwards), and the pools and deployments gone too."""
    asyncio.run(_delete_deployments_and_pools())
    yield
    asyncio.run(_delete_deployments_and_pools())


def _deploy(*args: str) -> str:
    result = runner.invoke(app, ["deploy", "--sandbox", *args])
    assert result.exit_code == 0, result.output
    return result.output


async def _deployment(name: str) -> Any:
    async with get_client() as client:
        return await client.read_deployment_by_name(spec_named(name).full_name)


def test_deploy_makes_pools_deployments_limits_and_automations_and_a_second_run_changes_nothing(
    deploy_env: None,
) -> None:
    first = _deploy()
    for pool in POOLS:
        assert f"work pool {pool}: created (type process)" in first
        assert f"  prefect worker start --pool {pool}\n" in first
    for spec in CATALOG:
        assert f"deployment {spec.full_name}: created (pool {spec.work_pool})" in first
    for limit in (ADDRESS_SERVICE, NEWSPAPER_API, COMMERCE_API):
        assert f"rate limit {limit}: " in first
    assert f"automation {CRASH_SILENT_RUNS}: created" in first
    assert f"automation {RETRY_CRASHED_RUNS}: created" in first

    query = asyncio.run(_deployment("address-query"))
    assert query.work_pool_name == "address-service"
    assert query.entrypoint == "flows/address_query.py:address_query"
    assert query.pull_steps == [
        {"prefect.deployments.steps.set_working_directory": {"directory": str(CODE_ROOT)}}
    ]
    assert query.parameter_openapi_schema["additionalProperties"] is False
    assert query.global_concurrency_limit.limit == 2 and query.tags == ["address-service"]
    statistics = asyncio.run(_deployment("newspaper-statistics"))
    assert statistics.work_pool_name == "newspaper"
    assert {s.slug: s.schedule.timezone for s in statistics.schedules} == {
        "az-quarterly": "Europe/Zurich",
        "aza-semi-annually": "Europe/Zurich",
        "azb-yearly": "Europe/Zurich",
    }
    assert asyncio.run(_deployment("file-arrived")).work_pool_name == "address-service"
    assert asyncio.run(_deployment("pickup-registration")).work_pool_name == "commerce"

    second = _deploy()
    for pool in POOLS:
        assert f"work pool {pool}: unchanged (type process: left as it is)" in second
    for spec in CATALOG:
        assert f"deployment {spec.full_name}: unchanged (pool {spec.work_pool})" in second
    assert not re.search(r": (created|updated)\b", second), second
    assert asyncio.run(_deployment("address-query")).updated == query.updated


DEFAULTS = {"output": {"output_dir": "/srv/postflows/out"}}


async def _change_in_the_ui(paused: tuple[str, ...], with_defaults: str, defaults: dict[str, Any]) -> None:
    """What an operator does in the UI: each schedule of the ``paused`` deployments switched off, parameter
    defaults set on another."""
    async with get_client() as client:
        for name in paused:
            deployment = await client.read_deployment_by_name(spec_named(name).full_name)
            for schedule in deployment.schedules:
                await client.update_deployment_schedule(deployment.id, schedule.id, active=False)
        target = await client.read_deployment_by_name(spec_named(with_defaults).full_name)
        await client.update_deployment(target.id, DeploymentUpdate(parameters=defaults))


def test_deploy_leaves_the_operators_changes_alone_unless_reset(deploy_env: None) -> None:
    _deploy()
    # The server drops a schedule's parameters when it is paused (structure-files' weekly has some).
    asyncio.run(_change_in_the_ui(("newspaper-reports", "structure-files"), "address-query", DEFAULTS))
    again = _deploy()
    assert (
        "deployment newspaper-reports/newspaper-reports: unchanged (pool newspaper); "
        "left alone: schedule daily paused on the server"
    ) in again
    assert (
        "deployment address-query/address-query: unchanged (pool address-service); "
        "left alone: parameter defaults set on the server (output)"
    ) in again
    assert (
        "deployment structure-files/structure-files: updated (pool newspaper); "
        "left alone: schedule weekly paused on the server"
    ) in again  # its schedule's parameters are the code's again; it stays paused
    (weekly,) = asyncio.run(_deployment("structure-files")).schedules
    assert (weekly.active, weekly.parameters) == (False, {"request": {"file_code": 9}})
    assert asyncio.run(_deployment("newspaper-reports")).schedules[0].active is False
    assert asyncio.run(_deployment("address-query")).parameters == DEFAULTS

    reset = _deploy("--reset")
    assert "deployment newspaper-reports/newspaper-reports: updated (pool newspaper)\n" in reset
    assert "deployment address-query/address-query: updated (pool address-service)\n" in reset
    assert "left alone" not in reset
    assert asyncio.run(_deployment("newspaper-reports")).schedules[0].active is True
    assert asyncio.run(_deployment("address-query")).parameters == {}
    assert asyncio.run(_deployment("address-query")).parameter_openapi_schema["additionalProperties"] is False
    third = _deploy()
    assert not re.search(r": (created|updated)\b", third), third


async def _open_parameter_schema(name: str) -> None:
    """The deployment ``name`` with the flow's open parameter schema, as ``prefect deploy`` writes it."""
    async with get_client() as client:
        deployment = await client.read_deployment_by_name(spec_named(name).full_name)
        schema = parameter_schema(spec_named(name).load_flow()).model_dump()
        await client.update_deployment(deployment.id, DeploymentUpdate(parameter_openapi_schema=schema))


def test_deploy_closes_an_open_parameter_schema(deploy_env: None) -> None:
    _deploy()
    asyncio.run(_open_parameter_schema("address-query"))
    assert "additionalProperties" not in asyncio.run(_deployment("address-query")).parameter_openapi_schema
    again = _deploy()
    assert "deployment address-query/address-query: updated (pool address-service)\n" in again
    schema = asyncio.run(_deployment("address-query")).parameter_openapi_schema
    assert (
        schema == parameter_schema_of(spec_named("address-query")) and schema["additionalProperties"] is False
    )


def test_setup_makes_the_work_pools_that_prefect_deploy_needs_and_keeps_them(deploy_env: None) -> None:
    first = runner.invoke(app, ["setup"])
    assert first.exit_code == 0, first.output
    for pool in POOLS:
        assert f"work pool {pool}: created (type process)" in first.output
    assert "deployment " not in first.output, "setup deploys nothing: prefect deploy --all does"
    again = runner.invoke(app, ["setup"])
    assert again.exit_code == 0, again.output
    for pool in POOLS:
        assert f"work pool {pool}: unchanged (type process: left as it is)" in again.output


def test_one_pool_for_every_deployment(deploy_env: None) -> None:
    output = _deploy("--pool", ONE_POOL)
    assert f"work pool {ONE_POOL}: created (type process)" in output
    assert "work pool address-service" not in output
    assert f"prefect worker start --pool {ONE_POOL}" in output
    assert asyncio.run(_deployment("delivery-reference-sync")).work_pool_name == ONE_POOL
    moved = _deploy()  # back to the pools of the APIs: the deployments move
    assert f"deployment {spec_named('return-order').full_name}: updated (pool commerce)" in moved
    assert asyncio.run(_deployment("return-order")).work_pool_name == "commerce"


def test_deploy_without_a_prefect_server_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("POSTFLOWS_DATA_DIR", str(tmp_path / "data"))
    result = runner.invoke(app, ["deploy"])
    assert result.exit_code == 2, result.output
    assert "failed: no Prefect server to deploy to: start one with `postflows server start`" in result.output


def test_serve_started_again_keeps_the_operators_changes_and_never_pauses_on_stop(
    deploy_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``postflows serve`` builds the same deployments; started again, it keeps a schedule switched off and
    parameter defaults set in the UI, and its stop leaves the schedules as they are."""
    from deployments import serve

    served, notes = serve.served_deployments()
    assert notes == []  # nothing on the server yet
    assert all(not deployment.paused for deployment in served)
    _deploy()  # the deployments now exist on the server, as a first serve would have left them
    asyncio.run(_change_in_the_ui(("newspaper-reports",), "address-query", DEFAULTS))
    served, notes = serve.served_deployments()
    by_name = {deployment.name: deployment for deployment in served}
    assert [schedule.active for schedule in by_name["newspaper-reports"].schedules] == [False]
    assert by_name["address-query"].parameters == DEFAULTS
    assert sorted(notes) == [
        "deployment address-query/address-query: left alone: parameter defaults set on the server (output)",
        "deployment newspaper-reports/newspaper-reports: left alone: schedule daily paused on the server",
    ]

    asyncio.run(_open_parameter_schema("address-query"))
    started: list[bool] = []

    async def start(self: Runner, *args: Any, **kwargs: Any) -> None:
        started.append(self.pause_on_shutdown)

    monkeypatch.setattr(Runner, "start", start)
    serve.serve_all(served)
    assert started == [False]  # stopping never pauses the schedules
    for spec in CATALOG:  # each applied, its parameter schema closed before the runner starts
        schema = asyncio.run(_deployment(spec.name)).parameter_openapi_schema
        assert schema == serve.parameter_schema_of(spec) and schema["additionalProperties"] is False


def test_deploy_and_serve_with_no_service_url_are_refused_unless_sandbox(deploy_env: None) -> None:
    for command in ("deploy", "serve"):
        result = runner.invoke(app, [command])
        assert result.exit_code == 2, result.output
        for name in (
            "POSTFLOWS_ADDRESS_SERVICE_URL",
            "POSTFLOWS_NEWSPAPER_URL",
            "POSTFLOWS_SANDBOX",
            "--sandbox",
        ):
            assert name in result.output, result.output
    with pytest.raises(ObjectNotFound):
        asyncio.run(_deployment("address-query"))  # nothing was deployed
    jobs = asyncio.run(_deployment_after(_deploy)).job_variables  # --sandbox: the sandbox asked for
    assert jobs["env"]["POSTFLOWS_SANDBOX"] == "1"
    assert jobs["env"]["PREFECT_RUNNER_HEARTBEAT_FREQUENCY"] == "30"


async def _deployment_after(deploy: Any) -> Any:
    await asyncio.to_thread(deploy)
    return await _deployment("address-query")


def test_serve_with_sandbox_sets_it_for_its_runs(deploy_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTFLOWS_SANDBOX", "")  # restored after the test; serve sets it in its process
    monkeypatch.setattr("deployments.serve.served_deployments", lambda: ([], []))
    served: list[str | None] = []
    monkeypatch.setattr(
        "deployments.serve.serve_all", lambda deployments: served.append(os.environ.get("POSTFLOWS_SANDBOX"))
    )
    result = runner.invoke(app, ["serve", "--sandbox"])
    assert result.exit_code == 0, result.output
    assert served == ["1"]


SECRETS = {
    "POSTFLOWS_ADDRESS_SERVICE_PASSWORD": "address-pw-4711",
    "POSTFLOWS_DATABASE_URL": "postgresql+psycopg://history:db-pw-1234@db.example/postflows",
}


def test_deploy_carries_the_settings_and_keeps_the_secrets_in_a_block(
    deploy_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runtime.blocks import PostflowsCredentials

    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_URL", "https://address.example/REST/v1")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_USER", "tech-user")
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    result = runner.invoke(app, ["deploy"])  # one service URL: no --sandbox needed
    assert result.exit_code == 0, result.output
    assert "secrets saved in block postflows-credentials/postflows-deployments" in result.output
    env = asyncio.run(_deployment("address-query")).job_variables["env"]
    assert env["POSTFLOWS_ADDRESS_SERVICE_URL"] == "https://address.example/REST/v1"
    assert env["POSTFLOWS_ADDRESS_SERVICE_USER"] == "tech-user"
    assert env["POSTFLOWS_DATABASE_URL"] == "postgresql+psycopg://history@db.example/postflows"
    assert env["POSTFLOWS_CREDENTIALS_BLOCK"] == "postflows-deployments"
    assert "POSTFLOWS_SANDBOX" not in env
    every = str([asyncio.run(_deployment(spec.name)).job_variables for spec in CATALOG]) + result.output
    assert not any(secret in every for secret in ("address-pw-4711", "db-pw-1234"))
    block: Any = PostflowsCredentials.load("postflows-deployments", _sync=True)  # type: ignore[call-arg]
    assert block.address_service_password.get_secret_value() == "address-pw-4711"
    assert block.database_password.get_secret_value() == "db-pw-1234"

    asyncio.run(_set_env_in_the_ui("address-query", "POSTFLOWS_ADDRESS_SERVICE_USER", "ui-user"))
    monkeypatch.setenv("POSTFLOWS_HTTP_MAX_ATTEMPTS", "7")  # a change of settings
    again = _deploy()
    assert (
        "deployment address-query/address-query: updated (pool address-service); "
        "left alone: job variables set on the server (env POSTFLOWS_ADDRESS_SERVICE_USER)"
    ) in again
    env = asyncio.run(_deployment("address-query")).job_variables["env"]
    assert env["POSTFLOWS_ADDRESS_SERVICE_USER"] == "ui-user"
    assert env["POSTFLOWS_HTTP_MAX_ATTEMPTS"] == "7" and env["POSTFLOWS_SANDBOX"] == "1"
    assert (
        asyncio.run(_deployment("cleanup")).job_variables["env"]["POSTFLOWS_ADDRESS_SERVICE_USER"]
        == "tech-user"
    )
    third = _deploy()
    assert not re.search(r": (created|updated)\b", third), third
    reset = _deploy("--reset")
    assert "left alone" not in reset
    env = asyncio.run(_deployment("address-query")).job_variables["env"]
    assert env["POSTFLOWS_ADDRESS_SERVICE_USER"] == "tech-user"


async def _set_env_in_the_ui(name: str, variable: str, value: str) -> None:
    async with get_client() as client:
        deployment = await client.read_deployment_by_name(spec_named(name).full_name)
        jobs = dict(deployment.job_variables)
        jobs["env"] = {**jobs["env"], variable: value}
        await client.update_deployment(deployment.id, DeploymentUpdate(job_variables=jobs))


def test_deploy_with_the_workers_interpreter_has_them_start_the_engine_directly(deploy_env: None) -> None:
    python = sys.executable
    output = _deploy("--worker-python", python)
    command = f"{python} -m prefect.engine"
    assert f"job variable command of every deployment: {command}" in output
    for spec in CATALOG:
        assert asyncio.run(_deployment(spec.name)).job_variables["command"] == command, spec.name
    again = _deploy()  # deploy's own command follows the code: none now
    assert "left alone" not in again
    assert "command" not in asyncio.run(_deployment("address-batch")).job_variables

    for path, problem in (("python3", "give the absolute path"), ("/", "not an executable file")):
        result = runner.invoke(app, ["deploy", "--sandbox", "--worker-python", path])
        assert result.exit_code == 2, result.output
        assert result.output.startswith(f"refused: --worker-python {path}: {problem}"), result.output
