"""A parked batch job end to end: ``postflows serve`` against the session Prefect server and a served sandbox
whose jobs take 20 s, with a parking threshold of 3 s. The triggered run parks its job and ends; nothing runs
while the job does; the follow-up run of the same deployment resumes it, downloads and deletes the remote
files. runbatch is sent once.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from tests.e2e.conftest import (
    EXAMPLE,
    PASSWORD,
    POSTFLOWS,
    REPO,
    USER,
    PrefectServer,
    ServedSandbox,
    base_environment,
    served_sandbox,
    stop,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(420)]

DEPLOYMENT = "address-batch/address-batch"
JOB_SECONDS = 20


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSandbox]:
    with served_sandbox(tmp_path_factory.mktemp("parked-sandbox"), job_seconds=JOB_SECONDS) as served:
        yield served


@pytest.fixture(scope="module")
def serving(
    prefect_server: PrefectServer, sandbox: ServedSandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[dict[str, str], Path]]:
    """``postflows serve`` parking every wait past 3 s; yields its environment and its data dir."""
    root = tmp_path_factory.mktemp("parked-serve")
    env = base_environment()
    env.update(
        PREFECT_API_URL=prefect_server.api_url,
        PREFECT_HOME=str(root / "prefect-home"),
        POSTFLOWS_DATA_DIR=str(root / "data"),
        POSTFLOWS_ADDRESS_SERVICE_URL=sandbox.address_url,
        POSTFLOWS_ADDRESS_SERVICE_USER=USER,
        POSTFLOWS_ADDRESS_SERVICE_PASSWORD=PASSWORD,
        POSTFLOWS_PARK_AFTER_S="3",
        PYTHONPATH=str(REPO),  # the flow runs of serve import this checkout's code
    )
    log = root / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [POSTFLOWS, "serve"],
            cwd=root,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _deployment_id(prefect_server.api_url, process, log)
        yield env, root / "data"
    finally:
        stop(process)


def _deployment_id(api: str, process: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"postflows serve exited:\n{log.read_text()}")
        response = httpx.get(f"{api}/deployments/name/{DEPLOYMENT}", timeout=10)
        if response.status_code == 200:
            return str(response.json()["id"])
        time.sleep(1)
    raise RuntimeError(f"{DEPLOYMENT} was not served:\n{log.read_text()}")


def _flow_runs(api: str, deployment_id: str) -> list[dict[str, Any]]:
    response = httpx.post(
        f"{api}/flow_runs/filter",
        json={"flow_runs": {"deployment_id": {"any_": [deployment_id]}}, "sort": "EXPECTED_START_TIME_ASC"},
        timeout=10,
    )
    response.raise_for_status()
    runs: list[dict[str, Any]] = response.json()
    return runs


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value)


def test_a_parked_batch_job_completes_through_its_follow_up_with_no_worker_busy_between(
    prefect_server: PrefectServer,
    sandbox: ServedSandbox,
    serving: tuple[dict[str, str], Path],
    tmp_path: Path,
) -> None:
    api = prefect_server.api_url
    _, data_dir = serving
    deployment_id = httpx.get(f"{api}/deployments/name/{DEPLOYMENT}", timeout=10).json()["id"]
    sandbox.reset()
    parameters = {"input_path": str(EXAMPLE), "output_dir": str(tmp_path / "out")}
    created = httpx.post(
        f"{api}/deployments/{deployment_id}/create_flow_run", json={"parameters": parameters}, timeout=10
    )
    created.raise_for_status()

    deadline = time.monotonic() + 300
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        runs = _flow_runs(api, deployment_id)
        if len(runs) == 2 and all(run["state_type"] == "COMPLETED" for run in runs):
            break
        assert not any(run["state_type"] in ("FAILED", "CRASHED") for run in runs), runs
        time.sleep(1)
    else:
        raise AssertionError(f"no completed follow-up within 300 s: {runs}")

    first, follow_up = runs
    assert first["id"] == created.json()["id"] and "follow-up" in follow_up["tags"]
    assert follow_up["parameters"] == first["parameters"]
    # The first run ended long before the job did; the follow-up started when the job was expected to end.
    parked_for = (_when(follow_up["start_time"]) - _when(first["end_time"])).total_seconds()
    assert _when(first["end_time"]) - _when(first["start_time"]) < _when(
        follow_up["expected_start_time"]
    ) - _when(first["start_time"])
    assert parked_for >= JOB_SECONDS / 2, (first, follow_up)
    # Nothing ran in between: no flow run of the served deployments was running in that time.
    everything = httpx.post(f"{api}/flow_runs/filter", json={}, timeout=10).json()
    overlapping = [
        run
        for run in everything
        if run["id"] not in (first["id"], follow_up["id"])
        and run["deployment_id"] is not None
        and run["start_time"] is not None
        and _when(run["start_time"]) < _when(follow_up["start_time"])
        and (run["end_time"] is None or _when(run["end_time"]) > _when(first["end_time"]))
    ]
    assert overlapping == []

    assert sandbox.count("runbatch") == 1
    assert sandbox.count("deletefile") == 2
    engine = create_engine(f"sqlite:///{data_dir / 'history.db'}")
    with engine.connect() as connection:
        states = [row[0] for row in connection.execute(text("SELECT state FROM runs ORDER BY id"))]
        tokens = [
            row[0]
            for row in connection.execute(
                text("SELECT remote_id FROM remote_jobs WHERE kind IN ('upload-file', 'output-file')")
            )
        ]
    engine.dispose()
    assert states == ["PARKED", "COMPLETED"]
    assert len(tokens) == 2 and all(sandbox.delete_status(token) == 302 for token in tokens)
    assert (tmp_path / "out" / "results.xlsx").is_file()
