"""The settings: one model per API, set by the variables users always set (``POSTFLOWS_COMMERCE_URL``) or
by their nested form (``POSTFLOWS_COMMERCE__URL``), from the environment, ``.env`` or keyword arguments; a
configuration a client cannot be built from is refused naming the variable, with exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from connectors.commerce import CommercePaths, CommerceScopes
from core import environment
from core.errors import PostflowsError
from runtime import wiring
from runtime.settings import Settings


def test_every_variable_has_one_name_and_says_what_it_sets() -> None:
    names = [variable.name for variable in Settings.variables()]
    assert len(names) == len(set(names))
    assert all(name.startswith("POSTFLOWS_") and name.isupper() for name in names)
    assert all(variable.description for variable in Settings.variables())
    assert {
        "POSTFLOWS_ADDRESS_PSTAT_MEANINGS",
        "POSTFLOWS_COMMERCE_SCOPES",
        "POSTFLOWS_COMMERCE_ADDRESS_PATH",
    } <= {*names}


def test_the_commerce_paths_and_scopes_are_the_connectors_own() -> None:
    defaults = Settings(_env_file=None)  # type: ignore[call-arg]
    assert defaults.commerce.paths == CommercePaths()
    assert defaults.commerce.scopes == CommerceScopes()


def test_flat_and_nested_variables_set_the_same_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTFLOWS_COMMERCE_URL", "https://commerce.example.test")
    monkeypatch.setenv("POSTFLOWS_COMMERCE__CLIENT_ID", "nested-client")
    monkeypatch.setenv("postflows_commerce_pickup_path", "/pickpost/v1/")
    monkeypatch.setenv("POSTFLOWS_COMMERCE_PICKUP_POINTS_METHOD", "get")
    monkeypatch.setenv("POSTFLOWS_COMMERCE_SCOPE_PICKUP", "PICKUP_SCOPE")
    monkeypatch.setenv("POSTFLOWS_COMMERCE_SCOPES", "openid")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_PSTAT_MEANINGS", '{"1": "exists"}')
    monkeypatch.setenv("POSTFLOWS_NEWSPAPER_RATE_PER_MINUTE", "60")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    commerce = settings.commerce
    assert commerce.url == "https://commerce.example.test" and commerce.client_id == "nested-client"
    assert commerce.paths.pickup == "/pickpost/v1" and commerce.paths.pickup_points_method == "GET"
    assert commerce.scopes.pickup == "PICKUP_SCOPE" and commerce.login_scopes == "openid"
    assert settings.address_service.pstat_meanings == {1: "exists"}
    assert settings.newspaper.rate_per_minute == 60


def test_a_dot_env_file_and_keyword_arguments_use_the_same_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        "POSTFLOWS_NEWSPAPER_URL=https://dot-env.example.test\nPOSTFLOWS_NEWSPAPER_CLIENT_ID=from-file\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("POSTFLOWS_NEWSPAPER_CLIENT_ID", "from-environment")
    settings = Settings(newspaper_token_url="https://auth.example.test/token")  # type: ignore[call-arg]
    assert settings.newspaper.url == "https://dot-env.example.test"
    assert settings.newspaper.client_id == "from-environment"  # the environment wins over .env
    assert settings.newspaper.token_url == "https://auth.example.test/token"
    assert environment.value("newspaper_client_id") == "from-environment"
    assert environment.value("newspaper_url") == "https://dot-env.example.test"


def test_a_missing_credential_is_a_configuration_error_naming_its_variable() -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        commerce_url="https://commerce.example.test",
        commerce_auth_url="https://auth.example.test",
        commerce_client_id="client",
    )
    with pytest.raises(wiring.ConfigurationError) as refused:
        wiring.commerce_client(settings)
    assert "POSTFLOWS_COMMERCE_CLIENT_SECRET" in str(refused.value)
    assert isinstance(refused.value, PostflowsError) and refused.value.exit_code == 2


def test_the_resolver_gives_the_sandbox_or_the_configured_service() -> None:
    sandbox = wiring.resolve(Settings(_env_file=None), "newspaper")  # type: ignore[call-arg]
    assert sandbox.sandbox and sandbox.token_url is not None
    real = wiring.resolve(
        Settings(
            _env_file=None,  # type: ignore[call-arg]
            address_service_url="https://addresses.example.test/REST/v1",
            address_service_user="user",
            address_service_password=SecretStr("pw"),
        ),
        "address-service",
    )
    assert not real.sandbox and real.user == "user" and real.secret.get_secret_value() == "pw"
