"""End-to-end fixtures: the sandbox served over HTTP by ``postflows sandbox``, a shared Prefect server, and
the real ``postflows`` command run as a subprocess against them, each run with its own data directory.

Flow runs report to one Prefect server started once per session (``PREFECT_API_URL``): letting every CLI
run start its own temporary server costs 20-40 s each, which would make this suite minutes long. The
server keeps its runs in a fresh PostgreSQL database when ``POSTFLOWS_TEST_POSTGRES_URL`` names a server
(``make test`` starts one), as a production server would; otherwise in SQLite in its PREFECT_HOME.
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
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from tests import guess_watch

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
POSTFLOWS = str(BIN / "postflows")
PREFECT = str(BIN / "prefect")
EXAMPLE = REPO / "examples" / "address-batch.csv"
USER, PASSWORD = "sandbox-user", "sandbox-password"
API_PATH = "/address/REST/v1"
POSTGRES_URL_ENV = "POSTFLOWS_TEST_POSTGRES_URL"
PARKED_FIXTURE = "parked_batch"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def base_environment() -> dict[str, str]:
    """The test process's environment without any postflows or Prefect configuration; the processes it
    starts import this checkout's packages (not whatever an editable install points at)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTFLOWS_", "PREFECT_"))}
    env.update(guess_watch.environment())  # the sandboxes served here log the guesses they play too
    env.update(
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        COLUMNS="250",  # tables are compared by their cell text, so they must not be cut
        PYTHONUNBUFFERED="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    )
    return env


def sandbox_cli_environment(root: Path, api_url: str, *, job_seconds: str) -> dict[str, str]:
    """The environment of a ``postflows`` command on the embedded sandbox: its data and Prefect home under
    ``root``, reporting to the Prefect API at ``api_url``, a sandbox job lasting ``job_seconds``."""
    env = base_environment()
    env.update(
        POSTFLOWS_DATA_DIR=str(root / "data"),
        POSTFLOWS_SANDBOX_JOB_SECONDS=job_seconds,
        PREFECT_HOME=str(root / "prefect-home"),
        PREFECT_API_URL=api_url,
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

    def stored(self) -> dict[str, list[str]]:
        """What the APIs hold now: address-service files and batch jobs, newspaper orders, purchases and
        statistics uploads, each by its id."""
        stored: dict[str, list[str]] = httpx.get(f"{self.origin}/_sandbox/stored", timeout=5).json()
        return stored

    def delete_status(self, token: str) -> int:
        """The Status the service answers for deleting ``token`` now (302 once it is gone)."""
        response = httpx.get(f"{self.address_url}/deletefile/{token}", auth=(USER, PASSWORD), timeout=5)
        return int(response.json()["Status"])


@contextmanager
def served_sandbox(
    workdir: Path, *, job_seconds: float, request_log: Path | None = None, options: Sequence[str] = ()
) -> Iterator[ServedSandbox]:
    """``postflows sandbox --port <free port> --job-seconds N`` until the block ends; with ``request_log``
    it writes every API request there (``--request-log``); ``options`` are further options of the command
    (``--guesses other``)."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = workdir / "sandbox.log"
    command = [POSTFLOWS, "sandbox", "--port", str(port), "--job-seconds", str(job_seconds), *options]
    if request_log is not None:
        command += ["--request-log", str(request_log)]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
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
    """The session's Prefect server.

    Attributes:
        api_url: its API (``PREFECT_API_URL``).
        home: its PREFECT_HOME.
        database_url: its PostgreSQL database (a psycopg URL, for tests to look into); None on SQLite.
    """

    api_url: str
    home: Path
    database_url: str | None = None


@dataclass
class _Booting:
    process: subprocess.Popen[bytes]
    api_url: str
    home: Path
    log: Path
    database_url: str | None


@contextmanager
def fresh_prefect_database() -> Iterator[str | None]:
    """A new, empty PostgreSQL database on the server ``POSTFLOWS_TEST_POSTGRES_URL`` names, dropped when the
    block ends; None when no server is named."""
    server_url = os.environ.get(POSTGRES_URL_ENV)
    if not server_url:
        yield None
        return
    server = make_url(server_url)
    name = f"prefect_e2e_{uuid.uuid4().hex[:16]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield server.set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


def prefect_database_environment(database_url: str | None) -> dict[str, str]:
    """The server's database setting for ``database_url`` (Prefect talks to PostgreSQL through asyncpg)."""
    if database_url is None:
        return {}
    asyncpg_url = make_url(database_url).set(drivername="postgresql+asyncpg")
    return {"PREFECT_SERVER_DATABASE_CONNECTION_URL": asyncpg_url.render_as_string(hide_password=False)}


@contextmanager
def started_prefect_server(home: Path) -> Iterator[_Booting]:
    """``prefect server start`` on a free loopback port with ``home`` as its PREFECT_HOME, on a fresh
    PostgreSQL database when one is available (else SQLite); stopped, and its database dropped, when the
    block ends. It is still booting when the block begins (:func:`wait_until_up` its health).
    Its scheduler is off: it makes no runs of the deployments' schedules by itself (the catalog's are due
    at their times of day, the nightly cleanup at 02:30 Swiss time, whenever the suite happens to run, and
    ``postflows serve`` or a worker would run them beside the tests)."""
    port = free_port()
    with fresh_prefect_database() as database_url:
        env = {
            **base_environment(),
            "PREFECT_HOME": str(home),
            "PREFECT_UI_ENABLED": "false",
            "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "false",
            **prefect_database_environment(database_url),
        }
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
            yield _Booting(process, f"http://127.0.0.1:{port}/api", home, log, database_url)
        finally:
            stop(process)


@pytest.fixture(scope="session")
def _prefect_server_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Booting]:
    """The session's Prefect server (see :func:`started_prefect_server`)."""
    with started_prefect_server(tmp_path_factory.mktemp("prefect-server")) as booting:
        yield booting


@pytest.fixture(scope="session", autouse=True)
def _boot_early(request: pytest.FixtureRequest) -> None:
    """Start what the selected tests need at the first e2e test: the Prefect server, so it boots while
    tests without flow runs (the assistant commands) execute, and the parked batch job, which takes
    minutes and runs while the other tests do (its test comes last)."""
    items = request.session.items
    if any("prefect_server" in getattr(item, "fixturenames", ()) for item in items):
        request.getfixturevalue("_prefect_server_process")
    if any(PARKED_FIXTURE in getattr(item, "fixturenames", ()) for item in items):
        request.getfixturevalue(PARKED_FIXTURE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of the background work started at the beginning go after the other e2e tests, when it has had
    time to run."""
    here = Path(__file__).parent
    background = [item for item in items if PARKED_FIXTURE in getattr(item, "fixturenames", ())]
    for item in background:
        items.remove(item)
    e2e = [i for i, item in enumerate(items) if item.path.is_relative_to(here)]
    at = e2e[-1] + 1 if e2e else len(items)
    items[at:at] = background


@pytest.fixture(scope="session")
def prefect_server(_prefect_server_process: _Booting) -> PrefectServer:
    """One Prefect server for every CLI flow run of the session, up and answering."""
    booting = _prefect_server_process
    wait_until_up(f"{booting.api_url}/health", booting.process, booting.log, timeout=120)
    return PrefectServer(booting.api_url, booting.home, booting.database_url)


@dataclass
class ServedDeployments:
    """``postflows serve`` serving every deployment of the catalog to the session's Prefect server."""

    env: dict[str, str]
    data_dir: Path
    process: subprocess.Popen[bytes]
    log: Path
    api_url: str

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        """A call of the Prefect server's REST API; the decoded JSON answer (None when empty)."""
        response = httpx.request(method, f"{self.api_url}{path}", timeout=30, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else None

    def deployment(self, name: str) -> dict[str, Any]:
        """The deployment ``<name>/<name>`` as the API describes it."""
        found: dict[str, Any] = self.api("GET", f"/deployments/name/{name}/{name}")
        return found

    def run_deployment(
        self, name: str, parameters: dict[str, object], *, timeout: float = 240
    ) -> subprocess.CompletedProcess[str]:
        """``prefect deployment run <name>/<name> --params … --watch``, as another system would."""
        return subprocess.run(
            [
                PREFECT, "deployment", "run", f"{name}/{name}", "--params", json.dumps(parameters),
                "--watch", "--watch-timeout", str(int(timeout)),
            ],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout + 60,
        )  # fmt: skip

    def wait_for_flow_run(self, flow_run_id: str, *, timeout: float = 240) -> dict[str, Any]:
        """The flow run once it is final (completed, failed, crashed or cancelled)."""
        deadline = time.monotonic() + timeout
        while True:
            run: dict[str, Any] = self.api("GET", f"/flow_runs/{flow_run_id}")
            if run["state_type"] in {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}:
                return run
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"flow run {run['name']} is still {run['state_type']}:\n{self.log_text()}"
                )
            time.sleep(0.25)

    def explain(self, run: dict[str, Any]) -> str:
        """What went wrong with a flow run: its state's message and the logs it sent to the server."""
        logs = self.api(
            "POST",
            "/logs/filter",
            json={"logs": {"flow_run_id": {"any_": [run["id"]]}}, "sort": "TIMESTAMP_ASC", "limit": 200},
        )
        lines = "\n".join(f"{log['level']:>3} {log['message']}" for log in logs)
        state = run.get("state") or {}
        return f"flow run {run['name']} is {run['state_type']}: {state.get('message')}\n{lines}"

    def flow_runs(self, deployment: str, **flow_run_filter: Any) -> list[dict[str, Any]]:
        """The flow runs of deployment ``<name>/<name>``, newest first."""
        runs: list[dict[str, Any]] = self.api(
            "POST",
            "/flow_runs/filter",
            json={
                "deployments": {"id": {"any_": [self.deployment(deployment)["id"]]}},
                "flow_runs": flow_run_filter,
                "sort": "EXPECTED_START_TIME_DESC",
                "limit": 50,
            },
        )
        return runs

    def history(self, *args: str) -> str:
        """``postflows history …`` on the served data dir: the run history the deployments write to."""
        done = subprocess.run(
            [POSTFLOWS, "history", *args], env=self.env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")[-20000:]


def start_serve(
    root: Path, api_url: str, **settings: str
) -> tuple[dict[str, str], subprocess.Popen[bytes], Path]:
    """``postflows serve`` against the Prefect server at ``api_url``, with its PREFECT_HOME, data dir and log
    under ``root`` and ``settings`` added to its environment; it checks for runs every second (Prefect's
    default is 10) so a triggered run starts promptly. ``--sandbox``: the embedded sandbox serves the APIs
    whose URL ``settings`` do not name. Returns its environment, its process and its log."""
    env = base_environment()
    env.update(
        PREFECT_API_URL=api_url,
        PREFECT_HOME=str(root / "prefect-home"),
        PREFECT_RUNNER_POLL_FREQUENCY="1",
        POSTFLOWS_DATA_DIR=str(root / "data"),
        **settings,
    )
    log = root / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [POSTFLOWS, "serve", "--sandbox"],
            cwd=root,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return env, process, log


@pytest.fixture(scope="session")
def served(
    prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServedDeployments]:
    """``postflows serve`` for the session, every deployment registered, against the embedded sandbox; it
    checks for runs every second (Prefect's default is 10) so a triggered run starts promptly."""
    from deployments.catalog import CATALOG

    root = tmp_path_factory.mktemp("serve")
    env, process, log = start_serve(root, prefect_server.api_url)
    serving = ServedDeployments(env, root / "data", process, log, prefect_server.api_url)
    try:
        wanted = {spec.name for spec in CATALOG}
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"postflows serve exited:\n{serving.log_text()}")
            listed = serving.api("POST", "/deployments/filter", json={"limit": 200})
            if wanted <= {deployment["name"] for deployment in listed}:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"deployments did not appear:\n{serving.log_text()}")
            time.sleep(0.5)
        yield serving
    finally:
        stop(process)


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
            # The served sandbox stands for the assistant's production address too.
            POSTFLOWS_ADDRESS_ASSISTANT_URL=self.sandbox.address_url,
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


TRIGGER_TIMINGS: dict[str, float] = {}
"""Seconds from triggering a run to seeing it completed, by how it was triggered (shown after the tests)."""
CONCURRENCY_FIGURES: dict[str, str] = {}
"""What each crowd of processes started at once did, by history database (shown after the tests)."""
SUMMARY_LINES: list[str] = []
"""Further lines for the end of the test session (what a test measured, e.g. its wall time)."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in SUMMARY_LINES:
        terminalreporter.write_line(line)
    if TRIGGER_TIMINGS:
        measured = ", ".join(f"{how} {seconds:.1f} s" for how, seconds in TRIGGER_TIMINGS.items())
        terminalreporter.write_line(
            f"trigger to completed run (postflows serve polling every 1 s): {measured}"
        )
    for database, figures in CONCURRENCY_FIGURES.items():
        terminalreporter.write_line(f"concurrency on {database}: {figures}")


from tests.e2e.parked_batch_run import parked_batch  # noqa: E402, F401  (a session fixture, started early)
