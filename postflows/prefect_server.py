"""A local Prefect server that lives in the data dir (``postflows server start|stop|status``).

The server's home (its SQLite database, unless ``PREFECT_API_DATABASE_CONNECTION_URL`` names another), log
and state file (process id, address) are in ``<data dir>/prefect-server``, its owner's alone (the server runs
under umask 077: its database holds the runs' logs). Which Prefect API a flow command reports to (this
server when it answers) is decided by :mod:`postflows.prefect_api`. Nothing here imports Prefect.
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
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from core.json_text import json_text
from postflows.server_process import SERVER_MODULE

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4200
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 20.0
HEALTH_TIMEOUT_S = 2.0
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
"""``--host`` values that bind every interface: no address another machine could call."""
LOOPBACK = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}
"""Where this machine calls a server bound to every interface."""
# How the server's process was started, as its arguments show (each after a NUL):
# ``python -m postflows.server_process`` (Prefect's ``prefect server start`` with SQLite writes that wait for
# each other), or, by an earlier version, ``python -m prefect server start``.
_SERVER_ARGS = (f"\0-m\0{SERVER_MODULE}\0", "\0prefect\0server\0start\0")


class ServerError(RuntimeError):
    """The local server could not be started (port taken, the process ended, no answer in time)."""


@dataclass(frozen=True)
class ServerState:
    """What ``server start`` recorded: the server's process (leading its own process group) and address."""

    pid: int
    host: str
    port: int
    started: str

    @property
    def api_url(self) -> str:
        """The API as this machine calls it: over loopback when the server listens on every interface."""
        return _api_url(LOOPBACK.get(self.host, self.host), self.port)


@dataclass(frozen=True)
class LocalServer:
    """The local Prefect server of one data dir."""

    home: Path

    @classmethod
    def of(cls, data_dir: Path) -> LocalServer:
        return cls((data_dir / "prefect-server").resolve())

    @property
    def state_path(self) -> Path:
        return self.home / "server.json"

    @property
    def log_path(self) -> Path:
        return self.home / "server.log"

    def state(self) -> ServerState | None:
        """The recorded server, or None when none was started (or its record is unreadable)."""
        try:
            return ServerState(**json.loads(self.state_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None

    def running(self) -> ServerState | None:
        """The recorded server when its process is still alive; a stale record is removed."""
        state = self.state()
        if state is None:
            return None
        if not _alive(state.pid):
            self.state_path.unlink(missing_ok=True)
            return None
        return state

    def answering(self) -> ServerState | None:
        """The recorded server when it answers its health check."""
        state = self.running()
        return state if state is not None and answers(state.api_url) else None

    def start(
        self,
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        timeout: float = START_TIMEOUT_S,
        database_url: str | None = None,
    ) -> ServerState:
        """Start the Prefect server (:mod:`postflows.server_process`: ``prefect server start`` whose SQLite
        writes wait for each other) detached (its own session, output to the log) and wait until it answers;
        a server already running is returned as it is. ``database_url`` (a PostgreSQL URL of any driver, run
        through asyncpg as Prefect wants it) replaces the SQLite database in its home.

        Raises:
            ServerError: the port is taken, or the server ended or did not answer within ``timeout``
                (it is stopped then; the log says why).
        """
        running = self.running()
        if running is not None:
            return running
        from fileio.files import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, make_dirs, write_bytes

        _check_port_free(host, port)
        make_dirs(self.home)
        os.chmod(self.home, PRIVATE_DIR_MODE)
        env = server_environment(os.environ, self.home, host, port)
        if database_url:
            env["PREFECT_SERVER_DATABASE_CONNECTION_URL"] = server_database_url(database_url)
        log_fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE_MODE)
        with open(log_fd, "ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", SERVER_MODULE, "--host", host, "--port", str(port)],
                cwd=self.home,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                umask=0o077,
            )
        state = ServerState(process.pid, host, port, time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        write_bytes(
            self.state_path,
            (json_text(asdict(state), ascii_only=True) + "\n").encode(),
            mode=PRIVATE_FILE_MODE,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.state_path.unlink(missing_ok=True)
                raise ServerError(
                    f"the Prefect server ended with exit code {process.returncode}; see {self.log_path}"
                )
            if answers(state.api_url):
                return state
            time.sleep(0.25)
        self.stop()
        raise ServerError(f"the Prefect server did not answer within {timeout:.0f} s; see {self.log_path}")

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> ServerState | None:
        """Stop the recorded server and everything it started (its process group), and wait until its port
        takes a new server; returns what was stopped, or None when nothing ran."""
        state = self.running()
        self.state_path.unlink(missing_ok=True)
        if state is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(state.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _alive(state.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(state.pid, signal.SIGKILL)
        # The process group's last members (the server's workers) may hold the listening socket a moment
        # longer than the leader.
        while not _port_free(state.host, state.port) and time.monotonic() < deadline + STOP_TIMEOUT_S:
            time.sleep(0.1)
        return state


def server_environment(environ: Mapping[str, str], home: Path, host: str, port: int) -> dict[str, str]:
    """The environment of the local server listening on ``host``:``port``: ``environ`` with the server's home,
    without ``PREFECT_API_URL`` (it is the API), and with the addresses the UI and the links of notifications
    use: ``PREFECT_UI_API_URL`` (``http://<host>:<port>/api``, which the UI calls from the browser) and
    ``PREFECT_UI_URL`` (``http://<host>:<port>``, in "view the run" links), each unless ``environ`` sets
    it. Bound to every interface (``0.0.0.0``, ``::``) they name this machine (:func:`public_host`): other
    machines cannot reach ``0.0.0.0``."""
    env = {**environ, "PREFECT_HOME": str(home)}
    env.pop("PREFECT_API_URL", None)
    env.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    env["PREFECT_UI_URL"] = ui_url(environ, host, port)
    env["PREFECT_UI_API_URL"] = environ.get("PREFECT_UI_API_URL") or _api_url(public_host(host), port)
    return env


def ui_url(environ: Mapping[str, str], host: str, port: int) -> str:
    """The UI's address of the local server on ``host``:``port``: ``PREFECT_UI_URL`` when ``environ`` sets
    it, else ``http://<host>:<port>`` with this machine's name for every interface (:func:`public_host`)."""
    return environ.get("PREFECT_UI_URL") or _base_url(public_host(host), port)


def public_host(host: str) -> str:
    """The host name other machines reach ``host`` by: this machine's name when ``host`` is every interface
    (its fully qualified name, or its host name when that is only ``localhost``), else ``host`` itself."""
    if host not in WILDCARD_HOSTS:
        return host
    fqdn = socket.getfqdn()
    return socket.gethostname() if fqdn.split(".")[0] in ("", "localhost") else fqdn


def server_database_url(url: str) -> str:
    """A PostgreSQL URL as the Prefect server takes it (``postgresql+asyncpg://``); others as they are."""
    scheme, separator, rest = url.partition("://")
    if separator and scheme.split("+")[0] in ("postgresql", "postgres"):
        return f"postgresql+asyncpg://{rest}"
    return url


def answers(api_url: str, *, timeout: float = HEALTH_TIMEOUT_S) -> bool:
    """Whether a Prefect API answers its health check."""
    import httpx  # here: the CLI imports this module before any request is made

    try:
        return httpx.get(f"{api_url.rstrip('/')}/health", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def _alive(pid: int) -> bool:
    """Whether the recorded process still runs and is a Prefect server (a process id may be reused)."""
    with contextlib.suppress(ChildProcessError):  # started by this very process: reap it once it ended
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process: not the one recorded
    import psutil  # only here: `postflows --help` and a refused input never look for a server

    try:
        arguments = psutil.Process(pid).cmdline()
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True  # its arguments cannot be read here: trust the record
    command = "".join(f"\0{argument}" for argument in arguments) + "\0"
    return any(args in command for args in _SERVER_ARGS)


def _base_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _api_url(host: str, port: int) -> str:
    return f"{_base_url(host, port)}/api"


def _port_free(host: str, port: int) -> bool:
    """Whether a server could listen on the port now. Bound as the server binds it (``SO_REUSEADDR``, as
    uvicorn does): connections of a stopped server left in TIME_WAIT do not count, a listening socket does."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
        return True


def _check_port_free(host: str, port: int) -> None:
    if not _port_free(host, port):
        raise ServerError(f"{host}:{port} is in use; choose another port with --port")
