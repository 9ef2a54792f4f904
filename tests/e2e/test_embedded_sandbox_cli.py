"""The README's newspaper order run twice on the embedded sandbox, each run its own ``postflows`` process with
the same data directory: the second run resumes the first one's order, which the sandbox still knows."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import POSTFLOWS, PrefectServer, json_block, sandbox_cli_environment

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]


def test_newspaper_order_run_twice_on_the_embedded_sandbox_resumes_the_same_order(
    tmp_path: Path, prefect_server: PrefectServer
) -> None:
    env = sandbox_cli_environment(tmp_path, prefect_server.api_url, job_seconds="1")
    command = [
        POSTFLOWS,
        "newspaper-order",
        str(ROOT / "examples" / "newspaper-order.json"),
        "--out",
        "out/order",
    ]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)

    first = run()
    assert first.returncode == 0, first.stderr
    assert "embedded sandbox" in first.stderr
    summary = json_block(first.stdout)
    assert summary["status"] == "LOADED" and not summary["resumed"]

    again = run()
    assert again.returncode == 0, again.stderr
    resumed = json_block(again.stdout)
    assert resumed["resumed"] is True and resumed["order_id"] == summary["order_id"]
    assert resumed["status"] == "LOADED"
    assert (tmp_path / "data" / "sandbox" / "sandbox-state.db").is_file()
