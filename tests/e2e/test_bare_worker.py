"""The settings travel with the deployments: ``postflows deploy`` is given a service (a sandbox served over
HTTP by ``postflows sandbox``, a real service to the client) and a run history; a worker started with
nothing but ``PREFECT_API_URL`` (no ``POSTFLOWS_*``, another HOME) runs a REST-triggered address-batch run
against that service, recorded in that history, and nothing reaches an embedded sandbox. Deploying with no
service URL and no ``--sandbox`` is refused; a run of an API the deployments carry no URL for fails at its
start naming the variables and writes nothing.

The test has a Prefect server of its own: the session's serves the same deployment names through
``postflows serve``, which would take their runs.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

import history
from tests.e2e.conftest import (
    EXAMPLE,
    PASSWORD,
    POSTFLOWS,
    USER,
    ServedSandbox,
    base_environment,
    fresh_prefect_database,
    served_sandbox,
    started_prefect_server,
    stop,
    wait_until_up,
)
from tests.e2e.test_deploy import _finished
from tests.e2e.test_work_pool_worker import start_worker

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(420)]

POOL = "e2e-bare-worker"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[dict[str, str], ServedSandbox, str]]:
    """A Prefect server of this test's own, a served sandbox with its request log, a run history (a fresh
    PostgreSQL database with a password when ``make test`` provides a server, else a SQLite file outside
    every data dir), and the environment ``postflows deploy`` is given."""
    with ExitStack() as stack:
        home = tmp_path / "prefect-server"
        home.mkdir()
        booting = stack.enter_context(started_prefect_server(home))
        sandbox = stack.enter_context(
            served_sandbox(tmp_path / "sandbox", job_seconds=0.5, request_log=tmp_path / "requests.jsonl")
        )
        history_url = stack.enter_context(fresh_prefect_database()) or (
            f"sqlite:///{tmp_path / 'shared-history' / 'history.db'}"
        )
        (tmp_path / "shared-history").mkdir()
        wait_until_up(f"{booting.api_url}/health", booting.process, booting.log, timeout=120)
        env = base_environment()
        env.update(
            PREFECT_API_URL=booting.api_url,
            PREFECT_HOME=str(tmp_path / "deploy-prefect-home"),
            POSTFLOWS_DATA_DIR=str(tmp_path / "data"),
            POSTFLOWS_DATABASE_URL=history_url,
        )
        yield env, sandbox, booting.api_url


def _deploy(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [POSTFLOWS, "deploy", "--pool", POOL, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def _run(api: httpx.Client, name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    deployment = api.get(f"/deployments/name/{name}/{name}").raise_for_status().json()
    created = api.post(f"/deployments/{deployment['id']}/create_flow_run", json={"parameters": parameters})
    return _finished(api, created.raise_for_status().json()["id"], timeout=240)


def test_a_worker_with_only_the_api_url_runs_on_what_deploy_was_given(
    world: tuple[dict[str, str], ServedSandbox, str], tmp_path: Path
) -> None:
    env, sandbox, api_url = world
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    refused = _deploy(env, cwd)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    for name in ("POSTFLOWS_ADDRESS_SERVICE_URL", "POSTFLOWS_SANDBOX", "--sandbox"):
        assert name in refused.stdout + refused.stderr

    given = {
        **env,
        "POSTFLOWS_ADDRESS_SERVICE_URL": sandbox.address_url,
        "POSTFLOWS_ADDRESS_SERVICE_USER": USER,
        "POSTFLOWS_ADDRESS_SERVICE_PASSWORD": PASSWORD,
    }
    deployed = _deploy(given, cwd)
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    assert "secrets saved in block postflows-credentials/postflows-deployments" in deployed.stdout
    secrets = [PASSWORD]
    history_password = make_url(env["POSTFLOWS_DATABASE_URL"]).password
    if history_password:
        secrets.append(str(history_password))
    assert not any(secret in deployed.stdout + deployed.stderr for secret in secrets)

    bare = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "worker-home"), "PREFECT_API_URL": api_url}
    (tmp_path / "worker-home").mkdir()
    worker = start_worker(bare, POOL, tmp_path / "worker")
    api = httpx.Client(base_url=api_url, timeout=30)
    try:
        batch = api.get("/deployments/name/address-batch/address-batch").raise_for_status().json()
        assert not any(secret in json.dumps(batch) for secret in secrets)
        carried = batch["job_variables"]["env"]
        assert carried["POSTFLOWS_ADDRESS_SERVICE_URL"] == sandbox.address_url
        assert carried["PREFECT_RUNNER_HEARTBEAT_FREQUENCY"] == "30"

        out = tmp_path / "out"
        run = _run(
            api,
            "address-batch",
            {"request": {"input_path": str(EXAMPLE)}, "output": {"output_dir": str(out)}},
        )
        assert run["state_type"] == "COMPLETED", run
        assert (out / "summary.md").is_file()
        assert sum(entry["count"] for entry in sandbox.requests() if entry["api"] == "address") > 0
        assert (tmp_path / "requests.jsonl").read_text(encoding="utf-8").strip()
        _assert_recorded(env["POSTFLOWS_DATABASE_URL"], "address-batch")
        for data_dir in (tmp_path / "data", tmp_path / "worker-home" / ".local" / "share" / "postflows"):
            assert not (data_dir / "sandbox").exists()  # no embedded sandbox was ever asked

        # No newspaper URL was given: its runs fail at their start, naming what to set, writing nothing.
        failed_out = tmp_path / "failed-out"
        failed = _run(
            api,
            "structure-files",
            {"request": {"file_code": 9}, "output": {"output_dir": str(failed_out)}},
        )
        assert failed["state_type"] == "FAILED", failed
        message = failed["state"]["message"]
        assert "POSTFLOWS_NEWSPAPER_URL" in message and "POSTFLOWS_SANDBOX" in message, message
        assert not failed_out.exists() or not any(failed_out.rglob("*"))
    finally:
        api.close()
        stop(worker)
        print((tmp_path / "worker" / "worker.log").read_text(errors="replace")[-5000:])  # noqa: T201


def _assert_recorded(history_url: str, flow: str) -> None:
    try:
        with history.session_factory(history_url)() as session:
            assert [run.state for run in history.list_runs(session, flow=flow)] == ["COMPLETED"]
    finally:
        history.dispose_engines(history_url)
