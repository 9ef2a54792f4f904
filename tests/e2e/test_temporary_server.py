"""``postflows demo`` without a configured Prefect server: the command starts its own temporary server
before it imports the flow, reports the run to it, and stops it on exit."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import POSTFLOWS, base_environment

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_demo_reports_to_the_temporary_server_it_started_and_stops_it(tmp_path: Path) -> None:
    env = base_environment()
    env.update(
        POSTFLOWS_DATA_DIR=str(tmp_path / "data"),
        POSTFLOWS_SANDBOX_JOB_SECONDS="0.5",
        PREFECT_HOME=str(tmp_path / "prefect-home"),
    )
    done = subprocess.run(
        [POSTFLOWS, "demo", "--out", str(tmp_path / "demo")],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    started = re.search(
        r"a temporary one for this run at (http://127\.0\.0\.1:\d+)/api", done.stdout + done.stderr
    )
    assert started, done.stderr
    address = started.group(1)
    assert "Starting temporary server" not in done.stdout + done.stderr  # Prefect did not start its own
    assert "demo finished" in done.stdout + done.stderr
    assert (tmp_path / "demo" / "results.csv").is_file()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{address}/api/health", timeout=2)  # stopped with the command
