"""The newspaper commands as a user runs them against the sandbox served over HTTP: real URLs and OAuth
client credentials from the environment, a run resumed without a second POST, and no secret anywhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import CliWorkspace, PrefectServer, ServedSandbox, json_block, served_sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sandbox-secret"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSandbox]:
    with served_sandbox(tmp_path_factory.mktemp("newspaper-sandbox"), job_seconds=2) as served:
        yield served


def _workspace(root: Path, sandbox: ServedSandbox, prefect: PrefectServer) -> CliWorkspace:
    return CliWorkspace(
        root,
        sandbox,
        prefect,
        extra_env={
            "POSTFLOWS_NEWSPAPER_URL": f"{sandbox.origin}/newspaper",
            "POSTFLOWS_NEWSPAPER_TOKEN_URL": f"{sandbox.origin}/auth/OAuth/token",
            "POSTFLOWS_NEWSPAPER_CLIENT_ID": "sandbox-client",
            "POSTFLOWS_NEWSPAPER_CLIENT_SECRET": SECRET,
        },
    )


def _posts(sandbox: ServedSandbox, suffix: str) -> int:
    return sum(
        entry["count"]
        for entry in sandbox.requests()
        if entry["api"] == "newspaper" and entry["method"] == "POST" and entry["endpoint"].endswith(suffix)
    )


def test_order_runs_against_configured_urls_and_resumes_without_a_second_post(
    tmp_path: Path, sandbox: ServedSandbox, prefect_server: PrefectServer
) -> None:
    workspace = _workspace(tmp_path, sandbox, prefect_server)
    order = ROOT / "examples" / "newspaper-order.json"
    first = workspace.run("newspaper-order", str(order), "--out", str(workspace.out_dir))
    assert first.returncode == 0, first.stderr
    assert "embedded sandbox" not in first.stderr and f"{sandbox.origin}/newspaper" in first.stderr
    summary = json_block(first.stdout)
    assert summary["status"] == "LOADED" and not summary["resumed"]
    assert (workspace.out_dir / "delivery-note.pdf").read_bytes().startswith(b"%PDF")
    assert (workspace.out_dir / "report.xlsx").is_file()

    again = workspace.run("newspaper-order", str(order), "--out", str(workspace.out_dir))
    assert again.returncode == 0, again.stderr
    assert json_block(again.stdout)["resumed"] is True
    assert _posts(sandbox, "orders/standard") == 1

    tokens = httpx.get(f"{sandbox.origin}/auth/_sandbox/tokens", timeout=5).json()
    assert tokens["requests"]["sandbox-client"] >= 1

    for text in (first.stdout, first.stderr, again.stdout, again.stderr):
        assert SECRET not in text
    for path in workspace.root.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_missing_token_url_is_a_configuration_error(
    tmp_path: Path, sandbox: ServedSandbox, prefect_server: PrefectServer
) -> None:
    workspace = _workspace(tmp_path, sandbox, prefect_server)
    del workspace.extra_env["POSTFLOWS_NEWSPAPER_TOKEN_URL"]
    result = workspace.run("structure-files", "9", "--out", str(workspace.out_dir))
    assert result.returncode == 2
    assert "POSTFLOWS_NEWSPAPER_TOKEN_URL" in result.stderr
    assert "Traceback" not in result.stderr
