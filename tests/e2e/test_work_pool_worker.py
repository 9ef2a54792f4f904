"""A deployment from ``prefect.yaml`` run by a worker, as a production installation runs it: the
``address-service`` process work pool (the pool of the API ``address-query`` talks to) on the session's
Prefect server, ``prefect deploy`` from the repository, ``prefect worker
start`` polling the pool, and one run of ``address-query`` on an example file against the embedded sandbox.
Nothing is pulled from a network: the worker runs the flow from the repository's directory.

The session's ``postflows serve`` (tests/e2e/conftest.py) serves a deployment named ``address-query`` too,
and would take the runs of a deployment of that name; so the test deploys ``prefect.yaml``'s
``address-query`` entry, unchanged but for its name, as ``address-query-on-a-worker``.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

import history
from deployments.catalog import spec_named
from tests.e2e.conftest import EXAMPLE, PREFECT, REPO, PrefectServer, base_environment, stop

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ENTRY = "address-query"
POOL = spec_named(ENTRY).work_pool
NAME = "address-query-on-a-worker"
DEPLOYMENT = f"{ENTRY}/{NAME}"


def project_file_of_one_entry(directory: Path, *, entry: str = ENTRY, name: str = NAME) -> Path:
    """``prefect.yaml`` with only its ``entry`` deployment, renamed ``name`` (its build step reads the
    parameter defaults of the renamed deployment); every other setting as it is."""
    project = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    (found,) = (deployment for deployment in project["deployments"] if deployment["name"] == entry)
    ((step, inputs),) = found["build"][0].items()
    build = [{step: {**inputs, "deployment": f"{entry}/{name}"}}]
    project["deployments"] = [{**found, "name": name, "build": build}]
    path = directory / "prefect.yaml"
    path.write_text(yaml.safe_dump(project, sort_keys=False), encoding="utf-8")
    return path


def prefect(env: dict[str, str], *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """A ``prefect`` command run from the repository (where ``prefect.yaml`` is), without prompts."""
    return subprocess.run(
        [PREFECT, "--no-prompt", *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def succeeded(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"{result.args}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture
def environment(prefect_server: PrefectServer, tmp_path: Path) -> dict[str, str]:
    """The environment of the commands and the worker (its flow runs inherit it): the session's server,
    a data dir of this test's own, the embedded sandbox (no service URL), which a deployment run uses only
    when asked (``POSTFLOWS_SANDBOX=1``)."""
    env = base_environment()
    env.update(
        PREFECT_API_URL=prefect_server.api_url,
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_WORKER_QUERY_SECONDS="1",
        POSTFLOWS_DATA_DIR=str(tmp_path / "data"),
        POSTFLOWS_SANDBOX="1",
    )
    return env


@pytest.fixture
def work_pool(environment: dict[str, str]) -> Iterator[str]:
    """The deployment's process pool, created unless it exists (then deleted again)."""
    created = prefect(environment, "work-pool", "inspect", POOL).returncode != 0
    if created:
        succeeded(prefect(environment, "work-pool", "create", POOL, "--type", "process"))
    try:
        yield POOL
    finally:
        if created:
            prefect(environment, "work-pool", "delete", POOL)


@pytest.fixture
def deployed(environment: dict[str, str], work_pool: str, tmp_path: Path) -> Iterator[str]:
    """``prefect deploy`` of the ``address-query`` entry of ``prefect.yaml``, from the repository; the
    deployment is deleted afterwards."""
    project_file = project_file_of_one_entry(tmp_path)
    succeeded(prefect(environment, "deploy", "--prefect-file", str(project_file), "--name", NAME))
    try:
        yield DEPLOYMENT
    finally:
        prefect(environment, "deployment", "delete", DEPLOYMENT)


def start_worker(environment: dict[str, str], pool: str, directory: Path) -> subprocess.Popen[bytes]:
    """``prefect worker start --pool <pool>`` in ``directory`` (made here), its output in
    ``directory/worker.log``; in a session of its own, so :func:`stop` stops it with its flow runs."""
    directory.mkdir(parents=True)
    with (directory / "worker.log").open("wb") as sink:
        return subprocess.Popen(
            [PREFECT, "--no-prompt", "worker", "start", "--pool", pool, "--type", "process",
             "--install-policy", "never"],
            cwd=directory,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


@pytest.fixture
def worker(environment: dict[str, str], work_pool: str, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``prefect worker start --pool address-service``, stopped (with its flow runs) when the test ends."""
    process = start_worker(environment, work_pool, tmp_path / "worker")
    try:
        yield process
    finally:
        stop(process)
        print((tmp_path / "worker" / "worker.log").read_text())  # noqa: T201 - shown when the test failed


def test_a_worker_runs_a_deployment_of_prefect_yaml(
    environment: dict[str, str],
    prefect_server: PrefectServer,
    deployed: str,
    worker: subprocess.Popen[bytes],
    tmp_path: Path,
) -> None:
    with httpx.Client(base_url=prefect_server.api_url, timeout=30) as api:
        deployment = api.get(f"/deployments/name/{deployed}").raise_for_status().json()
    assert deployment["work_pool_name"] == POOL
    # The flow's code is where prefect deploy ran: no git clone or other pull from a network.
    steps = [name for step in deployment["pull_steps"] or [] for name in step]
    assert steps == ["prefect.deployments.steps.set_working_directory"], deployment["pull_steps"]
    assert Path(deployment["pull_steps"][0][steps[0]]["directory"]) == REPO

    out = tmp_path / "out"
    started = time.monotonic()
    run = succeeded(
        prefect(
            environment,
            "deployment", "run", deployed,
            "--params",
            json.dumps({"request": {"input_path": str(EXAMPLE)}, "output": {"output_dir": str(out)}}),
            "--watch", "--watch-timeout", "240",
            timeout=300,
        )
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert "Completed" in run.stdout, run.stdout
    assert worker.poll() is None  # the worker ran it and keeps polling
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "Failed queries: 0" in summary
    assert {"results.csv", "results.xlsx", "rejected.csv"} <= {path.name for path in out.iterdir()}
    history_url = f"sqlite:///{Path(environment['POSTFLOWS_DATA_DIR']) / 'history.db'}"
    try:
        with history.session_factory(history_url)() as session:
            runs = history.list_runs(session, flow="address-query")
            assert [run.state for run in runs] == ["COMPLETED"]
    finally:
        history.dispose_engines(history_url)
    print(f"deployment run through the worker: {elapsed:.1f} s from trigger to completion")  # noqa: T201
