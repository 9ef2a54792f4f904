"""Ctrl-C on a real ``postflows address-batch`` process while it waits for its batch job: the command ends
with one line saying what the history recorded and the exact command that takes it up, exit 130; the run
is INTERRUPTED, never left RUNNING; the same command then resumes the same job and says so."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import EXAMPLE, POSTFLOWS, PrefectServer, json_block, sandbox_cli_environment

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


# The command runs with Ctrl-C's default action, however the suite was started: a shell's background job
# (`make test &`) starts with SIGINT ignored, its processes inherit that, and Python then leaves it ignored.
WITH_CTRL_C = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def _batch_state(database: Path) -> str | None:
    """The state of the newest batch job the history records, once it has a job id."""
    if not database.exists():
        return None
    try:
        with sqlite3.connect(database) as connection:
            row = connection.execute(
                "SELECT status FROM remote_jobs WHERE kind = 'batch' AND remote_id NOT LIKE 'pending:%' "
                "ORDER BY id DESC LIMIT 1"
            ).fetchone()
    except sqlite3.OperationalError:  # the schema is not created yet
        return None
    return None if row is None else str(row[0])


def test_ctrl_c_while_waiting_says_what_was_recorded_and_how_to_resume(
    tmp_path: Path, prefect_server: PrefectServer
) -> None:
    env = sandbox_cli_environment(tmp_path, prefect_server.api_url, job_seconds="12")
    command = [POSTFLOWS, "address-batch", str(EXAMPLE), "--out", "out", "--max-wait", "120"]
    database = tmp_path / "data" / "history.db"

    process = subprocess.Popen(
        [sys.executable, "-c", WITH_CTRL_C, *command],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while _batch_state(database) != "RUNNING":
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the batch job was never recorded running"
        time.sleep(0.2)
    # The job has answered its first status check; Ctrl-C comes while the run waits for the next one (the
    # wait a user sees), not in the instant a status check's task run is being set up.
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stdout + stderr
    [line] = [line for line in stderr.splitlines() if line.startswith("interrupted")]
    assert "run 1 is recorded INTERRUPTED" in line and "WAITING" in line
    assert line.endswith(
        f"The same command takes it up: postflows address-batch {EXAMPLE} --out out --max-wait 120"
    )
    assert "Crash detected" not in stderr and "Traceback" not in stderr
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT state FROM runs").fetchall() == [("INTERRUPTED",)]

    again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stderr
    summary = json_block(again.stdout)
    assert summary["took_up_interrupted_run"] == 1 and summary["resumed"] is True
    assert "run 1 of this work was interrupted" in again.stderr
