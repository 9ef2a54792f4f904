"""The e2e suite's parked batch job: a batch job of several minutes, started when the session begins and
checked by the last e2e test, so the minutes it takes pass while the other tests run.

It has a Prefect server of its own (on PostgreSQL when one is available; like the session's, it makes no
runs of the catalog's schedules), a served sandbox whose jobs take
:data:`JOB_SECONDS`, and ``postflows serve`` parking every wait expected to last longer than
:data:`PARK_AFTER_S`. A second ``postflows serve`` on the session's server would register the same
deployment names and take the other tests' runs (or they its).
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import (
    EXAMPLE,
    PASSWORD,
    USER,
    ServedSandbox,
    served_sandbox,
    start_serve,
    started_prefect_server,
    stop,
    wait_until_up,
)

DEPLOYMENT = "address-batch/address-batch"
JOB_SECONDS = 180
PARK_AFTER_S = 20
BOOT_TIMEOUT_S = 300


@dataclass(frozen=True)
class ParkedBatch:
    """The parked batch job's servers and its first flow run, triggered through the REST API."""

    api_url: str
    sandbox: ServedSandbox
    data_dir: Path
    output_dir: Path
    serve_log: Path
    deployment_id: str
    flow_run_id: str

    def flow_runs(self) -> list[dict[str, Any]]:
        """Every flow run of the deployment, the earliest expected first."""
        response = httpx.post(
            f"{self.api_url}/flow_runs/filter",
            json={
                "flow_runs": {"deployment_id": {"any_": [self.deployment_id]}},
                "sort": "EXPECTED_START_TIME_ASC",
            },
            timeout=10,
        )
        response.raise_for_status()
        runs: list[dict[str, Any]] = response.json()
        return runs


def _served_deployment(api_url: str, process: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + BOOT_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"postflows serve exited:\n{log.read_text()}")
        response = httpx.get(f"{api_url}/deployments/name/{DEPLOYMENT}", timeout=10)
        if response.status_code == 200:
            return str(response.json()["id"])
        time.sleep(1)
    raise RuntimeError(f"{DEPLOYMENT} was not served within {BOOT_TIMEOUT_S}s:\n{log.read_text()}")


def _start(stack: contextlib.ExitStack, root: Path) -> ParkedBatch:
    home = root / "prefect-server"
    home.mkdir()
    server = stack.enter_context(started_prefect_server(home))
    wait_until_up(f"{server.api_url}/health", server.process, server.log, timeout=BOOT_TIMEOUT_S)
    sandbox = stack.enter_context(served_sandbox(root / "sandbox", job_seconds=JOB_SECONDS))
    _, process, log = start_serve(
        root,
        server.api_url,
        POSTFLOWS_ADDRESS_SERVICE_URL=sandbox.address_url,
        POSTFLOWS_ADDRESS_SERVICE_USER=USER,
        POSTFLOWS_ADDRESS_SERVICE_PASSWORD=PASSWORD,
        POSTFLOWS_PARK_AFTER_S=str(PARK_AFTER_S),
    )
    stack.callback(stop, process)
    deployment_id = _served_deployment(server.api_url, process, log)
    output_dir = root / "out"
    created = httpx.post(
        f"{server.api_url}/deployments/{deployment_id}/create_flow_run",
        json={
            "parameters": {"request": {"input_path": str(EXAMPLE)}, "output": {"output_dir": str(output_dir)}}
        },
        timeout=10,
    )
    created.raise_for_status()
    return ParkedBatch(
        server.api_url, sandbox, root / "data", output_dir, log, deployment_id, str(created.json()["id"])
    )


@pytest.fixture(scope="session")
def parked_batch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], ParkedBatch]]:
    """Starts the parked batch job in a background thread; yields a function that waits until it has been
    triggered and returns it. Everything it started is stopped at the end of the session."""
    root = tmp_path_factory.mktemp("parked-batch")
    started: list[ParkedBatch] = []
    failed: list[BaseException] = []
    with contextlib.ExitStack() as stack:

        def start() -> None:
            try:
                started.append(_start(stack, root))
            except BaseException as error:  # handed to the test that asks for the job
                failed.append(error)

        thread = threading.Thread(target=start, name="parked-batch", daemon=True)
        thread.start()

        def triggered() -> ParkedBatch:
            thread.join(timeout=2 * BOOT_TIMEOUT_S)
            if failed:
                raise failed[0]
            if not started:
                raise RuntimeError(f"the parked batch job was not triggered within {2 * BOOT_TIMEOUT_S}s")
            return started[0]

        try:
            yield triggered
        finally:
            thread.join(timeout=2 * BOOT_TIMEOUT_S)
