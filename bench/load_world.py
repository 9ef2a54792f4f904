"""What the load test (:mod:`bench.load`) runs on: two fresh PostgreSQL databases (the Prefect server's and
the run history's), a Prefect server on the first, the embedded sandbox served over HTTP with latency,
transient faults and a request log, every flow deployed to one process work pool with the per-API rate
limits and the automations, the empty flow (:mod:`bench.empty_flow`) beside them, and N ``prefect worker
start`` processes sharing one environment. Each piece is a context manager that stops or drops what it made.
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.prefect_requests import ServerLog, access_logged

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
POSTFLOWS = str(BIN / "postflows")
PREFECT = str(BIN / "prefect")
SANDBOX_USER, SANDBOX_PASSWORD = "sandbox-user", "sandbox-password"
NEWSPAPER_CLIENT = ("sandbox-client", "sandbox-secret")
COMMERCE_CLIENT = ("sandbox-commerce-client", "sandbox-commerce-secret")
ADDRESS_PATH = "/address/REST/v1"
EMPTY_FLOW = "empty"
"""The empty flow's name and its deployment's (``empty/empty``)."""
EMPTY_ENTRYPOINT = "bench/empty_flow.py:empty"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop(process: subprocess.Popen[Any], timeout: float = 20) -> None:
    """Stop a process started in a session of its own, with everything it started (a worker's flow runs)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=timeout)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _detached(args: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@contextlib.contextmanager
def fresh_databases(server_url: str, *purposes: str) -> Iterator[list[str]]:
    """One new, empty PostgreSQL database per purpose on the server ``server_url`` names (a SQLAlchemy URL),
    dropped (connections and all) when the block ends."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    server = make_url(server_url)
    names = [f"postflows_load_{purpose}_{uuid.uuid4().hex[:12]}" for purpose in purposes]
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    made: list[str] = []
    try:
        with admin.connect() as connection:
            for name in names:
                connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
                made.append(name)
        yield [server.set(database=name).render_as_string(hide_password=False) for name in names]
    finally:
        with admin.connect() as connection:
            for name in made:
                connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@dataclass(frozen=True)
class PrefectServer:
    """A running Prefect server: its log (where it logs every request it answered) and its process."""

    log: ServerLog
    pid: int

    @property
    def api_url(self) -> str:
        return self.log.api_url


@contextlib.contextmanager
def prefect_server(home: Path, database_url: str | None = None) -> Iterator[PrefectServer]:
    """A Prefect server (``LocalServer``) on a free port keeping its runs in ``database_url`` (None: SQLite
    in ``home``), logging every request it answers (:func:`bench.prefect_requests.access_logged`)."""
    from postflows.prefect_server import LocalServer

    server = LocalServer.of(home)
    with access_logged():
        state = server.start(port=free_port(), database_url=database_url, timeout=180)
    try:
        yield PrefectServer(ServerLog(server.log_path, str(state.api_url)), state.pid)
    finally:
        server.stop()


@dataclass(frozen=True)
class SandboxPlan:
    """How the served sandbox behaves: each request delayed ``latency_s``, batch jobs and orders lasting
    ``job_seconds``, the transient ``faults`` (fault rules, fired before the latency rule)."""

    latency_s: float
    job_seconds: float
    faults: tuple[dict[str, Any], ...]

    def rules(self) -> list[dict[str, Any]]:
        latency = {"api": "*", "endpoint": "*", "kind": "delay", "value": self.latency_s, "times": None}
        return [*self.faults, *([latency] if self.latency_s > 0 else [])]


def transient_faults(runs: int) -> tuple[dict[str, Any], ...]:
    """Faults a client must ride out, spread over the run (``runs`` flow runs): 503s and a dropped
    connection on status checks and reads, never on a submission (so each submission reaches the API once
    and the request log can count them)."""
    every = max(1, runs // 10)

    def rule(api: str, endpoint: str, kind: str, value: Any, after: int, times: int, method: str) -> Any:
        return dict(
            api=api, endpoint=endpoint, kind=kind, value=value, after=after, times=times, method=method
        )

    return (
        rule("address", "checkbatchstatus/*", "http_status", 503, every, 3, "GET"),
        rule("address", "checkbatchstatus/*", "drop", None, 3 * every, 1, "GET"),
        rule("address", "runquery2", "http_status", 503, 2 * every, 2, "POST"),
        rule("newspaper", "*orders/*/status", "http_status", 503, every, 2, "GET"),
        rule("commerce", "*", "http_status", 503, 2 * every, 2, "POST"),
    )


@dataclass(frozen=True)
class ServedSandbox:
    origin: str
    request_log: Path
    process: subprocess.Popen[bytes]

    def environment(self) -> dict[str, str]:
        """The settings that point every API's client at this sandbox, with its published test accounts."""
        origin = self.origin
        return {
            "POSTFLOWS_ADDRESS_SERVICE_URL": f"{origin}{ADDRESS_PATH}",
            "POSTFLOWS_ADDRESS_SERVICE_USER": SANDBOX_USER,
            "POSTFLOWS_ADDRESS_SERVICE_PASSWORD": SANDBOX_PASSWORD,
            "POSTFLOWS_NEWSPAPER_URL": f"{origin}/newspaper",
            "POSTFLOWS_NEWSPAPER_TOKEN_URL": f"{origin}/auth/OAuth/token",
            "POSTFLOWS_NEWSPAPER_CLIENT_ID": NEWSPAPER_CLIENT[0],
            "POSTFLOWS_NEWSPAPER_CLIENT_SECRET": NEWSPAPER_CLIENT[1],
            "POSTFLOWS_COMMERCE_URL": f"{origin}/commerce",
            "POSTFLOWS_COMMERCE_AUTH_URL": f"{origin}/auth",
            "POSTFLOWS_COMMERCE_USERINFO_URL": f"{origin}/auth/userinfo",
            "POSTFLOWS_COMMERCE_CLIENT_ID": COMMERCE_CLIENT[0],
            "POSTFLOWS_COMMERCE_CLIENT_SECRET": COMMERCE_CLIENT[1],
        }


@contextlib.contextmanager
def served_sandbox(workdir: Path, env: dict[str, str], plan: SandboxPlan) -> Iterator[ServedSandbox]:
    """``postflows sandbox --request-log …`` on a free port with ``plan``'s faults, until the block ends."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    request_log = workdir / "requests.jsonl"
    args = [
        POSTFLOWS, "sandbox", "--port", str(port), "--memory", "--job-seconds", str(plan.job_seconds),
        "--faults", json.dumps(plan.rules()), "--request-log", str(request_log),
    ]  # fmt: skip
    log = workdir / "sandbox.log"
    process = _detached(args, {**env, "POSTFLOWS_DATA_DIR": str(workdir / "data")}, workdir, log)
    try:
        origin = f"http://127.0.0.1:{port}"
        _wait_until_up(f"{origin}{ADDRESS_PATH}/ping", process, log, auth=(SANDBOX_USER, SANDBOX_PASSWORD))
        yield ServedSandbox(origin, request_log, process)
    finally:
        stop(process)


def _wait_until_up(url: str, process: subprocess.Popen[Any], log: Path, **kw: Any) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}:\n{log.read_text()}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(url, timeout=2, **kw).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up within 120 s:\n{log.read_text()}")


def _run(env: dict[str, str], *args: str, timeout: float = 600) -> str:
    """A command run from the repository; its output. Raises when it fails."""
    done = subprocess.run(
        args, cwd=REPO, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args[:3])} … failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return done.stdout


def deploy(env: dict[str, str], pool: str, *, worker_python: str | None = None) -> None:
    """``postflows deploy --pool pool``: the process pool, every deployment of the catalog on it, the per-API
    rate limits (from ``POSTFLOWS_*_RATE_PER_MINUTE``) and the automations; with ``worker_python``, its
    ``--worker-python``."""
    direct = ("--worker-python", worker_python) if worker_python else ()
    _run(env, POSTFLOWS, "deploy", "--pool", pool, *direct)


async def deploy_empty_flow(api_url: str, pool: str, *, worker_python: str | None = None) -> Any:
    """The empty flow (:mod:`bench.empty_flow`) as deployment ``empty/empty`` on ``pool`` of the Prefect API
    at ``api_url``, run from the repository by a worker, started as ``postflows deploy --worker-python``
    starts the catalog's when ``worker_python`` is given; its deployment's id."""
    from prefect.runner.storage import LocalStorage
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from bench.empty_flow import empty
    from deployments.deploy import engine_command

    deployment = await empty.ato_deployment(name=EMPTY_FLOW)
    deployment.storage = LocalStorage(str(REPO))
    deployment.entrypoint = EMPTY_ENTRYPOINT
    if worker_python is not None:
        deployment.job_variables = {"command": engine_command(worker_python)}
    with temporary_settings({PREFECT_API_URL: api_url}):
        return await deployment.aapply(work_pool_name=pool)


@contextlib.contextmanager
def workers(env: dict[str, str], pool: str, count: int, limit: int, workdir: Path) -> Iterator[list[Any]]:
    """``count`` process workers polling ``pool``, each running at most ``limit`` flow runs at once, each
    in its own folder with its own log, once every one has said it started (what comes next is not timed
    with their start); stopped with their flow runs when the block ends."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        for number in range(1, count + 1):
            folder = workdir / f"worker-{number}"
            folder.mkdir(parents=True, exist_ok=True)
            args = [
                PREFECT, "--no-prompt", "worker", "start", "--pool", pool, "--type", "process",
                "--limit", str(limit), "--install-policy", "never", "--name", f"load-worker-{number}",
            ]  # fmt: skip
            started.append(_detached(args, env, folder, folder / "worker.log"))
        for number, process in enumerate(started, start=1):
            _wait_until_started(process, workdir / f"worker-{number}" / "worker.log")
        yield started
    finally:
        for process in started:
            stop(process)


def _wait_until_started(process: subprocess.Popen[bytes], log: Path, timeout_s: float = 120) -> None:
    """Wait until the worker has logged ``Worker '…' started!`` (its loops run: it polls its pool)."""
    deadline = time.monotonic() + timeout_s
    while "started!" not in log.read_text(encoding="utf-8", errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{log.parent.name} did not start:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.2)


def worker_environment(
    base: dict[str, str], api_url: str, history_url: str, sandbox: ServedSandbox, workdir: Path
) -> dict[str, str]:
    """What every worker (and so every flow run) sees: the Prefect API, the shared PostgreSQL history, the
    served sandbox, heartbeats every 30 s, no analytics."""
    return {
        **base,
        **sandbox.environment(),
        "PREFECT_API_URL": api_url,
        "POSTFLOWS_DATABASE_URL": history_url,
        "POSTFLOWS_DATA_DIR": str(workdir / "data"),
        "PREFECT_RUNNER_HEARTBEAT_FREQUENCY": "30",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }


def base_environment(workdir: Path, rates: dict[str, int]) -> dict[str, str]:
    """This process's environment without postflows or Prefect settings, a PREFECT_HOME of the run's own,
    the rate limits ``postflows deploy`` makes (per API, per minute)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTFLOWS_", "PREFECT_"))}
    env.update(
        PREFECT_HOME=str(workdir / "prefect-home"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        PYTHONUNBUFFERED="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        POSTFLOWS_ADDRESS_SERVICE_RATE_PER_MINUTE=str(rates["address"]),
        POSTFLOWS_NEWSPAPER_RATE_PER_MINUTE=str(rates["newspaper"]),
        POSTFLOWS_COMMERCE_RATE_PER_MINUTE=str(rates["commerce"]),
    )
    return env
