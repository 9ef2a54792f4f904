"""``postflows server start|status|stop`` as a user runs them, and a flow command that reports to that server
instead of starting a temporary one."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from postflows.prefect_server import LocalServer, public_host
from tests.e2e.conftest import EXAMPLE, POSTFLOWS, base_environment, free_port, json_block

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def _postflows(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([POSTFLOWS, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    data = tmp_path / "data"
    try:
        yield data
    finally:
        LocalServer.of(data).stop()  # whatever the test left running


def test_a_flow_command_reports_to_the_running_local_server(tmp_path: Path, data_dir: Path) -> None:
    env = {
        **base_environment(),
        "POSTFLOWS_DATA_DIR": str(data_dir),
        "POSTFLOWS_SANDBOX_JOB_SECONDS": "0.5",
        "PREFECT_HOME": str(tmp_path / "user-prefect-home"),  # no profile of the developer's
        "PREFECT_UI_ENABLED": "false",
    }
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"

    started = _postflows(env, tmp_path, "server", "start", "--port", str(port))
    assert started.returncode == 0, started.stderr
    assert f"Prefect server started: {api}" in started.stdout
    assert f"export PREFECT_API_URL={api}" in started.stdout
    # `prefect` commands use the server without an export: the profile `postflows` points at it and is active.
    profiles_path = tmp_path / "user-prefect-home" / "profiles.toml"
    profiles = tomllib.loads(profiles_path.read_text(encoding="utf-8"))
    assert profiles["active"] == "postflows" and profiles["profiles"]["postflows"]["PREFECT_API_URL"] == api
    assert "Prefect profile 'postflows' is active" in started.stdout and "'ephemeral'" in started.stdout
    home = data_dir / "prefect-server"
    # The UI the server serves calls this server's API, whatever the port (not Prefect's default 4200).
    pid = LocalServer.of(data_dir).state().pid  # type: ignore[union-attr]
    assert psutil.Process(pid).environ()["PREFECT_UI_API_URL"] == api
    assert (home / "server.json").is_file() and (home / "server.log").is_file()
    assert (home / "prefect.db").is_file()  # the server's own database lives in the data dir too

    status = _postflows(env, tmp_path, "server", "status")
    assert status.returncode == 0 and f"Prefect server: {api}" in status.stdout and "answers" in status.stdout
    again = _postflows(env, tmp_path, "server", "start", "--port", str(port))
    assert again.returncode == 0 and "already running" in again.stdout

    batch = _postflows(env, tmp_path, "address-batch", str(EXAMPLE), "--out", str(tmp_path / "out"))
    assert batch.returncode == 0, batch.stderr
    assert f"Prefect server: {api} (local)" in batch.stderr
    assert "Starting temporary server" not in batch.stderr
    summary = json_block(batch.stdout)
    runs = httpx.post(f"{api}/flow_runs/filter", json={}, timeout=10).json()
    assert [run["state_type"] for run in runs] == ["COMPLETED"]
    flow = httpx.get(f"{api}/flows/{runs[0]['flow_id']}", timeout=10).json()
    assert flow["name"] == "address-batch" and summary["accepted_rows"] == 38
    listed = subprocess.run(
        [str(Path(sys.executable).with_name("prefect")), "flow-run", "ls"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0 and runs[0]["name"] in listed.stdout, listed.stdout + listed.stderr

    stopped = _postflows(env, tmp_path, "server", "stop")
    assert stopped.returncode == 0 and f"Prefect server stopped: {api}" in stopped.stdout
    assert "Prefect profile 'ephemeral' is active again" in stopped.stdout
    assert tomllib.loads(profiles_path.read_text(encoding="utf-8"))["active"] == "ephemeral"
    gone = _postflows(env, tmp_path, "server", "status")
    assert gone.returncode == 1 and "no local Prefect server runs" in gone.stdout
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{api}/health", timeout=2)

    # The port served connections a moment ago (some of them wait in TIME_WAIT): a new start takes it at once,
    # here on every interface with the UI: the UI calls, and notifications link to, this machine by its name.
    with_ui = {**env, "PREFECT_UI_ENABLED": "true"}
    restarted = _postflows(with_ui, tmp_path, "server", "start", "--port", str(port), "--host", "0.0.0.0")
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    assert f"Prefect server started: {api}" in restarted.stdout  # this machine calls it over loopback
    named = f"http://{public_host('0.0.0.0')}:{port}"
    assert f"UI: {named} " in restarted.stdout
    ui_api = (
        httpx.get(f"http://127.0.0.1:{port}/ui-settings", timeout=10).raise_for_status().json()["api_url"]
    )
    assert ui_api == f"{named}/api" and "0.0.0.0" not in ui_api
    assert httpx.get(f"{ui_api}/health", timeout=10).status_code == 200
    pid = LocalServer.of(data_dir).state().pid  # type: ignore[union-attr]
    assert psutil.Process(pid).environ()["PREFECT_UI_URL"] == named
    assert _postflows(env, tmp_path, "server", "stop").returncode == 0


def test_the_local_server_keeps_its_runs_in_postgresql_when_told(tmp_path: Path, data_dir: Path) -> None:
    """POSTFLOWS_SERVER_DATABASE_URL (a plain postgresql:// URL, as a user writes it) puts the server's runs
    in that database, not in SQLite in the data dir."""
    import sqlalchemy

    from tests.e2e.conftest import fresh_prefect_database

    with fresh_prefect_database() as database_url:
        assert database_url is not None, (
            "POSTFLOWS_TEST_POSTGRES_URL names no server: run through `make test`"
        )
        plain = sqlalchemy.make_url(database_url).set(drivername="postgresql")
        env = {
            **base_environment(),
            "POSTFLOWS_DATA_DIR": str(data_dir),
            "POSTFLOWS_SERVER_DATABASE_URL": plain.render_as_string(hide_password=False),
            "PREFECT_HOME": str(tmp_path / "user-prefect-home"),
            "PREFECT_UI_ENABLED": "false",
        }
        port = free_port()
        started = _postflows(env, tmp_path, "server", "start", "--port", str(port))
        assert started.returncode == 0, started.stdout + started.stderr
        assert "PostgreSQL (POSTFLOWS_SERVER_DATABASE_URL)" in started.stdout
        try:
            batch = _postflows(env, tmp_path, "address-batch", str(EXAMPLE), "--out", str(tmp_path / "out"))
            assert batch.returncode == 0, batch.stderr
        finally:
            assert _postflows(env, tmp_path, "server", "stop").returncode == 0
        assert not (data_dir / "prefect-server" / "prefect.db").exists()
        engine = sqlalchemy.create_engine(database_url)
        try:
            with engine.connect() as connection:
                states = connection.exec_driver_sql("SELECT state_type FROM flow_run").scalars().all()
        finally:
            engine.dispose()
        assert states == ["COMPLETED"]


def test_concurrent_triggers_of_the_sqlite_server_are_all_taken(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs created at once from one deployment and rate-limit slots taken at once, as concurrent triggers
    and workers make them: on SQLite every request goes through (Prefect's own server answered the second
    and third of three with 503 in every round)."""
    for name, value in base_environment().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PREFECT_UI_ENABLED", "false")
    state = LocalServer.of(data_dir).start(port=free_port())

    async def rounds() -> list[tuple[list[int], list[int]]]:
        async with httpx.AsyncClient(base_url=state.api_url, timeout=60) as client:
            flow = (await client.post("/flows/", json={"name": "concurrent"})).json()["id"]
            deployment = (await client.post("/deployments/", json={"name": "d", "flow_id": flow})).json()[
                "id"
            ]
            limit = {"name": "some-api", "limit": 1000, "slot_decay_per_second": 1.0}
            assert (await client.post("/v2/concurrency_limits/", json=limit)).status_code == 201
            slot = {"names": ["some-api"], "slots": 1, "mode": "rate_limit"}
            answers = []
            for _ in range(4):
                created = await asyncio.gather(
                    *(client.post(f"/deployments/{deployment}/create_flow_run", json={}) for _ in range(3))
                )
                taken = await asyncio.gather(
                    *(client.post("/v2/concurrency_limits/increment", json=slot) for _ in range(3))
                )
                answers.append(([r.status_code for r in created], [r.status_code for r in taken]))
            return answers

    assert asyncio.run(rounds()) == [([201, 201, 201], [200, 200, 200])] * 4
