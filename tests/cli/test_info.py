"""The data dir defaults to the user's data directory, wherever a command starts; ``postflows info`` says
where everything is."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest
from typer.testing import CliRunner

from postflows.cli import app
from runtime.settings import Settings

runner = CliRunner()


@pytest.fixture
def user_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No POSTFLOWS_DATA_DIR: the data dir is the user's data directory (XDG_DATA_HOME on Linux)."""
    monkeypatch.delenv("POSTFLOWS_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    for name in ("PREFECT_API_URL", "PREFECT_PROFILE", "PREFECT_PROFILES_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    return Path(platformdirs.user_data_dir("postflows", appauthor=False))


def test_the_default_data_dir_does_not_depend_on_the_working_directory(
    user_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert user_data == tmp_path / "xdg" / "postflows"
    seen = set()
    for place in ("cli", "worker"):
        (tmp_path / place).mkdir()
        monkeypatch.chdir(tmp_path / place)
        seen.add((Settings().data_dir, Settings().effective_database_url))
    assert seen == {(user_data, f"sqlite:///{user_data / 'history.db'}")}


def test_the_environment_still_chooses_the_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POSTFLOWS_DATA_DIR", str(tmp_path / "elsewhere"))
    assert Settings().data_dir == tmp_path / "elsewhere"


def _info() -> dict[str, str]:
    result = runner.invoke(app, ["info"])
    assert result.exit_code == 0, result.output
    return {
        label: value.strip()
        for label, _, value in (line.partition(":") for line in result.output.splitlines())
    }


def test_info_on_a_fresh_machine(user_data: Path) -> None:
    info = _info()
    assert info["data dir"] == f"{user_data} (the user's data directory)"
    assert info["run history"] == f"sqlite:///{user_data / 'history.db'} (SQLite in the data dir)"
    assert info["Prefect API"].startswith("none running: each flow command starts a temporary server")
    assert info["address service"] == "sandbox (embedded; POSTFLOWS_ADDRESS_SERVICE_URL is not set)"
    assert info["newspaper API"] == "sandbox (embedded; POSTFLOWS_NEWSPAPER_URL is not set)"
    assert info["commerce API"] == "sandbox (embedded; POSTFLOWS_COMMERCE_URL is not set)"
    assert info["commerce sign-in"].startswith(str(user_data / "tokens" / "commerce-login-"))
    assert info["automations"].startswith("postflows-crash-silent-runs, postflows-retry-crashed-runs (")
    assert info["automations"].endswith("POSTFLOWS_NOTIFY_BLOCK unset)")
    assert not user_data.exists()  # info looks, it creates nothing


def test_info_says_when_sandbox_0_refuses_the_sandbox(
    user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_SANDBOX", "0")
    info = _info()
    assert info["newspaper API"] == (
        "none: POSTFLOWS_NEWSPAPER_URL is not set and POSTFLOWS_SANDBOX=0 refuses the embedded sandbox"
    )


def test_info_names_the_failure_announcements(user_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTFLOWS_NOTIFY_BLOCK", "slack-webhook/operations")
    automations = _info()["automations"]
    assert "postflows-notify-failures" in automations
    assert "failures announced through 'slack-webhook/operations'" in automations


def test_info_with_real_endpoints_a_shared_history_and_a_prefect_server(
    user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "POSTFLOWS_DATABASE_URL", "postgresql+psycopg://postflows:s3cret@db.example.test/postflows"
    )
    monkeypatch.setenv("PREFECT_API_URL", "http://prefect.example.test/api")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_URL", "https://addresses.example.test/REST/v1")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_USER", "tech")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_PASSWORD", "pw-not-shown")
    monkeypatch.setenv("POSTFLOWS_NEWSPAPER_URL", "https://newspaper.example.test")
    monkeypatch.setenv("POSTFLOWS_COMMERCE_TOKEN_STORE", "block:team-login")
    result = runner.invoke(app, ["info"])
    assert "s3cret" not in result.output and "pw-not-shown" not in result.output
    info = _info()
    assert info["run history"] == (
        "postgresql+psycopg://postflows:***@db.example.test/postflows (POSTFLOWS_DATABASE_URL)"
    )
    assert info["Prefect API"] == "http://prefect.example.test/api (PREFECT_API_URL)"
    assert info["address service"] == "real: https://addresses.example.test/REST/v1"
    assert info["newspaper API"].startswith("real: https://newspaper.example.test — not usable: ")
    assert "POSTFLOWS_NEWSPAPER_TOKEN_URL" in info["newspaper API"]
    assert info["commerce sign-in"] == "Prefect Secret block 'team-login'"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql+psycopg://postflows@db.example.test/postflows?password=Qu3ry-Pw%21&sslmode=require",
            "postgresql+psycopg://postflows@db.example.test/postflows?password=***&sslmode=require",
        ),
        (
            "mssql+pyodbc://db.example.test/postflows?driver=ODBC+Driver+18&UID=app&PWD=Qu3ry-Pw!",
            "mssql+pyodbc://db.example.test/postflows?driver=ODBC+Driver+18&UID=app&PWD=***",
        ),
        (
            "postgresql://app:Qu3ry-Pw!@db.example.test/postflows?sslpassword=Qu3ry-Pw!",
            "postgresql://app:***@db.example.test/postflows?sslpassword=***",
        ),
    ],
)
def test_info_masks_a_password_wherever_the_history_url_holds_it(
    user_data: Path, monkeypatch: pytest.MonkeyPatch, url: str, shown: str
) -> None:
    monkeypatch.setenv("POSTFLOWS_DATABASE_URL", url)
    monkeypatch.setenv(
        "POSTFLOWS_ADDRESS_SERVICE_URL", "https://svc:Qu3ry-Pw!@addresses.example.test/REST/v1?token=x1"
    )
    result = runner.invoke(app, ["info"])
    assert result.exit_code == 0, result.output
    assert "Qu3ry-Pw" not in result.output
    info = _info()
    assert info["run history"] == f"{shown} (POSTFLOWS_DATABASE_URL)"
    assert info["address service"].startswith(
        "real: https://svc:***@addresses.example.test/REST/v1?token=***"
    )
