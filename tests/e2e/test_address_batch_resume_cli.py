"""Batch commands killed with SIGKILL or started twice at once, against the served sandbox: a killed run is
resumed with exactly one runbatch; a run killed while its runbatch was in flight makes the next run refuse
until --resubmit; two processes with one key take turns. Every remote file is deleted in the end.
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
            batch = _recorded(
                workspace.history_db,
                "SELECT remote_id FROM remote_jobs"
                " WHERE kind = 'batch' AND status IN ('SUBMITTED', 'RUNNING')",
            )
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


def _wait_for(condition, what: str, process, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{what} within {timeout:.0f} s"
        time.sleep(0.05)


def _all_files_deleted(workspace: CliWorkspace, sandbox: ServedSandbox) -> bool:
    files = _recorded(
        workspace.history_db, "SELECT remote_id, deleted_at FROM remote_jobs WHERE kind LIKE '%-file'"
    )
    assert files
    return all(deleted is not None for _, deleted in files) and all(
        sandbox.delete_status(str(token)) == 302 for token, _ in files
    )


def test_a_kill_while_runbatch_is_in_flight_waits_for_resubmit(
    tmp_path: Path, slow_sandbox: ServedSandbox, prefect_server: PrefectServer
) -> None:
    slow_sandbox.reset()
    slow_sandbox.inject([{"api": "address", "endpoint": "runbatch", "kind": "delay", "value": 4}])
    try:
        workspace = CliWorkspace(tmp_path, slow_sandbox, prefect_server)
        command = ("address-batch", str(EXAMPLE), "--out", str(workspace.out_dir), "--key", "in-flight")
        first = workspace.start(*command)
        try:
            _wait_for(lambda: slow_sandbox.count("runbatch") == 1, "runbatch was not sent", first)
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
        finally:
            stop(first)
            first.communicate()
    finally:
        slow_sandbox.inject([])
    markers = _recorded(workspace.history_db, "SELECT status FROM remote_jobs WHERE kind = 'batch'")
    assert markers == [("PENDING",)]
    time.sleep(4.5)  # the service finishes the runbatch it received: a batch now exists

    refused = workspace.run(*command)
    assert refused.returncode == 1
    assert "--resubmit" in refused.stderr and "address batch" in refused.stderr
    assert slow_sandbox.count("runbatch") == 1

    resubmitted = workspace.run(*command, "--resubmit")
    assert resubmitted.returncode == 0, resubmitted.stderr
    summary = json_block(resubmitted.stdout)
    assert summary["result_rows"] == summary["accepted_rows"] > 0
    assert slow_sandbox.count("runbatch") == 2
    assert _all_files_deleted(workspace, slow_sandbox)


def test_two_processes_with_one_key_take_turns_and_bill_once(
    tmp_path: Path, slow_sandbox: ServedSandbox, prefect_server: PrefectServer
) -> None:
    slow_sandbox.reset()
    workspace = CliWorkspace(tmp_path, slow_sandbox, prefect_server)
    command = ("address-batch", str(EXAMPLE), "--key", "shared-key", "--out")
    first, second = workspace.run_side_by_side(
        (*command, str(tmp_path / "a")), (*command, str(tmp_path / "b")), timeout=180
    )
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert slow_sandbox.count("runbatch") == 1 and slow_sandbox.count("uploadfile") == 1
    waited = [result for result in (first, second) if "is held by run" in result.stderr]
    assert len(waited) == 1  # the second one said whom it waited for
    assert json_block(first.stdout)["qstat"] == json_block(second.stdout)["qstat"]
    assert _all_files_deleted(workspace, slow_sandbox)
