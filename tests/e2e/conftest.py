"""End-to-end fixtures: the sandbox served over HTTP by ``postflows sandbox``, a shared Prefect server, and
the real ``postflows`` command run as a subprocess against them, each run with its own data directory.

Flow runs report to one Prefect server started once per session (``PREFECT_API_URL``): letting every CLI
run start its own temporary server costs 20-40 s each, which would make this suite minutes long.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
POSTFLOWS = str(BIN / "postflows")
PREFECT = str(BIN / "prefect")
EXAMPLE = REPO / "examples" / "address-batch.csv"
USER, PASSWORD = "sandbox-user", "sandbox-password"
API_PATH = "/address/REST/v1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def base_environment() -> dict[str, str]:
    """The test process's environment without any postflows or Prefect configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTFLOWS_", "PREFECT_"))}
    env.update(
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        COLUMNS="250",  # tables are compared by their cell text, so they must not be cut
        PYTHONUNBUFFERED="1",
    )
    return env


def stop(process: subprocess.Popen[Any]) -> None:
    """Stop a process started with ``start_new_session`` together with anything it started."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):  # children that outlived their parent
        os.killpg(process.pid, signal.SIGKILL)


def wait_until_up(url: str, process: subprocess.Popen[Any], log: Path, *, timeout: float, **kw: Any) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(url, timeout=2, **kw).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    stop(process)
    raise RuntimeError(f"{url} did not come up within {timeout}s:\n{log.read_text()}")


@dataclass
class ServedSandbox:
    """A ``postflows sandbox`` server process and what it counted."""

    origin: str
    process: subprocess.Popen[bytes]

    @property
    def address_url(self) -> str:
        return f"{self.origin}{API_PATH}"

    def requests(self) -> list[dict[str, Any]]:
        counts: list[dict[str, Any]] = httpx.get(f"{self.origin}/_sandbox/requests", timeout=5).json()
        return counts

    def count(self, endpoint: str, method: str | None = None) -> int:
        """Address-service requests for ``endpoint``: exactly that, or followed by ``/<token>``."""
        return sum(
            entry["count"]
            for entry in self.requests()
            if entry["api"] == "address"
            and (entry["endpoint"] == endpoint or entry["endpoint"].startswith(endpoint + "/"))
            and (method is None or entry["method"] == method)
        )

    def inject(self, rules: list[dict[str, Any]]) -> None:
        """Replace the fault plan (an empty list clears it)."""
        httpx.put(f"{self.origin}/_sandbox/faults", json=rules, timeout=5).raise_for_status()

    def reset(self) -> None:
        httpx.delete(f"{self.origin}/_sandbox/requests", timeout=5).raise_for_status()
        assert self.requests() == []

    def delete_status(self, token: str) -> int:
        """The Status the service answers for deleting ``token`` now (302 once it is gone)."""
        response = httpx.get(f"{self.address_url}/deletefile/{token}", auth=(USER, PASSWORD), timeout=5)
        return int(response.json()["Status"])


@contextmanager
def served_sandbox(workdir: Path, *, job_seconds: float) -> Iterator[ServedSandbox]:
    """``postflows sandbox --port <free port> --job-seconds N`` until the block ends."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = workdir / "sandbox.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [POSTFLOWS, "sandbox", "--port", str(port), "--job-seconds", str(job_seconds)],
            cwd=workdir,
            # Its own data dir: the default one is the user's, shared by every run of the suite.
            env={**base_environment(), "POSTFLOWS_DATA_DIR": str(workdir / "data")},
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        origin = f"http://127.0.0.1:{port}"
        wait_until_up(f"{origin}{API_PATH}/ping", process, log, timeout=60, auth=(USER, PASSWORD))
        yield ServedSandbox(origin, process)
    finally:
        stop(process)


@dataclass(frozen=True)
class PrefectServer:
    api_url: str
    home: Path


@dataclass
class _Booting:
    process: subprocess.Popen[bytes]
    api_url: str
    home: Path
    log: Path


@pytest.fixture(scope="session")
def _prefect_server_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Booting]:
    """``prefect server start`` with its own PREFECT_HOME; stopped at the end of the session."""
    home = tmp_path_factory.mktemp("prefect-server")
    port = free_port()
    env = {**base_environment(), "PREFECT_HOME": str(home), "PREFECT_UI_ENABLED": "false"}
    log = home / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            cwd=home,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield _Booting(process, f"http://127.0.0.1:{port}/api", home, log)
    finally:
        stop(process)


@pytest.fixture(scope="session", autouse=True)
def _boot_prefect_early(request: pytest.FixtureRequest) -> None:
    """Start the Prefect server with the first e2e test when any selected test needs it, so it boots while
    tests without flow runs (the assistant commands) execute."""
    if any("prefect_server" in getattr(item, "fixturenames", ()) for item in request.session.items):
        request.getfixturevalue("_prefect_server_process")


@pytest.fixture(scope="session")
def prefect_server(_prefect_server_process: _Booting) -> PrefectServer:
    """One Prefect server for every CLI flow run of the session, up and answering."""
    booting = _prefect_server_process
    wait_until_up(f"{booting.api_url}/health", booting.process, booting.log, timeout=120)
    return PrefectServer(booting.api_url, booting.home)


@dataclass
class CliWorkspace:
    """One isolated place for CLI runs: data dir (history DB), output dir, PREFECT_HOME and working dir."""

    root: Path
    sandbox: ServedSandbox
    prefect: PrefectServer | None
    password: str = PASSWORD
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("data", "out", "prefect-home", "cwd"):
            (self.root / name).mkdir(parents=True, exist_ok=True)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def out_dir(self) -> Path:
        return self.root / "out"

    @property
    def history_db(self) -> Path:
        return self.data_dir / "history.db"

    def env(self) -> dict[str, str]:
        env = base_environment()
        env.update(
            POSTFLOWS_ADDRESS_SERVICE_URL=self.sandbox.address_url,
            POSTFLOWS_ADDRESS_SERVICE_USER=USER,
            POSTFLOWS_ADDRESS_SERVICE_PASSWORD=self.password,
            POSTFLOWS_DATA_DIR=str(self.data_dir),
            PREFECT_HOME=str(self.root / "prefect-home"),
            **self.extra_env,
        )
        if self.prefect is not None:
            env["PREFECT_API_URL"] = self.prefect.api_url
        return env

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [POSTFLOWS, *args],
            cwd=self.root / "cwd",
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        (result,) = self.run_side_by_side(args, timeout=timeout)
        return result

    def run_side_by_side(
        self, *commands: tuple[str, ...], timeout: float = 120
    ) -> list[subprocess.CompletedProcess[str]]:
        """Run independent commands at the same time; their results in the order given."""
        running = [self.start(*args) for args in commands]
        results = []
        try:
            for process in running:
                stdout, stderr = process.communicate(timeout=timeout)
                results.append(subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr))
        finally:
            for process in running:
                stop(process)
        return results


def json_block(text: str) -> dict[str, Any]:
    """The pretty-printed JSON object in a command's output (it starts and ends at column 0)."""
    lines = text.splitlines()
    start = lines.index("{")
    end = next(i for i in range(len(lines) - 1, start, -1) if lines[i] == "}")
    parsed: dict[str, Any] = json.loads("\n".join(lines[start : end + 1]))
    return parsed
