"""The choice of the Prefect API a flow command reports to, and the temporary server of one run.

A flow command uses, in this order: ``PREFECT_API_URL`` (environment or the active Prefect profile), the
data dir's local server (:mod:`postflows.prefect_server`) when it answers, or a temporary server for the one
run. Nothing here imports Prefect: the choice is made before Prefect is loaded, since Prefect reads
``PREFECT_API_URL`` once. For the same reason the temporary server is started here, as Prefect itself would
start it, but while this process is still importing the flow: the server's start (10 s and more) overlaps
the flow's imports instead of following them, and the command never imports Prefect's server code itself.

A flow run in this process shares one synchronous Prefect client (:func:`shared_sync_client`).
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from postflows.prefect_profile import PROFILE_SOURCE
from postflows.prefect_server import DEFAULT_HOST, LocalServer, ServerError, answers

TEMPORARY_START_TIMEOUT_S = 120.0


def configured_api_url() -> tuple[str, str] | None:
    """``PREFECT_API_URL`` as Prefect will read it, and where it comes from: the environment, else the active
    profile of ``PREFECT_PROFILES_PATH`` (default ``<PREFECT_HOME>/profiles.toml``); None when unset."""
    if url := os.environ.get("PREFECT_API_URL"):
        return url, "PREFECT_API_URL"
    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()
    path = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml").expanduser()
    try:
        profiles = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = os.environ.get("PREFECT_PROFILE") or profiles.get("active") or "ephemeral"
    url = profiles.get("profiles", {}).get(name, {}).get("PREFECT_API_URL")
    return (str(url), f"Prefect profile {name!r}") if url else None


@dataclass(frozen=True)
class PrefectApi:
    """The Prefect API flow runs report to: its address and where it comes from (``local`` for the data
    dir's server); no address means a temporary server per run."""

    url: str | None
    source: str

    def describe(self) -> str:
        if self.url is None:
            return "none running: each flow command starts a temporary server (`postflows server start`)"
        return f"{self.url} ({self.source})"


def prefect_api(data_dir: Path) -> PrefectApi:
    """The configured Prefect API, else the data dir's local server when it answers, else none. The profile
    ``postflows server start`` activates comes after the data dir's server, and counts only while its
    server answers (a server that ended without ``server stop`` leaves it active)."""
    configured = configured_api_url()
    if configured is not None and configured[1] != PROFILE_SOURCE:
        return PrefectApi(*configured)
    state = LocalServer.of(data_dir).answering()
    if state is not None:
        return PrefectApi(state.api_url, "local")
    if configured is not None and answers(configured[0]):
        return PrefectApi(*configured)
    return PrefectApi(None, "temporary")


def choose_api(data_dir: Path) -> str:
    """Decide which Prefect API this process's flow runs report to, before Prefect is imported (see
    :func:`prefect_api`; for the local server ``PREFECT_API_URL`` is set for this process); returns the
    line that says which."""
    api = prefect_api(data_dir)
    if api.url is None:
        line = "Prefect server: a temporary one for this run (`postflows server start` keeps one running)"
        allowed = os.environ.get("PREFECT_SERVER_ALLOW_EPHEMERAL_MODE", "true").lower() not in ("false", "0")
        if not _start_early or not allowed or "prefect" in sys.modules:
            return line  # Prefect starts its own temporary server when the flow runs
        server = start_temporary_server()
        os.environ["PREFECT_API_URL"] = server.api_url
        os.environ.setdefault("PREFECT_UI_URL", "")  # it serves no UI, and is gone after the run
        return line.replace("this run", f"this run at {server.api_url}")
    if api.source == "local":
        os.environ["PREFECT_API_URL"] = api.url
    return f"Prefect server: {api.describe()}"


@dataclass
class TemporaryServer:
    """A Prefect server for this process's runs only (``prefect.server.api.server:create_app`` under uvicorn,
    with Prefect's own settings for its temporary server), stopped when this process exits."""

    process: subprocess.Popen[bytes]
    port: int

    @property
    def api_url(self) -> str:
        return f"http://{DEFAULT_HOST}:{self.port}/api"

    def wait_ready(self, timeout: float = TEMPORARY_START_TIMEOUT_S) -> None:
        """Wait until the server answers its health check.

        Raises:
            ServerError: the server ended, or did not answer within ``timeout`` (it is stopped then).
        """
        deadline = time.monotonic() + timeout
        while not (_port_open(DEFAULT_HOST, self.port) and answers(self.api_url)):
            if self.process.poll() is not None:
                raise ServerError(
                    f"the temporary Prefect server ended with exit code {self.process.returncode} "
                    "before it answered (its output is above)"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise ServerError(f"the temporary Prefect server did not answer within {timeout:.0f} s")
            time.sleep(0.1)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the server (SIGTERM, SIGKILL after ``timeout``); nothing happens when it already ended."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_temporary: TemporaryServer | None = None
_start_early = False


def start_temporary_server_early() -> None:
    """Let :func:`choose_api` start the temporary server itself, before Prefect is imported. Only the
    ``postflows`` script does: a process that runs flows in other ways (tests, notebooks) keeps Prefect's
    own temporary server and its ``PREFECT_API_URL`` untouched."""
    global _start_early
    _start_early = True


def start_temporary_server() -> TemporaryServer:
    """Start this process's temporary Prefect server on a free loopback port without waiting for it (see
    :func:`wait_for_temporary_server`); it is stopped when this process exits."""
    global _temporary
    port = _free_port(DEFAULT_HOST)
    env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1"}
    env.update(PREFECT__SERVER_FINAL="1", PREFECT_SERVER_ANALYTICS_ENABLED="false")
    env.pop("PREFECT_API_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "prefect.server.api.server:create_app",
         "--host", DEFAULT_HOST, "--port", str(port), "--log-level", "error", "--lifespan", "on"],
        env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    _temporary = TemporaryServer(process, port)
    atexit.register(_temporary.stop)
    return _temporary


def wait_for_temporary_server() -> None:
    """Wait until this process's temporary server (if :func:`choose_api` started one) answers."""
    if _temporary is not None:
        _temporary.wait_ready(_startup_timeout())


@contextmanager
def shared_sync_client() -> Iterator[None]:
    """Within the block, the flow runs of this process share one synchronous Prefect client.

    Prefect's engine asks for a synchronous client of its own each time it looks up the result storage
    (twice a run, once of them to resolve the run's name) unless one is open in its context. Each builds a
    TLS context, which loads the CA bundle (about 0.02 s, even for an ``http://`` server), and asks the
    server for a CSRF token before its first write. With this block around a run, both look-ups use the one
    client it opens (and checks against the server's version, once a process, as the engine's own client
    does): a run in this process costs one client and its requests less.
    """
    from prefect.context import SyncClientContext

    with SyncClientContext.get_or_create():
        yield


def _startup_timeout() -> float:
    """Prefect's own limit for its temporary server (``PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS``)."""
    try:
        return float(os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"])
    except (KeyError, ValueError):
        return TEMPORARY_START_TIMEOUT_S


def _port_open(host: str, port: int) -> bool:
    """Whether something accepts connections on the port: a cheap check while a server starts (an HTTP
    health check builds a TLS context each time, which costs the starting server CPU on a small machine)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        return probe.connect_ex((host, port)) == 0


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port
