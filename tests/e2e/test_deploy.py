"""``postflows deploy`` on a real Prefect server, then a worker per pool running a deployment of each API, as
a production installation runs them: ``postflows deploy`` twice (the second run changes nothing and keeps a
schedule an operator paused), ``prefect worker start --pool P`` for the three pools, and one run per pool
(address-query, structure-files, delivery-reference-sync) against the embedded sandbox, each completing; and
``postflows setup`` then ``prefect deploy --all`` of prefect.yaml twice, keeping a schedule paused and a
parameter default set in the UI.

The test has a Prefect server of its own: the session's serves the same deployment names through
``postflows serve`` (tests/e2e/conftest.py), which would take their runs.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deployments.catalog import CATALOG, spec_named
from deployments.deploy import CODE_ROOT
from tests.e2e.conftest import (
    EXAMPLE,
    POSTFLOWS,
    PREFECT,
    base_environment,
    started_prefect_server,
    stop,
    wait_until_up,
)
from tests.e2e.test_work_pool_worker import start_worker

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

POOLS = ("address-service", "newspaper", "commerce")
PAUSED = ("newspaper-reports", "daily")


@pytest.fixture
def environment(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A Prefect server of this test's own and the environment of ``postflows deploy`` and the workers (their
    flow runs inherit it): a data dir of this test's, the embedded sandbox (no service URL: deployed with
    ``--sandbox``), heartbeats."""
    home = tmp_path / "prefect-server"
    home.mkdir()
    with started_prefect_server(home) as booting:
        wait_until_up(f"{booting.api_url}/health", booting.process, booting.log, timeout=120)
        env = base_environment()
        env.update(
            PREFECT_API_URL=booting.api_url,
            PREFECT_HOME=str(tmp_path / "prefect-home"),
            PREFECT_WORKER_QUERY_SECONDS="1",
            PREFECT_RUNNER_HEARTBEAT_FREQUENCY="30",
            POSTFLOWS_DATA_DIR=str(tmp_path / "data"),
        )
        yield env


def deploy(env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        [POSTFLOWS, "deploy", "--sandbox"], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def workers(environment: dict[str, str], tmp_path: Path) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    started: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for pool in POOLS:
            started[pool] = start_worker(environment, pool, tmp_path / f"worker-{pool}")
        yield started
    finally:
        for process in started.values():
            stop(process)
        for log in sorted(tmp_path.glob("worker-*/worker.log")):
            print(log, log.read_text(errors="replace")[-5000:], sep="\n")  # noqa: T201 - shown on failure


def test_deploy_twice_then_a_worker_per_pool_runs_a_deployment_of_each_api(
    environment: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    cwd = tmp_path / "elsewhere"  # the flows run from the code's directory, wherever deploy ran
    cwd.mkdir()
    started = time.monotonic()
    first = deploy(environment, cwd)
    api = httpx.Client(base_url=environment["PREFECT_API_URL"], timeout=30)
    try:
        assert all(f"work pool {pool}: created (type process)" in first for pool in POOLS), first
        assert "deployment address-query/address-query: created (pool address-service)" in first
        paused = _deployment(api, PAUSED[0])
        (weekly,) = [s for s in paused["schedules"] if s["slug"] == PAUSED[1]]
        api.patch(
            f"/deployments/{paused['id']}/schedules/{weekly['id']}", json={"active": False}
        ).raise_for_status()

        second = deploy(environment, cwd)
        assert not re.search(r": (created|updated)\b", second), second
        assert (
            "deployment newspaper-reports/newspaper-reports: unchanged (pool newspaper); "
            "left alone: schedule daily paused on the server"
        ) in second
        (weekly,) = [s for s in _deployment(api, PAUSED[0])["schedules"] if s["slug"] == PAUSED[1]]
        assert weekly["active"] is False
        deployed_s = time.monotonic() - started

        request.getfixturevalue("workers")
        out = tmp_path / "out"
        runs = {
            "address-query": {
                "request": {"input_path": str(EXAMPLE)},
                "output": {"output_dir": str(out / "query")},
            },
            "structure-files": {
                "request": {"file_code": 9},
                "output": {"output_dir": str(out / "structure")},
            },
            "delivery-reference-sync": {"output": {"output_dir": str(out / "sync")}},
        }
        created = {}
        for name, parameters in runs.items():
            deployment = _deployment(api, name)
            assert deployment["work_pool_name"] == spec_named(name).work_pool
            assert deployment["pull_steps"] == [
                {"prefect.deployments.steps.set_working_directory": {"directory": str(CODE_ROOT)}}
            ]
            created[name] = (
                api.post(f"/deployments/{deployment['id']}/create_flow_run", json={"parameters": parameters})
                .raise_for_status()
                .json()["id"]
            )
        finals = {name: _finished(api, flow_run_id, timeout=180) for name, flow_run_id in created.items()}
        assert {name: run["state_type"] for name, run in finals.items()} == dict.fromkeys(runs, "COMPLETED")
        assert "Failed queries: 0" in (out / "query" / "summary.md").read_text(encoding="utf-8")
        assert "| holidays |" in (out / "sync" / "summary.md").read_text(encoding="utf-8")
        assert (out / "structure" / "summary.md").is_file()
        print(  # noqa: T201 - the figures of the run
            f"deploy twice: {deployed_s:.1f} s; three runs on three workers: "
            f"{time.monotonic() - started - deployed_s:.1f} s"
        )
    finally:
        api.close()


def prefect_deploy_all(env: dict[str, str]) -> str:
    """``prefect deploy --all`` of the repository's prefect.yaml, with no terminal to ask on: its output
    (stdout and stderr), which has no warning about a parameter without a default on the server."""
    done = subprocess.run(
        [PREFECT, "--no-prompt", "deploy", "--all"],
        cwd=CODE_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "not found in provided values" not in output, output
    assert "Running deployment build steps" in output, output
    return output


def test_setup_then_prefect_deploy_all_keeps_a_paused_schedule_and_parameter_defaults_set_in_the_ui(
    environment: dict[str, str],
) -> None:
    """``postflows setup`` makes what ``prefect deploy --all`` needs on a fresh server, which sets no
    parameter defaults; deploying again keeps a schedule paused and a parameter default set in the UI (the
    flow's other parameters stay unset), and resumes a paused deployment (docs/deployments.md says so)."""
    setup = subprocess.run([POSTFLOWS, "setup"], env=environment, capture_output=True, text=True, timeout=180)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert all(f"work pool {pool}: created (type process)" in setup.stdout for pool in POOLS), setup.stdout
    assert "rate limit newspaper-api:" in setup.stdout and "automation " in setup.stdout, setup.stdout
    prefect_deploy_all(environment)
    api = httpx.Client(base_url=environment["PREFECT_API_URL"], timeout=30)
    try:
        deployment = _deployment(api, PAUSED[0])
        assert deployment["work_pool_name"] == "newspaper" and deployment["parameters"] == {}
        assert all(_deployment(api, spec.name)["parameters"] == {} for spec in CATALOG)
        (daily,) = [s for s in deployment["schedules"] if s["slug"] == PAUSED[1]]
        assert daily["active"] is True
        api.patch(
            f"/deployments/{deployment['id']}/schedules/{daily['id']}", json={"active": False}
        ).raise_for_status()
        defaults = {"output": {"output_dir": "/srv/reports"}}
        api.patch(f"/deployments/{deployment['id']}", json={"parameters": defaults}).raise_for_status()
        statistics = _deployment(api, "newspaper-statistics")
        api.patch(f"/deployments/{statistics['id']}", json={"paused": True}).raise_for_status()

        prefect_deploy_all(environment)
        again = _deployment(api, PAUSED[0])
        (daily,) = [s for s in again["schedules"] if s["slug"] == PAUSED[1]]
        assert daily["active"] is False, "prefect.yaml has no `active` flag: the pause stays"
        assert again["parameters"] == defaults, "the build step read them from the server; `request` unset"
        assert _deployment(api, "newspaper-statistics")["parameters"] == {}
        assert _deployment(api, "newspaper-statistics")["paused"] is False, (
            "Prefect sends `paused` (docs say so)"
        )
        assert {
            s["slug"]: s["parameters"] for s in _deployment(api, "newspaper-statistics")["schedules"]
        } == {
            schedule.slug: dict(schedule.parameters)
            for schedule in spec_named("newspaper-statistics").schedules
        }
    finally:
        api.close()


def _deployment(api: httpx.Client, name: str) -> dict[str, Any]:
    found: dict[str, Any] = (
        api.get(f"/deployments/name/{spec_named(name).full_name}").raise_for_status().json()
    )
    return found


def _finished(api: httpx.Client, flow_run_id: str, *, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        run: dict[str, Any] = api.get(f"/flow_runs/{flow_run_id}").raise_for_status().json()
        if (
            run["state_type"] in {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}
            or time.monotonic() > deadline
        ):
            return run
        time.sleep(0.5)
