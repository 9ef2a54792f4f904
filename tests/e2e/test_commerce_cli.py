"""The commerce commands pointed by the settings at a commerce API served over HTTP (``postflows sandbox``),
as at any server that speaks the spec: look-ups with client credentials, and a sign-in whose browser step this
test plays (it opens the printed address, the server redirects to the command's loopback listener).
"""

from __future__ import annotations

import json
import subprocess
import time

import httpx
import pytest

from tests.e2e.conftest import CliWorkspace, free_port, served_sandbox, stop

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def commerce_workspace(root: object, origin: str) -> dict[str, str]:
    return {
        "POSTFLOWS_COMMERCE_URL": f"{origin}/commerce",
        "POSTFLOWS_COMMERCE_AUTH_URL": f"{origin}/auth",
        "POSTFLOWS_COMMERCE_USERINFO_URL": f"{origin}/auth/userinfo",
        "POSTFLOWS_COMMERCE_CLIENT_ID": "sandbox-commerce-client",
        "POSTFLOWS_COMMERCE_CLIENT_SECRET": "sandbox-commerce-secret",
        "POSTFLOWS_COMMERCE_REDIRECT_URI": f"http://127.0.0.1:{free_port()}/callback",
    }


def sign_in_url(process: subprocess.Popen[str], timeout: float = 60) -> str:
    """The authorization address the command prints, read from its output as it appears."""
    assert process.stderr is not None
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line and process.poll() is not None:
            break
        seen.append(line)
        if "/OAuth/authorization?" in line:
            return line.strip()
    raise AssertionError("no sign-in address printed:\n" + "".join(seen))


def test_commands_against_a_served_commerce_api(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("commerce")
    with served_sandbox(root / "sandbox", job_seconds=1) as sandbox:
        workspace = CliWorkspace(
            root / "cli", sandbox, prefect=None, extra_env=commerce_workspace(root, sandbox.origin)
        )
        zips = workspace.run("commerce", "zips", "30", "--json")
        assert zips.returncode == 0, zips.stderr
        assert {entry["zip"] for entry in json.loads(zips.stdout)} >= {"3008", "3011"}

        login = workspace.start("commerce-login", "--timeout", "60")
        try:
            url = sign_in_url(login)
            assert url.startswith(f"{sandbox.origin}/auth/OAuth/authorization?")
            page = httpx.get(url, follow_redirects=True, timeout=30)  # the browser
            assert page.status_code == 200 and "Sign-in received" in page.text
            _, errors = login.communicate(timeout=60)
        finally:
            stop(login)
        assert login.returncode == 0, errors
        assert "signed in as hans.muster" in errors

        addresses = workspace.run("commerce", "addresses", "--json")
        assert addresses.returncode == 0, addresses.stderr
        assert {address["type"] for address in json.loads(addresses.stdout)} >= {"MAIN", "DOMICILE"}
        assert "sandbox-commerce-secret" not in addresses.stdout + addresses.stderr
