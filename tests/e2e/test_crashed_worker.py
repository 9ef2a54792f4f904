"""A worker killed with SIGKILL while its run polls a batch job: nobody reports the run, so the automation
``postflows setup`` made marks it Crashed once its heartbeats stop; the other automation schedules it again,
a new worker takes it up, and the run completes from the run history without uploading or starting the batch
a second time. Everything is real but the address web service (a served sandbox): the session's Prefect
server with its trigger services, ``prefect deploy`` of ``prefect.yaml``, ``prefect worker start``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deployments.automations import CRASH_SILENT_RUNS, NOTIFY_FAILURES, RETRY_CRASHED_RUNS
from tests.e2e.conftest import (
    EXAMPLE,
    POSTFLOWS,
    USER,
    PrefectServer,
    ServedSandbox,
    base_environment,
    served_sandbox,
    stop,
)
from tests.e2e.test_work_pool_worker import POOL, prefect, project_file_of_one_entry, start_worker, succeeded

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ENTRY = "address-batch"
NAME = "address-batch-on-a-crashing-worker"
SILENCE_S = 45
"""The heartbeat silence that counts as a crash here: the setting's least (runs beat every 30 s)."""


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[ServedSandbox]:
    with served_sandbox(tmp_path / "sandbox", job_seconds=40) as served:
        yield served


@pytest.fixture
def environment(prefect_server: PrefectServer, sandbox: ServedSandbox, tmp_path: Path) -> dict[str, str]:
    env = base_environment()
    env.update(
        PREFECT_API_URL=prefect_server.api_url,
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_WORKER_QUERY_SECONDS="1",
        PREFECT_RUNNER_HEARTBEAT_FREQUENCY="30",
        POSTFLOWS_DATA_DIR=str(tmp_path / "data"),
        POSTFLOWS_CRASH_SILENCE_S=str(SILENCE_S),
        POSTFLOWS_ADDRESS_SERVICE_URL=sandbox.address_url,
        POSTFLOWS_ADDRESS_SERVICE_USER=USER,
        POSTFLOWS_ADDRESS_SERVICE_PASSWORD="sandbox-password",
    )
    return env


def _automations(api_url: str) -> list[dict[str, Any]]:
    names = [CRASH_SILENT_RUNS, RETRY_CRASHED_RUNS, NOTIFY_FAILURES]
    found: list[dict[str, Any]] = (
        httpx.post(
            f"{api_url}/automations/filter", json={"automations": {"name": {"any_": names}}}, timeout=30
        )
        .raise_for_status()
        .json()
    )
    return found


def _setup(env: dict[str, str]) -> str:
    setup = subprocess.run([POSTFLOWS, "setup"], env=env, capture_output=True, text=True, timeout=180)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    return setup.stdout


@pytest.fixture
def automations(environment: dict[str, str], prefect_server: PrefectServer) -> Iterator[None]:
    """``postflows setup`` on the session's server, with this test's short silence; afterwards the server's
    automations are as they were (the session's ``postflows serve`` makes them with the defaults)."""
    existed = bool(_automations(prefect_server.api_url))
    assert f"automation {CRASH_SILENT_RUNS}: " in _setup(environment)
    try:
        yield
    finally:
        if existed:
            _setup({k: v for k, v in environment.items() if k != "POSTFLOWS_CRASH_SILENCE_S"})
        else:
            for automation in _automations(prefect_server.api_url):
                httpx.delete(f"{prefect_server.api_url}/automations/{automation['id']}", timeout=30)


@pytest.fixture
def deployed(environment: dict[str, str], automations: None, tmp_path: Path) -> Iterator[str]:
    if prefect(environment, "work-pool", "inspect", POOL).returncode != 0:
        succeeded(prefect(environment, "work-pool", "create", POOL, "--type", "process"))
    project_file = project_file_of_one_entry(tmp_path, entry=ENTRY, name=NAME)
    succeeded(prefect(environment, "deploy", "--prefect-file", str(project_file), "--name", NAME))
    try:
        yield f"{ENTRY}/{NAME}"
    finally:
        prefect(environment, "deployment", "delete", f"{ENTRY}/{NAME}")


def _until(what: str, check: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def test_a_run_whose_worker_was_killed_is_marked_crashed_and_completes_on_its_retry(
    environment: dict[str, str],
    prefect_server: PrefectServer,
    sandbox: ServedSandbox,
    deployed: str,
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    parameters = {"request": {"input_path": str(EXAMPLE)}, "output": {"output_dir": str(out)}}
    first = start_worker(environment, POOL, tmp_path / "worker-1")
    second = None
    api = httpx.Client(base_url=prefect_server.api_url, timeout=30)
    try:
        deployment = api.get(f"/deployments/name/{deployed}").raise_for_status().json()
        run = (
            api.post(f"/deployments/{deployment['id']}/create_flow_run", json={"parameters": parameters})
            .raise_for_status()
            .json()
        )

        def flow_run() -> dict[str, Any]:
            found: dict[str, Any] = api.get(f"/flow_runs/{run['id']}").raise_for_status().json()
            return found

        _until("the batch job started", lambda: sandbox.count("runbatch") == 1, timeout=90)
        running = flow_run()
        assert running["state_name"] == "Running"
        # The machine goes: the worker and the run's process (a session of its own) die without a word.
        run_pid = int(str(running["infrastructure_pid"]).rsplit(":", 1)[-1])
        os.killpg(first.pid, signal.SIGKILL)
        os.kill(run_pid, signal.SIGKILL)
        first.wait(timeout=10)
        second = start_worker(environment, POOL, tmp_path / "worker-2")

        _until("marked Crashed", lambda: flow_run()["state_name"] != "Running", timeout=180)

        def finished() -> dict[str, Any] | None:
            found = flow_run()
            done = found["state_type"] in ("COMPLETED", "FAILED", "CRASHED") and found["run_count"] > 1
            return found if done else None

        final = _until("completed on its retry", finished, timeout=240)
        assert final["state_type"] == "COMPLETED", final["state"]
        assert final["run_count"] == 2
        states = api.get("/flow_run_states/", params={"flow_run_id": run["id"]}).raise_for_status().json()
        names = [state["name"] for state in states]
        crashed = [state["message"] or "" for state in states if state["name"] == "Crashed"]
        assert crashed and f"no heartbeat for {SILENCE_S} s" in crashed[0], states
        assert names.count("AwaitingRetry") == 1, names
        # Taken up from the run history: one upload and one batch for the run, its results written.
        assert (sandbox.count("uploadfile"), sandbox.count("runbatch")) == (1, 1)
        assert {"results.csv", "results.xlsx", "summary.md"} <= {path.name for path in out.iterdir()}
    finally:
        api.close()
        stop(first)
        if second is not None:
            stop(second)
        for log in sorted(tmp_path.glob("worker-*/worker.log")):
            print(log, log.read_text(), sep="\n")  # noqa: T201 - shown when the test failed
