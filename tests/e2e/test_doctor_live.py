"""``postflows doctor --live`` against the APIs served over HTTP by ``postflows sandbox``, configured as real
services are: it passes with the right settings, and the sandbox's request log shows that nothing was
billed or submitted (no upload, batch or query; no POST but token requests). A wrong password fails naming
the address service, and the password appears nowhere. A sandbox answering every guess the other plausible
way (``--guesses other``) shows the guesses that do not hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import CliWorkspace, served_sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

WRONG_PASSWORD = "not-the-sandbox-password-7f3k"
TOKEN_PATH = "/auth/OAuth/token"


def _real_services(origin: str) -> dict[str, str]:
    """The newspaper and commerce APIs and the address assistant of the served sandbox, as settings name
    real services (the address service is CliWorkspace's own)."""
    return {
        "POSTFLOWS_NEWSPAPER_URL": f"{origin}/newspaper",
        "POSTFLOWS_NEWSPAPER_TOKEN_URL": f"{origin}{TOKEN_PATH}",
        "POSTFLOWS_NEWSPAPER_CLIENT_ID": "sandbox-client",
        "POSTFLOWS_NEWSPAPER_CLIENT_SECRET": "sandbox-secret",
        "POSTFLOWS_COMMERCE_URL": f"{origin}/commerce",
        "POSTFLOWS_COMMERCE_AUTH_URL": f"{origin}/auth",
        "POSTFLOWS_COMMERCE_CLIENT_ID": "sandbox-commerce-client",
        "POSTFLOWS_COMMERCE_CLIENT_SECRET": "sandbox-commerce-secret",
    }


def _strict(path: Path) -> dict[str, Any]:
    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    parsed: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)
    return parsed


def _logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


# The scopes a contract that answers the guess commerce.scopes the other way is configured with.
OTHER_SCOPES = {
    "POSTFLOWS_COMMERCE_SCOPE_VALIDATION": "DCAPI_ADDRESS_VALIDATE",
    "POSTFLOWS_COMMERCE_SCOPE_AUTOCOMPLETE": "DCAPI_ADDRESS_AUTOCOMPLETE",
}


@pytest.mark.parametrize("guesses", ["ours", "other"])
def test_doctor_live_bills_nothing_and_names_a_wrong_password(
    tmp_path_factory: pytest.TempPathFactory, guesses: str
) -> None:
    """Under both answer sets of the sandbox (the other: an empty ping, a first deletefile answered 302, a
    refused sign-in as HTTP 401, the look-ups' own scope), with the settings such a contract needs."""
    root = tmp_path_factory.mktemp("doctor")
    log = root / "requests.jsonl"
    options = ["--guesses", guesses]
    with served_sandbox(root / "sandbox", job_seconds=1, request_log=log, options=options) as sandbox:
        env = _real_services(sandbox.origin) | (OTHER_SCOPES if guesses == "other" else {})
        workspace = CliWorkspace(root / "cli", sandbox, prefect=None, extra_env=env)
        done = workspace.run("doctor", "--live", "--out", str(root / "right"))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "embedded sandbox" not in done.stdout
        assert f"address service: {sandbox.address_url}" in done.stdout.splitlines()

        requests = _logged(log)
        endpoints = [(entry["method"], entry["endpoint"].split("/")[0]) for entry in requests]
        assert ("GET", "ping") in endpoints and ("GET", "createfile") in endpoints
        assert ("GET", "deletefile") in endpoints
        assert not {"runbatch", "runbatchwithclient", "runquery2", "uploadfile"} & {
            name for _, name in endpoints
        }
        posts = {entry["path"] for entry in requests if entry["method"] != "GET"}
        assert posts == {TOKEN_PATH}
        assert [entry["path"] for entry in requests if entry["api"] == "commerce"] == [
            "/commerce/address/v1/zips"
        ]
        assert not [entry for entry in requests if entry["api"] == "newspaper"]
        assert sandbox.stored()["address_files"] == []  # the file made was deleted again

        report = _strict(root / "right" / "doctor.json")
        assert report["ok"] is True
        assert {api: found["reachable"] for api, found in report["apis"].items()} == {
            "address-service": True,
            "newspaper": True,
            "commerce": True,
        }
        assert not any(found["sandbox"] for found in report["apis"].values())

        workspace.password = WRONG_PASSWORD
        refused = workspace.run("doctor", "--live", "--out", str(root / "wrong"))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert (
        "failed: address service: sign-in refused (Status 101 AuthenticationFailed) — check "
        "POSTFLOWS_ADDRESS_SERVICE_USER / POSTFLOWS_ADDRESS_SERVICE_PASSWORD"
    ) in refused.stderr.splitlines()
    written = (root / "wrong" / "doctor.json").read_text(encoding="utf-8")
    for text in (refused.stdout, refused.stderr, written):
        assert WRONG_PASSWORD not in text
        assert "sandbox-secret" not in text and "sandbox-commerce-secret" not in text
    report = _strict(root / "wrong" / "doctor.json")
    address = report["apis"]["address-service"]
    assert report["ok"] is False and address["ok"] is False
    refusal = "HTTP 200" if guesses == "ours" else "HTTP 401"
    assert address["guesses"]["address-service.failure-http-status"] == {
        "holds": guesses == "ours",
        "seen": f"the sign-in was refused with {refusal}, JSON with Status 101",
    }
    assert report["apis"]["newspaper"]["ok"] is True and report["apis"]["commerce"]["ok"] is True


def test_doctor_live_says_which_guesses_a_service_answers_otherwise(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("doctor-other")
    with served_sandbox(root / "sandbox", job_seconds=1, options=["--guesses", "other"]) as sandbox:
        env = _real_services(sandbox.origin) | {"POSTFLOWS_NEWSPAPER_CLIENT_SECRET": "not-the-client-secret"}
        workspace = CliWorkspace(root / "cli", sandbox, prefect=None, password=WRONG_PASSWORD, extra_env=env)
        done = workspace.run("doctor", "--live", "--api", "address-service", "--api", "newspaper")
    assert done.returncode == 1, done.stdout + done.stderr
    failures = [line for line in done.stderr.splitlines() if line.startswith("failed: ")]
    assert failures == [
        "failed: address service: sign-in refused (Status 101 AuthenticationFailed) — check "
        "POSTFLOWS_ADDRESS_SERVICE_USER / POSTFLOWS_ADDRESS_SERVICE_PASSWORD",
        "failed: newspaper API: client refused (HTTP 401, JSON object (code, message)) — check "
        "POSTFLOWS_NEWSPAPER_CLIENT_ID / POSTFLOWS_NEWSPAPER_CLIENT_SECRET",
    ]
    assert (
        "  guess address-service.failure-http-status: the sign-in was refused with HTTP 401, JSON with "
        "Status 101 — our guess does not hold: a failure is HTTP 200 with its Status (101 for a wrong "
        "password); "
    ) in done.stdout
    report = _strict(root / "cli" / "cwd" / "doctor.json")
    assert (
        report["apis"]["address-service"]["guesses"]["address-service.failure-http-status"]["holds"] is False
    )
    assert report["apis"]["newspaper"]["guesses"]["newspaper.token-endpoint"]["holds"] is False
    for text in (
        done.stdout,
        done.stderr,
        (root / "cli" / "cwd" / "doctor.json").read_text(encoding="utf-8"),
    ):
        assert WRONG_PASSWORD not in text and "not-the-client-secret" not in text
