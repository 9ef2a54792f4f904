"""The ``/_sandbox`` control endpoints answer in-process and on loopback; elsewhere only with the control
token, and a wrong token is refused everywhere. Every control route of the app is checked, mounts included,
so a new one cannot slip past the guard."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr
from starlette.routing import Mount, Route

from sandbox.app import create_app
from sandbox.config import SandboxConfig
from sandbox.control import CONTROL_TOKEN_HEADER, is_loopback
from sandbox.inprocess import SANDBOX_ORIGIN, SandboxTransport

TOKEN = "control-token-4f1c9e"
FAULT = {"api": "address", "endpoint": "ping", "kind": "http_status", "value": 503}


def _control_routes(app: FastAPI, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(method, path) of every route under a ``_sandbox`` segment, in the app and its mounts."""
    for route in app.routes:
        if isinstance(route, Mount):
            yield from _control_routes(route.app, prefix + route.path)  # type: ignore[arg-type]
        elif isinstance(route, Route) and "_sandbox" in route.path.split("/"):
            for method in sorted(route.methods or ()):
                if method != "HEAD":
                    yield method, prefix + route.path


def _client(config: SandboxConfig, **headers: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=SandboxTransport(config), base_url=SANDBOX_ORIGIN, headers=headers)


async def _answers(config: SandboxConfig, **headers: str) -> dict[tuple[str, str], httpx.Response]:
    """Every control route's answer (PUTs send an empty JSON list: what matters is whether it is let in)."""
    routes = list(_control_routes(create_app(config)))
    async with _client(config, **headers) as http:
        return {
            (method, path): await http.request(method, path, json=[] if method == "PUT" else None)
            for method, path in routes
        }


def test_every_control_route_is_found() -> None:
    routes = {path for _, path in _control_routes(create_app(SandboxConfig()))}
    assert {
        "/_sandbox/faults",
        "/_sandbox/requests",
        "/auth/_sandbox/tokens",
        "/auth/_sandbox/revoke",
        "/auth/_sandbox/revoke-refresh-tokens",
        "/auth/_sandbox/id-token-fault",
        "/newspaper/_sandbox/received",
    } <= routes


@pytest.mark.parametrize("host", [None, "127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
async def test_in_process_and_on_loopback_every_control_route_answers(host: str | None) -> None:
    answers = await _answers(SandboxConfig(listen_host=host))
    assert answers and all(response.status_code != 403 for response in answers.values()), answers


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "sandbox.example"])
async def test_off_loopback_every_control_route_is_refused_without_the_token(host: str) -> None:
    config = SandboxConfig(listen_host=host)
    answers = await _answers(config)
    assert answers and all(response.status_code == 403 for response in answers.values()), answers
    detail = next(iter(answers.values())).json()["detail"]
    assert f"listens on {host}" in detail
    assert "POSTFLOWS_SANDBOX_CONTROL_TOKEN" in detail and CONTROL_TOKEN_HEADER in detail
    # The APIs themselves answer as before, and the refused requests changed and counted nothing.
    async with _client(config) as http:
        ping = await http.get("/address/REST/v1/ping", auth=("sandbox-user", "sandbox-password"))
    assert ping.status_code == 200
    assert config.faults.rules == []


async def test_off_loopback_the_right_token_opens_every_control_route() -> None:
    config = SandboxConfig(listen_host="0.0.0.0", control_token=SecretStr(TOKEN))
    refused = await _answers(config)
    assert all(response.status_code == 403 for response in refused.values())
    assert (
        "send the token set by POSTFLOWS_SANDBOX_CONTROL_TOKEN"
        in next(iter(refused.values())).json()["detail"]
    )
    answers = await _answers(config, **{CONTROL_TOKEN_HEADER: TOKEN})
    assert all(response.status_code != 403 for response in answers.values()), answers

    async with _client(config, **{CONTROL_TOKEN_HEADER: TOKEN}) as http:
        assert (await http.put("/_sandbox/faults", json=[FAULT])).status_code == 200
        counts = (await http.get("/_sandbox/requests")).json()
    assert [rule.kind for rule in config.faults.rules] == ["http_status"]
    assert counts == []  # control requests are not requests to the APIs


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
@pytest.mark.parametrize("configured", [TOKEN, None])
async def test_a_wrong_token_is_refused_wherever_the_sandbox_listens(
    host: str, configured: str | None
) -> None:
    config = SandboxConfig(listen_host=host, control_token=SecretStr(configured) if configured else None)
    answers = await _answers(config, **{CONTROL_TOKEN_HEADER: TOKEN[:-1] + "0"})
    assert all(response.status_code == 403 for response in answers.values()), answers
    detail = next(iter(answers.values())).json()["detail"]
    assert TOKEN not in detail
    assert ("wrong " + CONTROL_TOKEN_HEADER) in detail if configured else "has no control token" in detail
    async with _client(config, **{CONTROL_TOKEN_HEADER: "nope"}) as http:
        assert (await http.put("/_sandbox/faults", json=[FAULT])).status_code == 403
    assert config.faults.rules == []


def test_the_token_does_not_show_in_the_config() -> None:
    config = SandboxConfig(listen_host="0.0.0.0", control_token=SecretStr(TOKEN))
    assert TOKEN not in repr(config) and TOKEN not in str(config)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("::1", True), ("localhost", True), ("0.0.0.0", False), ("10.0.0.1", False)],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
