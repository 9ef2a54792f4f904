"""``postflows doctor`` on the embedded sandbox: the settings, the run history and the Prefect API without
``--live``; with it the sandbox is asked (nothing billed, nothing left), every observable guess of the
register is reported, and ``doctor.json`` is strict JSON. A failure names the API, what it answered and the
setting to change, with exit 1."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import history
from connectors.guesses import GUESSES
from postflows.cli import app
from postflows.cli_doctor import ApiName
from postflows.doctor import APIS

runner = CliRunner()
OBSERVABLE = {guess.id for guess in GUESSES if guess.observable}


@pytest.fixture(autouse=True)
def _no_prefect_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No Prefect API configured: neither the environment nor a profile names one."""
    for name in ("PREFECT_API_URL", "PREFECT_PROFILE", "PREFECT_PROFILES_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    monkeypatch.setenv("COLUMNS", "250")


def _strict(text: str) -> dict[str, Any]:
    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    parsed: dict[str, Any] = json.loads(text, parse_constant=refuse)
    return parsed


def _doctor(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["doctor", *args])
    return result.exit_code, result.output


def test_the_api_option_names_the_apis_the_doctor_checks() -> None:
    assert tuple(name.value for name in ApiName) == APIS


def test_without_live_nothing_is_asked_and_every_api_says_it_is_the_sandbox(tmp_path: Path) -> None:
    code, output = _doctor()
    assert code == 0, output
    lines = output.splitlines()
    assert "address service: embedded sandbox (POSTFLOWS_ADDRESS_SERVICE_URL is not set)" in lines
    assert "newspaper API: embedded sandbox (POSTFLOWS_NEWSPAPER_URL is not set)" in lines
    assert "commerce API: embedded sandbox (POSTFLOWS_COMMERCE_URL is not set)" in lines
    history_db = tmp_path / "data" / "history.db"
    assert f"run history: sqlite:///{history_db}: reachable, no run recorded yet" in lines
    assert any(line.startswith("Prefect API: none configured (PREFECT_API_URL is not set)") for line in lines)
    assert "every check passed" in output
    assert not any(" ping:" in line or "token " in line for line in lines)
    assert not (tmp_path / "doctor.json").exists()
    assert not (tmp_path / "data" / "sandbox").exists()  # the sandbox was not even started


def test_live_on_the_embedded_sandbox_reports_every_observable_guess(tmp_path: Path) -> None:
    code, output = _doctor("--live", "--out", str(tmp_path / "report"))
    assert code == 0, output
    lines = output.splitlines()
    assert "  ping: HTTP 200, JSON with Status 0" in lines
    assert any(line.startswith("  createfile: sign-in accepted, file ") for line in lines)
    assert any(
        line.startswith("  deletefile: file ") and line.endswith("deleted (HTTP 200, JSON with Status 0)")
        for line in lines
    )
    assert (
        "  guess address-service.ping-body: GET /ping: HTTP 200, JSON with Status 0 — our guess holds: "
        '`{"Status": 0}`' in lines
    )
    assert "  token SENDINGS_NEWSPAPER_ADDRESS: issued (HTTP 200)" in lines
    assert "  token DCAPI_ADDRESS_READ: issued (HTTP 200)" in lines
    assert not any("DCAPI_ADDRESS_READ" in line and "personal" in line for line in lines)
    assert any(line.startswith("  zips: GET /address/v1/zips?zipCity=8001: ") for line in lines)

    report = _strict((tmp_path / "report" / "doctor.json").read_text(encoding="utf-8"))
    assert report["live"] is True and report["ok"] is True
    assert set(report["apis"]) == set(APIS)
    observed = {guess: seen for api in report["apis"].values() for guess, seen in api["guesses"].items()}
    assert set(observed) == OBSERVABLE
    # A sign-in the sandbox accepts shows nothing of how a refusal is answered; every other guess holds.
    assert observed.pop("address-service.failure-http-status")["holds"] is None
    assert {guess: seen["holds"] for guess, seen in observed.items()} == dict.fromkeys(observed, True)
    for api in report["apis"].values():
        assert api["sandbox"] is True and api["reachable"] is True and api["ok"] is True
        assert all(check["ok"] for check in api["checks"])
    assert report["local"]["run history"]["ok"] is True

    # Nothing was left on the service, and nothing recorded: the file made was deleted again.
    with history.session_factory(f"sqlite:///{tmp_path / 'data' / 'history.db'}")() as session:
        assert history.list_runs(session, limit=5) == []


def test_api_option_checks_only_the_apis_named(tmp_path: Path) -> None:
    code, output = _doctor("--live", "--api", "newspaper", "--api", "commerce")
    assert code == 0, output
    assert "address service" not in output
    report = _strict((tmp_path / "doctor.json").read_text(encoding="utf-8"))
    assert list(report["apis"]) == ["newspaper", "commerce"]


def test_a_real_service_without_its_credentials_or_assistant_url_fails_naming_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_URL", "https://address.example.test/REST/v1")
    code, output = _doctor("--api", "address-service")
    assert code == 1, output
    assert (
        "failed: address service: POSTFLOWS_ADDRESS_SERVICE_USER, POSTFLOWS_ADDRESS_SERVICE_PASSWORD must be "
        "set when POSTFLOWS_ADDRESS_SERVICE_URL points at a real service (https://address.example.test/REST/v1)"
    ) in output
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_USER", "someone")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_PASSWORD", "pa55-w0rd-of-someone")
    code, output = _doctor("--api", "address-service")
    assert code == 1, output
    assert "failed: address service: POSTFLOWS_ADDRESS_ASSISTANT_URL must be set" in output
    monkeypatch.setenv("POSTFLOWS_ADDRESS_ASSISTANT_URL", "https://assistant.example.test/REST/v1")
    code, output = _doctor("--api", "address-service")
    assert code == 0, output
    assert "  settings: complete" in output.splitlines()
    assert "pa55-w0rd-of-someone" not in output


def test_sandbox_0_fails_the_settings_of_an_api_without_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTFLOWS_SANDBOX", "0")
    code, output = _doctor("--api", "newspaper")
    assert code == 1, output
    assert (
        "  settings: POSTFLOWS_NEWSPAPER_URL is not set and POSTFLOWS_SANDBOX=0 refuses the embedded sandbox"
    ) in output


def test_newspaper_and_commerce_need_their_token_and_auth_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTFLOWS_NEWSPAPER_URL", "https://newspaper.example.test")
    monkeypatch.setenv("POSTFLOWS_COMMERCE_URL", "https://commerce.example.test")
    code, output = _doctor("--api", "newspaper", "--api", "commerce")
    assert code == 1, output
    failures = [line for line in output.splitlines() if line.startswith("failed: ")]
    assert len(failures) == 2, output
    assert failures[0].startswith("failed: newspaper API: POSTFLOWS_NEWSPAPER_TOKEN_URL, ")
    assert failures[1].startswith("failed: commerce API: POSTFLOWS_COMMERCE_AUTH_URL, ")


def test_a_history_that_cannot_be_reached_is_one_line_naming_its_masked_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = _closed_port()
    monkeypatch.setenv(
        "POSTFLOWS_DATABASE_URL", f"postgresql+psycopg://postflows:db-pa55word@127.0.0.1:{port}/runs"
    )
    code, output = _doctor("--api", "commerce")
    assert code == 1, output
    failed = [line for line in output.splitlines() if line.startswith("failed: run history: ")]
    assert len(failed) == 1, output
    assert failed[0].startswith(
        f"failed: run history: postgresql+psycopg://postflows:***@127.0.0.1:{port}/runs cannot be reached ("
    )
    assert failed[0].endswith("— check POSTFLOWS_DATABASE_URL")
    assert "db-pa55word" not in output


def test_a_configured_prefect_api_must_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    port = _closed_port()
    monkeypatch.setenv("PREFECT_API_URL", f"http://127.0.0.1:{port}/api")
    code, output = _doctor("--api", "commerce")
    assert code == 1, output
    assert (
        f"failed: Prefect API: http://127.0.0.1:{port}/api (PREFECT_API_URL) does not answer its health "
        "check — check PREFECT_API_URL"
    ) in output


def test_a_file_the_service_does_not_delete_is_named_and_recorded_for_cleanup(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(
        "POSTFLOWS_SANDBOX_FAULTS",
        json.dumps(
            [
                {
                    "api": "address",
                    "endpoint": "deletefile/*",
                    "kind": "service_status",
                    "value": 302,
                    "times": 2,
                }
            ]
        ),
    )
    code, output = _doctor("--live", "--api", "address-service")
    assert code == 1, output
    with history.session_factory(f"sqlite:///{tmp_path / 'data' / 'history.db'}")() as session:
        (left,) = history.undeleted_files(session, kinds=("output-file",), api="address-service")
        assert left.run.flow == "doctor" and left.run.state == "FAILED"
    token = left.remote_id
    assert (
        f"failed: address service (embedded sandbox): the file {token} made by createfile could not be "
        "deleted: address-service: deletefile failed with Status 302 DatabaseItemNotFound: error accessing "
        "the database — it is recorded in the run history: `postflows cleanup --older-than 0` asks the "
        "service again"
    ) in output
    report = _strict((tmp_path / "doctor.json").read_text(encoding="utf-8"))
    guess = report["apis"]["address-service"]["guesses"]["address-service.deletefile-302"]
    assert guess == {
        "holds": False,
        "seen": "GET /deletefile of the file just made: HTTP 200, JSON with Status 302, asked again: "
        "HTTP 200, JSON with Status 302",
    }


def test_a_302_that_passes_is_asked_again_and_the_file_deleted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first deletefile answered 302 (the guess address-service.deletefile-302: it may pass): the doctor
    asks once more for its own file, and a Status 0 then deletes it; nothing is left to clean up."""
    monkeypatch.setenv(
        "POSTFLOWS_SANDBOX_FAULTS",
        json.dumps([{"api": "address", "endpoint": "deletefile/*", "kind": "service_status", "value": 302}]),
    )
    code, output = _doctor("--live", "--api", "address-service")
    assert code == 0, output
    assert "asked again: HTTP 200, JSON with Status 0 — our guess holds" in output


def test_a_refused_sign_in_names_the_credentials_and_how_it_was_answered(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(
        "POSTFLOWS_SANDBOX_FAULTS",
        json.dumps([{"api": "address", "endpoint": "createfile", "kind": "http_status", "value": 401}]),
    )
    code, output = _doctor("--live", "--api", "address-service")
    assert code == 1, output
    assert (
        "failed: address service (embedded sandbox): sign-in refused (HTTP 401) — check "
        "POSTFLOWS_ADDRESS_SERVICE_USER / POSTFLOWS_ADDRESS_SERVICE_PASSWORD"
    ) in output
    report = _strict((tmp_path / "doctor.json").read_text(encoding="utf-8"))
    address = report["apis"]["address-service"]
    assert address["reachable"] is True and address["ok"] is False
    assert address["guesses"]["address-service.failure-http-status"]["holds"] is False
    assert address["guesses"]["address-service.failure-http-status"]["seen"].startswith(
        "the sign-in was refused with HTTP 401"
    )
    assert address["guesses"]["address-service.deletefile-302"]["holds"] is None


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_out_that_is_a_file_is_refused_before_anything_is_asked(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    code, output = _doctor("--live", "--out", "a-file")
    assert code == 2, output
    assert output.strip() == "refused: a-file: --out is a file, not a directory"
    assert not (tmp_path / "data" / "sandbox").exists()


def test_a_service_that_assigns_its_scopes_otherwise_fails_naming_the_scope_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("POSTFLOWS_SANDBOX_GUESSES", "other")  # look-ups need DCAPI_ADDRESS_AUTOCOMPLETE
    code, output = _doctor("--live", "--api", "commerce")
    assert code == 1, output
    (failed,) = [line for line in output.splitlines() if line.startswith("failed: ")]
    assert failed.startswith(
        "failed: commerce API (embedded sandbox): GET /address/v1/zips?zipCity=8001 refused the token of "
        "scope DCAPI_ADDRESS_READ: "
    )
    assert "DCAPI_ADDRESS_AUTOCOMPLETE" in failed  # the service's own words, quoted
    assert failed.endswith("— check POSTFLOWS_COMMERCE_SCOPE_AUTOCOMPLETE")
    guesses = _strict((tmp_path / "doctor.json").read_text(encoding="utf-8"))["apis"]["commerce"]["guesses"]
    assert guesses["commerce.scopes"] == {
        "holds": False,
        "seen": "the zips probe refused the token of scope DCAPI_ADDRESS_READ",
    }

    monkeypatch.setenv("POSTFLOWS_COMMERCE_SCOPE_AUTOCOMPLETE", "DCAPI_ADDRESS_AUTOCOMPLETE")
    code, output = _doctor("--live", "--api", "commerce")
    assert code == 0, output
    guesses = _strict((tmp_path / "doctor.json").read_text(encoding="utf-8"))["apis"]["commerce"]["guesses"]
    assert guesses["commerce.scopes"]["holds"] is None  # our guess was not asked: the setting replaces it
    assert guesses["commerce.scopes"]["seen"].startswith(
        "the scopes are set otherwise (POSTFLOWS_COMMERCE_SCOPE_AUTOCOMPLETE=DCAPI_ADDRESS_AUTOCOMPLETE): "
    )
    assert guesses["commerce.zips-probe"]["holds"] is True
