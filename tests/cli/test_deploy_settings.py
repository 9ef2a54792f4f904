"""What ``postflows deploy`` carries of its settings: the ones not secret in the deployments' job variables
(paths made absolute, the history's URL without its password, the heartbeat), the secrets apart for the
credentials block; and its refusal to deploy runs that would all fail at their start."""

from __future__ import annotations

from pathlib import Path

import pytest

from postflows.deploy_settings import DEFAULT_BLOCK, carried_settings, require_deployable
from runtime.endpoints import ConfigurationError
from runtime.settings import Settings

GIVEN = {
    "POSTFLOWS_ADDRESS_SERVICE_URL": "https://address.example/REST/v1",
    "POSTFLOWS_ADDRESS_SERVICE_USER": "tech-user",
    "POSTFLOWS_ADDRESS_SERVICE_PASSWORD": "address-pw-4711",
    "POSTFLOWS_NEWSPAPER_URL": "https://news.example",
    "POSTFLOWS_NEWSPAPER_TOKEN_URL": "https://news.example/token",
    "POSTFLOWS_NEWSPAPER_CLIENT_ID": "news-client",
    "POSTFLOWS_NEWSPAPER_CLIENT_SECRET": "news-secret-0815",
    "POSTFLOWS_DATABASE_URL": "postgresql+psycopg://history:db-pw-1234@db.example:5432/postflows",
    "POSTFLOWS_DATA_DIR": "relative/data",
    "POSTFLOWS_HTTP_MAX_ATTEMPTS": "6",
    "POSTFLOWS_SANDBOX_CONTROL_TOKEN": "control-token-99",
}
SECRETS = ("address-pw-4711", "news-secret-0815", "db-pw-1234", "control-token-99")


def _given(monkeypatch: pytest.MonkeyPatch, values: dict[str, str]) -> Settings:
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return Settings()


def test_settings_not_secret_go_to_the_job_variables_and_secrets_to_the_block(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("PREFECT_RUNNER_HEARTBEAT_FREQUENCY", raising=False)
    carried = carried_settings(_given(monkeypatch, GIVEN))
    env = carried.env
    assert env["POSTFLOWS_ADDRESS_SERVICE_URL"] == "https://address.example/REST/v1"
    assert env["POSTFLOWS_ADDRESS_SERVICE_USER"] == "tech-user"
    assert env["POSTFLOWS_NEWSPAPER_TOKEN_URL"] == "https://news.example/token"
    assert env["POSTFLOWS_NEWSPAPER_CLIENT_ID"] == "news-client"
    assert env["POSTFLOWS_DATABASE_URL"] == "postgresql+psycopg://history@db.example:5432/postflows"
    assert env["POSTFLOWS_DATA_DIR"] == str(tmp_path / "relative" / "data")  # the runs start elsewhere
    assert env["POSTFLOWS_HTTP_MAX_ATTEMPTS"] == "6"
    assert env["PREFECT_RUNNER_HEARTBEAT_FREQUENCY"] == "30"
    assert env["POSTFLOWS_CREDENTIALS_BLOCK"] == DEFAULT_BLOCK == carried.block
    assert "POSTFLOWS_SANDBOX" not in env
    assert not any(secret in text for secret in SECRETS for text in (*env.values(), *carried.lines()))
    assert {name: value.get_secret_value() for name, value in carried.secrets.items()} == {
        "address_service_password": "address-pw-4711",
        "newspaper_client_secret": "news-secret-0815",
        "database_password": "db-pw-1234",
    }
    assert carried.left_out == ("POSTFLOWS_SANDBOX_CONTROL_TOKEN (a secret the runs do not need)",)
    # Settings read back from what is carried (the block filling the secrets) are the deploying machine's.
    ours = {
        name.removeprefix("POSTFLOWS_").lower(): text for name, text in env.items() if "POSTFLOWS_" in name
    }
    worker = Settings(**ours, database_password="db-pw-1234")  # type: ignore[arg-type]
    assert worker.effective_database_url == GIVEN["POSTFLOWS_DATABASE_URL"]


def test_sandbox_the_heartbeat_given_and_a_named_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFECT_RUNNER_HEARTBEAT_FREQUENCY", "15")
    settings = _given(
        monkeypatch,
        {"POSTFLOWS_CREDENTIALS_BLOCK": "ops-credentials", "POSTFLOWS_COMMERCE_CLIENT_SECRET": "c-secret-77"},
    )
    carried = carried_settings(settings, sandbox=True)
    assert carried.env["POSTFLOWS_SANDBOX"] == "1"
    assert carried.env["PREFECT_RUNNER_HEARTBEAT_FREQUENCY"] == "15"
    assert carried.block == carried.env["POSTFLOWS_CREDENTIALS_BLOCK"] == "ops-credentials"
    assert "c-secret-77" not in str(carried.env)
    for name in ("POSTFLOWS_CREDENTIALS_BLOCK", "POSTFLOWS_COMMERCE_CLIENT_SECRET"):
        monkeypatch.delenv(name)
    nothing = carried_settings(Settings())
    assert nothing.block is None and nothing.secrets == {}
    # The tests set POSTFLOWS_DATA_DIR (tests/conftest.py): given, it is carried.
    assert set(nothing.env) == {"PREFECT_RUNNER_HEARTBEAT_FREQUENCY", "POSTFLOWS_DATA_DIR"}


def test_a_setting_whose_value_holds_a_password_is_not_carried(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _given(monkeypatch, {"POSTFLOWS_NEWSPAPER_URL": "https://user:url-pw-5@news.example"})
    carried = carried_settings(settings, sandbox=True)
    assert "POSTFLOWS_NEWSPAPER_URL" not in carried.env
    assert carried.left_out == ("POSTFLOWS_NEWSPAPER_URL (its value holds a password)",)


def test_deploying_with_no_service_url_is_refused_unless_the_sandbox_is_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigurationError) as refused:
        require_deployable(Settings(), sandbox=False)
    for name in (
        "POSTFLOWS_ADDRESS_SERVICE_URL",
        "POSTFLOWS_NEWSPAPER_URL",
        "POSTFLOWS_COMMERCE_URL",
        "POSTFLOWS_SANDBOX",
        "--sandbox",
    ):
        assert name in str(refused.value)
    require_deployable(Settings(), sandbox=True)
    require_deployable(Settings(sandbox=True), sandbox=False)
    one = Settings(address_service_url="https://address.example/REST/v1", address_service_user="u")
    with pytest.raises(ConfigurationError, match="POSTFLOWS_ADDRESS_SERVICE_PASSWORD must be set"):
        require_deployable(one, sandbox=False)  # a URL set: its service's settings are checked
    require_deployable(one.model_copy(update={"credentials_block": "ops"}), sandbox=False)
