"""Which Prefect API a flow command reports to, decided before Prefect is imported."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from postflows.prefect_api import choose_api, configured_api_url


@pytest.fixture(autouse=True)
def _no_prefect_configuration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("PREFECT_API_URL", "PREFECT_PROFILE", "PREFECT_PROFILES_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))


def test_the_environment_wins_and_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://prefect.example.test/api")
    assert choose_api(tmp_path) == "Prefect server: http://prefect.example.test/api (PREFECT_API_URL)"
    assert os.environ["PREFECT_API_URL"] == "http://prefect.example.test/api"


def test_the_active_profile_counts_as_configured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = tmp_path / "prefect-home"
    home.mkdir()
    (home / "profiles.toml").write_text(
        'active = "team"\n[profiles.team]\nPREFECT_API_URL = "http://team.example.test/api"\n'
        '[profiles.other]\nPREFECT_API_URL = "http://other.example.test/api"\n'
    )
    assert configured_api_url() == ("http://team.example.test/api", "Prefect profile 'team'")
    monkeypatch.setenv("PREFECT_PROFILE", "other")
    assert choose_api(tmp_path) == "Prefect server: http://other.example.test/api (Prefect profile 'other')"
    assert "PREFECT_API_URL" not in os.environ


def test_without_a_local_server_a_temporary_one_is_announced(tmp_path: Path) -> None:
    assert choose_api(tmp_path).startswith("Prefect server: a temporary one for this run")
    assert "PREFECT_API_URL" not in os.environ


class _EndedProcess:
    """Stands in for the server's process: records how it was started, and has already ended."""

    started: list[tuple[list[str], dict[str, str]]] = []
    returncode = 3

    def __init__(self, args: list[str], *, env: dict[str, str], stdin: object) -> None:
        self.started.append((args, env))

    def poll(self) -> int:
        return self.returncode


def test_before_prefect_is_imported_the_temporary_server_starts_at_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from postflows import prefect_api

    monkeypatch.delitem(sys.modules, "prefect", raising=False)  # as in a fresh `postflows` process
    monkeypatch.setattr(prefect_api.subprocess, "Popen", _EndedProcess)
    monkeypatch.setattr(prefect_api, "_temporary", None)
    monkeypatch.setattr(prefect_api, "_start_early", False)
    assert "a temporary one for this run (" in choose_api(tmp_path)  # not the script: Prefect starts it
    assert not _EndedProcess.started and "PREFECT_API_URL" not in os.environ
    prefect_api.start_temporary_server_early()  # as the `postflows` script does
    monkeypatch.setattr(prefect_api.atexit, "register", lambda function: function)

    line = choose_api(tmp_path)

    url = os.environ.pop("PREFECT_API_URL")  # what Prefect will report to once it is imported
    assert os.environ.pop("PREFECT_UI_URL") == ""  # no "View at" links to a server without a UI
    assert line.startswith(f"Prefect server: a temporary one for this run at {url} ")
    [(args, env)] = _EndedProcess.started
    assert args[1:5] == ["-m", "uvicorn", "--factory", "prefect.server.api.server:create_app"]
    assert url == f"http://127.0.0.1:{args[args.index('--port') + 1]}/api"
    assert "PREFECT_API_URL" not in env and env["PREFECT_UI_ENABLED"] == "0"
    with pytest.raises(prefect_api.ServerError, match="ended with exit code 3 before it answered"):
        prefect_api.wait_for_temporary_server()
