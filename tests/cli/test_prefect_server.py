"""The local Prefect server of the data dir: its record, its process, its environment and its port."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from postflows.cli import app
from postflows.prefect_api import choose_api
from postflows.prefect_server import (
    LocalServer,
    ServerState,
    _alive,
    public_host,
    server_environment,
    ui_url,
)
from postflows.server_process import SERVER_MODULE

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_prefect_configuration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("PREFECT_API_URL", "PREFECT_PROFILE", "PREFECT_PROFILES_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))


def test_a_record_of_a_server_that_is_gone_is_dropped(tmp_path: Path) -> None:
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    server = LocalServer.of(tmp_path)
    server.home.mkdir(parents=True)
    server.state_path.write_text(
        json.dumps({"pid": int(ended.stdout), "host": "127.0.0.1", "port": 9, "started": ""})
    )
    assert server.state() == ServerState(int(ended.stdout), "127.0.0.1", 9, "")
    assert choose_api(tmp_path).startswith("Prefect server: a temporary one")
    assert not server.state_path.exists()
    assert server.stop() is None


def test_a_recorded_process_that_is_no_prefect_server_is_not_taken_for_one(tmp_path: Path) -> None:
    """A process id may be reused by something else: that process is neither used nor stopped."""
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "prefect", "server", "status"],
        start_new_session=True,
    )
    try:
        server = LocalServer.of(tmp_path)
        server.home.mkdir(parents=True)
        state = {"pid": other.pid, "host": "127.0.0.1", "port": 9, "started": ""}
        server.state_path.write_text(json.dumps(state))
        assert server.running() is None
        assert server.stop() is None
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_a_process_started_as_the_server_module_is_taken_for_the_server_until_it_ends() -> None:
    waits = "import time; print('up', flush=True); time.sleep(60)"
    server = subprocess.Popen(
        [sys.executable, "-c", waits, "-m", SERVER_MODULE, "--port", "9"],
        start_new_session=True,
        stdout=subprocess.PIPE,
    )
    try:
        assert server.stdout is not None and server.stdout.readline() == b"up\n"  # its arguments are set
        assert _alive(server.pid)
    finally:
        server.kill()
        server.communicate()
    assert not _alive(server.pid)


def test_status_and_stop_without_a_server(tmp_path: Path) -> None:
    status = runner.invoke(app, ["server", "status"])
    assert status.exit_code == 1 and "no local Prefect server runs" in status.output
    stop = runner.invoke(app, ["server", "stop"])
    assert stop.exit_code == 0 and "no local Prefect server was running" in stop.output


def test_start_refuses_a_port_in_use(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["server", "start", "--port", str(port)])
    assert result.exit_code == 2
    assert f"failed: 127.0.0.1:{port} is in use; choose another port with --port" in result.output
    assert LocalServer.of(tmp_path / "data").state() is None


def test_a_port_whose_last_server_left_connections_in_time_wait_is_free() -> None:
    """A stopped server's side of its closed connections waits in TIME_WAIT for a minute; a new server
    binds the port all the same (uvicorn sets SO_REUSEADDR), so the check must not refuse it."""
    import socket

    from postflows.prefect_server import _port_free

    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = listener.accept()
            accepted.close()  # the server closes first: its end of the connection goes to TIME_WAIT
            client.recv(1)
        assert not _port_free("127.0.0.1", port)  # still listening
    with socket.socket() as plain, pytest.raises(OSError):
        plain.bind(("127.0.0.1", port))  # what a check without SO_REUSEADDR saw: "in use"
    assert _port_free("127.0.0.1", port)


def test_a_postgresql_url_of_any_driver_is_run_through_asyncpg() -> None:
    from postflows.prefect_server import server_database_url

    assert server_database_url("postgresql://u:p@db/prefect") == "postgresql+asyncpg://u:p@db/prefect"
    assert server_database_url("postgresql+psycopg://u@db:5433/x") == "postgresql+asyncpg://u@db:5433/x"
    assert server_database_url("postgres://u@db/x") == "postgresql+asyncpg://u@db/x"
    assert server_database_url("sqlite+aiosqlite:////srv/prefect.db") == "sqlite+aiosqlite:////srv/prefect.db"


def test_the_servers_profile_is_active_until_stop_unless_the_operator_switched_since(tmp_path: Path) -> None:
    import tomllib

    from prefect.settings import PREFECT_PROFILES_PATH, temporary_settings

    from postflows.prefect_profile import activate, restore

    path = tmp_path / "profiles.toml"
    home = tmp_path / "server-home"
    home.mkdir()

    def active() -> str:
        return str(tomllib.loads(path.read_text(encoding="utf-8"))["active"])

    with temporary_settings({PREFECT_PROFILES_PATH: path}):
        first = activate("http://127.0.0.1:4311/api", home)
        assert first.previous == "ephemeral" and active() == "postflows"
        again = activate(
            "http://127.0.0.1:4312/api", home
        )  # a restart on another port keeps the first record
        assert again.previous == "ephemeral"
        assert tomllib.loads(path.read_text())["profiles"]["postflows"]["PREFECT_API_URL"].endswith(
            ":4312/api"
        )
        assert restore(home) == "ephemeral" and active() == "ephemeral"
        assert restore(home) is None  # nothing recorded any more

        activate("http://127.0.0.1:4311/api", home)
        text = path.read_text(encoding="utf-8").replace('active = "postflows"', 'active = "local"')
        path.write_text(text, encoding="utf-8")  # the operator's `prefect profile use local`
        assert restore(home) is None and active() == "local"


def test_the_servers_environment_gives_the_ui_and_notification_links_its_own_address(tmp_path: Path) -> None:
    environ = {"PATH": "/usr/bin", "PREFECT_API_URL": "http://elsewhere.test/api"}
    env = server_environment(environ, tmp_path, "127.0.0.1", 4321)
    assert env["PREFECT_UI_URL"] == "http://127.0.0.1:4321"  # "View the run" links in notifications
    assert env["PREFECT_UI_API_URL"] == "http://127.0.0.1:4321/api"
    assert env["PREFECT_HOME"] == str(tmp_path) and "PREFECT_API_URL" not in env and env["PATH"] == "/usr/bin"


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_a_server_on_every_interface_is_named_by_this_machines_name(
    host: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("socket.getfqdn", lambda: "prefect-host.example.test")
    env = server_environment({}, tmp_path, host, 4200)
    assert env["PREFECT_UI_URL"] == "http://prefect-host.example.test:4200"
    assert env["PREFECT_UI_API_URL"] == "http://prefect-host.example.test:4200/api"
    loopback = "http://[::1]:4200/api" if host == "::" else "http://127.0.0.1:4200/api"
    assert ServerState(1, host, 4200, "").api_url == loopback  # how this machine calls it


def test_a_machine_whose_full_name_is_localhost_is_named_by_its_host_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("socket.getfqdn", lambda: "localhost.localdomain")
    monkeypatch.setattr("socket.gethostname", lambda: "vm7")
    assert public_host("0.0.0.0") == "vm7"
    assert public_host("10.0.0.5") == "10.0.0.5"


def test_the_users_own_ui_addresses_are_never_overridden(tmp_path: Path) -> None:
    environ = {
        "PREFECT_UI_URL": "https://prefect.example.test",
        "PREFECT_UI_API_URL": "https://prefect.example.test/api",
    }
    env = server_environment(environ, tmp_path, "0.0.0.0", 4200)
    assert env["PREFECT_UI_URL"] == "https://prefect.example.test"
    assert env["PREFECT_UI_API_URL"] == "https://prefect.example.test/api"
    assert ui_url(environ, "0.0.0.0", 4200) == "https://prefect.example.test"


def test_an_ipv6_address_is_bracketed_in_the_urls(tmp_path: Path) -> None:
    env = server_environment({}, tmp_path, "::1", 4200)
    assert (
        env["PREFECT_UI_URL"] == "http://[::1]:4200" and env["PREFECT_UI_API_URL"] == "http://[::1]:4200/api"
    )
