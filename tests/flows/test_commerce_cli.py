"""The commerce commands outside the flows, against the in-process sandbox: signing in over a real loopback
listener, the personal look-ups that need it, signing out, the auto-completion commands and the debounced
assistant."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from postflows.cli import app
from tests.flows.conftest import Sandbox

runner = CliRunner()
ANNAS_DOMICILE = "9d8e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a"
HANS_DOMICILE = "5b7c2f1e-3d4a-4c8b-9e6f-0a1b2c3d4e5f"


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = runner.invoke(app, list(args), input=stdin)
    return result.exit_code, result.output


@pytest.fixture
def commerce_env(flow_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # A free port each time: a loopback redirect URI matches the registered one on any port.
    monkeypatch.setenv("POSTFLOWS_COMMERCE_REDIRECT_URI", "http://127.0.0.1:0/callback")
    monkeypatch.setenv("COLUMNS", "200")
    return flow_env


def token_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "tokens").glob("commerce-login-*.json"))


def test_sign_in_keeps_the_refresh_token_privately_and_unlocks_the_personal_commands(
    sandbox: Sandbox, commerce_env: Path
) -> None:
    code, output = invoke("commerce", "addresses")
    assert code == 1 and "commerce-login" in output

    code, output = invoke("commerce-login", "--timeout", "20")
    assert code == 0, output
    assert "signed in as hans.muster" in output
    [stored] = token_files(commerce_env)
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    refresh_token = json.loads(stored.read_text())["refresh_token"]
    assert refresh_token and refresh_token not in output

    code, output = invoke("commerce", "addresses", "--json")
    assert code == 0, output
    addresses = json.loads(output[output.index("[") :])
    assert {address["type"] for address in addresses} >= {"MAIN", "DOMICILE"}
    # The server rotates refresh tokens; the store keeps the newest, so the next command still works.
    assert json.loads(stored.read_text())["refresh_token"] != refresh_token

    code, output = invoke("commerce", "address", HANS_DOMICILE)
    assert code == 0 and "Bahnhofstrasse" in output
    code, output = invoke("commerce", "address", ANNAS_DOMICILE)
    assert code == 1 and "is not the signed-in user's" in output
    code, output = invoke("commerce", "main-address")
    assert code == 0 and "MAIN" in output
    code, output = invoke("commerce", "userinfo", "--json")
    assert code == 0 and json.loads(output[output.index("{") :])["preferred_username"] == "hans.muster"

    code, output = invoke("commerce-logout")
    assert code == 0 and "signed out" in output and token_files(commerce_env) == []
    code, output = invoke("commerce", "userinfo")
    assert code == 1 and "commerce-login" in output


def test_another_account_by_login_hint(sandbox: Sandbox, commerce_env: Path) -> None:
    code, output = invoke("commerce-login", "--login-hint", "anna.beispiel", "--timeout", "20")
    assert code == 0 and "signed in as anna.beispiel" in output
    code, output = invoke("commerce", "address", ANNAS_DOMICILE)
    assert code == 0, output


@pytest.mark.parametrize(
    ("fault", "reason"), [("state", "state"), ("nonce", "nonce"), ("signature", "ID token")]
)
def test_a_sign_in_that_fails_a_check_keeps_nothing(
    sandbox: Sandbox, commerce_env: Path, fault: str, reason: str
) -> None:
    sandbox.config.commerce_id_token_fault = fault  # type: ignore[assignment]
    code, output = invoke("commerce-login", "--timeout", "20")
    assert code == 1, output
    [line] = [line for line in output.splitlines() if line.startswith("failed:")]
    assert reason in line
    assert token_files(commerce_env) == []


def test_a_redirect_uri_this_machine_cannot_listen_on_needs_the_pasted_redirect(
    sandbox: Sandbox, commerce_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_COMMERCE_REDIRECT_URI", "https://shop.example.ch/callback")
    code, output = invoke("commerce-login")
    assert code == 1 and "--redirect" in output


def test_look_ups(sandbox: Sandbox, commerce_env: Path) -> None:
    code, output = invoke("commerce", "zips", "800", "--json")
    assert code == 0, output
    zips = json.loads(output[output.index("[") :])
    assert zips and all(entry["zip"].startswith("800") for entry in zips)
    code, output = invoke("commerce", "streets", "Bahnhof", "--zip", "8001")
    assert code == 0 and "Bahnhofstrasse" in output
    code, output = invoke("commerce", "houses", "8001", "Bahnhofstrasse", "1")
    assert code == 0 and "│ 1 " in output
    code, output = invoke("commerce", "zips", "Xyzzyville")
    assert code == 0 and "0 zips" in output  # the service's 404 means no results


def test_the_assistant_waits_for_the_typing_to_stop_and_shows_the_latest_answer(
    sandbox: Sandbox, commerce_env: Path
) -> None:
    code, output = invoke("commerce", "assist", "zips", "--delay", "0.3", stdin="3\n30\n300\n3008\n")
    assert code == 0, output
    assert "1 queries sent" in output
    assert "'3008': 3008 Bern" in output
    assert "'30':" not in output
    assert sandbox.transport.count("/address/v1/zips") == 1


def test_a_real_service_needs_its_auth_url_and_credentials(
    commerce_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_COMMERCE_URL", "https://dcapi.example.test")
    code, output = invoke("commerce", "zips", "8001")
    assert code == 2
    assert "POSTFLOWS_COMMERCE_AUTH_URL" in output and "POSTFLOWS_COMMERCE_CLIENT_SECRET" in output


def test_the_sign_in_can_live_in_a_prefect_secret_block(
    sandbox: Sandbox, commerce_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect.blocks.system import Secret

    monkeypatch.setenv("POSTFLOWS_COMMERCE_TOKEN_STORE", "block:shop-login")
    code, output = invoke("commerce-login", "--timeout", "20")
    assert code == 0, output
    assert "Prefect Secret block 'shop-login'" in output
    assert token_files(commerce_env) == []
    first = Secret.load("shop-login", _sync=True).get()["refresh_token"]  # type: ignore[union-attr]

    code, output = invoke("commerce", "main-address")
    assert code == 0, output
    assert Secret.load("shop-login", _sync=True).get()["refresh_token"] != first  # type: ignore[union-attr]

    code, output = invoke("commerce-logout")
    assert code == 0 and "signed out" in output
    code, output = invoke("commerce", "main-address")
    assert code == 1 and "commerce-login" in output
