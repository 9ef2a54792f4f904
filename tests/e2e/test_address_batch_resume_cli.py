"""A batch command killed with SIGKILL while its job runs, then run again with the same key: the second run
resumes the recorded job, so the service sees exactly one runbatch, and both remote files are deleted.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import (
    EXAMPLE,
    CliWorkspace,
    PrefectServer,
    ServedSandbox,
    json_block,
    served_sandbox,
    stop,
)

# Starting servers and the CLI is slow on a busy machine; the default per-test limit is too tight.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

KEY = "crm-export-2024-03"


@pytest.fixture(scope="module")
def slow_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSandbox]:
    """Batch jobs take 8 s, long enough to kill the command while it waits."""
    with served_sandbox(tmp_path_factory.mktemp("slow-sandbox"), job_seconds=8) as served:
        yield served


def _recorded(history_db: Path, query: str) -> list[tuple[object, ...]]:
    """Rows of the history database as written so far; empty while it does not exist yet."""
    if not history_db.exists():
        return []
    try:
        with sqlite3.connect(f"file:{history_db}?mode=ro", uri=True, timeout=1) as db:
            return db.execute(query).fetchall()
    except sqlite3.OperationalError:  # not migrated yet, or briefly locked by the writer
        return []


def test_killed_batch_resumes_without_a_second_runbatch(
    tmp_path: Path, slow_sandbox: ServedSandbox, prefect_server: PrefectServer
) -> None:
    workspace = CliWorkspace(tmp_path, slow_sandbox, prefect_server)
    command = ("address-batch", str(EXAMPLE), "--out", str(workspace.out_dir), "--key", KEY)
    first = workspace.start(*command)
    try:
        deadline = time.monotonic() + 60
        batch: list[tuple[object, ...]] = []
        while not batch:
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "no batch job was recorded within 60 s"
            time.sleep(0.05)
            batch = _recorded(workspace.history_db, "SELECT remote_id FROM remote_jobs WHERE kind = 'batch'")
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        stop(first)  # and anything it started
        first.communicate()
    assert first.returncode == -signal.SIGKILL
    ((batch_token,),) = batch
    assert slow_sandbox.count("runbatch") == 1
    assert slow_sandbox.count("deletefile") == 0  # killed before any clean-up

    second = workspace.run(*command)
    assert second.returncode == 0, second.stderr
    summary = json_block(second.stdout + second.stderr)
    assert summary["idempotency_key"] == KEY
    assert summary["result_rows"] == summary["accepted_rows"] > 0

    assert slow_sandbox.count("runbatch") == 1
    assert slow_sandbox.count("runbatchwithclient") == 0
    assert slow_sandbox.count("uploadfile") == slow_sandbox.count("createfile") == 1
    recorded_files = "SELECT kind, remote_id FROM remote_jobs WHERE kind LIKE '%-file'"
    files = {str(kind): str(token) for kind, token in _recorded(workspace.history_db, recorded_files)}
    assert set(files) == {"upload-file", "output-file"}
    for token in files.values():
        assert slow_sandbox.count(f"deletefile/{token}") == 1
    assert slow_sandbox.count("deletefile") == 2
    assert slow_sandbox.count(f"checkbatchstatus/{batch_token}") >= 1

    runs = _recorded(workspace.history_db, "SELECT state, idempotency_key, error FROM runs ORDER BY id")
    # The killed run never recorded its end; the run that resumed its job closed it as abandoned.
    assert [(state, key) for state, key, _ in runs] == [("FAILED", KEY), ("COMPLETED", KEY)]
    assert runs[0][2].startswith("abandoned; its work was resumed by run")
