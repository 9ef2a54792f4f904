"""Two batch commands with one key started at once, against the served sandbox: they take turns and bill
once, and every remote file is deleted in the end. (Commands killed at each step: test_crash_resume.py.)
"""

from __future__ import annotations

import sqlite3
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
)

# Starting servers and the CLI is slow on a busy machine; the default per-test limit is too tight.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def slow_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSandbox]:
    """Batch jobs take 8 s: the second command waits for the first while its job runs."""
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


def _all_files_deleted(workspace: CliWorkspace, sandbox: ServedSandbox) -> bool:
    files = _recorded(
        workspace.history_db, "SELECT remote_id, deleted_at FROM remote_jobs WHERE kind LIKE '%-file'"
    )
    assert files
    return all(deleted is not None for _, deleted in files) and all(
        sandbox.delete_status(str(token)) == 302 for token, _ in files
    )


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
