"""Credentials from a Prefect Block: they fill what the environment leaves unset and stay secret."""

from __future__ import annotations

import base64

import httpx
import pytest
from pydantic import SecretStr

from runtime.blocks import PostflowsCredentials
from runtime.settings import get_settings
from runtime.wiring import address_service_client


def test_block_fills_unset_credentials_and_the_environment_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    PostflowsCredentials(
        address_service_user="block-user",
        address_service_password=SecretStr("block-password"),
        newspaper_client_id="block-client",
        newspaper_client_secret=SecretStr("block-secret"),
    ).save("postflows-test", overwrite=True)
    monkeypatch.setenv("POSTFLOWS_CREDENTIALS_BLOCK", "postflows-test")
    monkeypatch.setenv("POSTFLOWS_NEWSPAPER_CLIENT_ID", "env-client")

    settings = get_settings()
    assert settings.address_service.user == "block-user"
    assert settings.address_service.password is not None
    assert settings.address_service.password.get_secret_value() == "block-password"
    assert settings.newspaper.client_id == "env-client"
    assert "block-password" not in repr(settings) and "block-secret" not in repr(settings)

    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_URL", "https://addresses.example.test/REST/v1")
    client = address_service_client(get_settings())
    assert client._auth is not None
    sent = next(client._auth.sync_auth_flow(httpx.Request("GET", "https://addresses.example.test/")))
    scheme, _, credentials = sent.headers["Authorization"].partition(" ")
    assert scheme == "Basic" and base64.b64decode(credentials) == b"block-user:block-password"
    assert "block-password" not in repr(client) and "block-password" not in repr(client._auth)


def test_without_a_block_name_nothing_is_loaded() -> None:
    settings = get_settings()
    assert settings.credentials_block is None and settings.address_service.user is None


async def test_block_loads_inside_a_running_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    await PostflowsCredentials(address_service_user="loop-user").asave("postflows-loop", overwrite=True)
    monkeypatch.setenv("POSTFLOWS_CREDENTIALS_BLOCK", "postflows-loop")
    assert get_settings().address_service.user == "loop-user"
