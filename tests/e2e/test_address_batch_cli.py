"""``postflows address-batch`` as a user runs it, against the sandbox served over HTTP: results, clean-up
of every remote file, no secret anywhere, the history commands, and a wrong password.
"""

from __future__ import annotations

import base64
import csv
import sqlite3
import subprocess
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import (
    EXAMPLE,
    PASSWORD,
    USER,
    CliWorkspace,
    PrefectServer,
    ServedSandbox,
    json_block,
    served_sandbox,
)
from tests.outputs import output_records

# Starting servers and the CLI is slow on a busy machine; the default per-test limit is too tight.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSandbox]:
    with served_sandbox(tmp_path_factory.mktemp("sandbox"), job_seconds=1) as served:
        yield served


@dataclass
class BatchRun:
    workspace: CliWorkspace
    result: subprocess.CompletedProcess[str]
    summary: dict[str, Any]
    counts_after: list[dict[str, Any]]


@pytest.fixture(scope="module")
def batch_run(
    tmp_path_factory: pytest.TempPathFactory, sandbox: ServedSandbox, prefect_server: PrefectServer
) -> BatchRun:
    workspace = CliWorkspace(tmp_path_factory.mktemp("batch"), sandbox, prefect_server)
    result = workspace.run("address-batch", str(EXAMPLE), "--out", str(workspace.out_dir))
    assert result.returncode == 0, result.stderr
    return BatchRun(workspace, result, json_block(result.stdout + result.stderr), sandbox.requests())


def _file_tokens(history_db: Path) -> dict[str, str]:
    with sqlite3.connect(f"file:{history_db}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT kind, remote_id FROM remote_jobs WHERE kind IN ('upload-file', 'output-file', 'batch')"
        ).fetchall()
    return {kind: remote_id for kind, remote_id in rows}


def _counted(counts: list[dict[str, Any]], endpoint: str) -> int:
    return sum(entry["count"] for entry in counts if entry["endpoint"] == endpoint)


def test_batch_writes_one_result_row_per_accepted_row(batch_run: BatchRun) -> None:
    summary, out = batch_run.summary, batch_run.workspace.out_dir
    with EXAMPLE.open(encoding="utf-8", newline="") as source:
        input_ids = [row["KundenNr"] for row in csv.DictReader(source, delimiter=";")]
    rejected = output_records(out / "rejected.csv")
    rejected_rows = {int(row["row"]) for row in rejected}
    # One line per rejected row, named by its customer number and its line in the file (header: line 1).
    assert len(rejected) == len(rejected_rows) == summary["rejected_rows"]
    assert [(row["KundenNr"], int(row["line"])) for row in rejected] == [
        (input_ids[number - 1], number + 1) for number in sorted(rejected_rows)
    ]
    accepted_ids = [kunde for number, kunde in enumerate(input_ids, start=1) if number not in rejected_rows]
    results = output_records(out / "results.csv")

    assert summary["accepted_rows"] == len(accepted_ids) == len(input_ids) - summary["rejected_rows"]
    assert summary["result_rows"] == len(results) == len(accepted_ids)
    assert [row["KundenNr"] for row in results] == accepted_ids
    assert all(row["QSTAT"] for row in results)
    assert sum(summary["qstat"].values()) == len(results)
    assert {Path(name).name for name in summary["files"]} >= {"results.csv", "results.xlsx"}
    assert all(Path(name).is_file() for name in summary["files"])


def test_every_uploaded_and_created_file_is_deleted(batch_run: BatchRun, sandbox: ServedSandbox) -> None:
    tokens = _file_tokens(batch_run.workspace.history_db)
    counts = batch_run.counts_after
    assert _counted(counts, "uploadfile") == _counted(counts, "createfile") == 1
    assert _counted(counts, "runbatch") == 1
    assert _counted(counts, f"deletefile/{tokens['upload-file']}") == 1
    assert _counted(counts, f"deletefile/{tokens['output-file']}") == 1
    # And the service agrees that both are gone.
    assert sandbox.delete_status(tokens["upload-file"]) == sandbox.delete_status(tokens["output-file"]) == 302


def _readable_bytes(path: Path) -> list[bytes]:
    """The file's bytes, and for ZIP containers (xlsx) each member's bytes too."""
    content = path.read_bytes()
    parts = [content]
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            parts.extend(archive.read(name) for name in archive.namelist())
    return parts


def test_the_password_appears_nowhere(batch_run: BatchRun, prefect_server: PrefectServer) -> None:
    secrets = [PASSWORD.encode(), base64.b64encode(f"{USER}:{PASSWORD}".encode())]
    result = batch_run.result
    for stream in (result.stdout, result.stderr):
        assert all(secret.decode() not in stream for secret in secrets)
    files = [p for p in batch_run.workspace.root.rglob("*") if p.is_file()]
    assert batch_run.workspace.history_db in files
    # The Prefect server's database holds the flow runs' parameters and logs.
    files += [p for p in prefect_server.home.rglob("prefect.db*") if p.is_file()]
    for path in files:
        for content in _readable_bytes(path):
            assert all(secret not in content for secret in secrets), path


def test_history_lists_the_run_and_shows_steps_token_and_documents(batch_run: BatchRun) -> None:
    workspace, run_id = batch_run.workspace, batch_run.summary["run_id"]
    listing, detail = workspace.run_side_by_side(("history",), ("history", str(run_id)))
    assert listing.returncode == 0, listing.stderr
    (row,) = [line for line in listing.stdout.splitlines() if " address-batch " in line]
    assert row.split()[0] == str(run_id) and "COMPLETED" in row

    assert detail.returncode == 0, detail.stderr
    text = detail.stdout
    assert f"Run {run_id}" in text and "COMPLETED" in text
    for step in ("prepare input", "POST /uploadfile", "POST /runbatch", "/checkbatchstatus", "/deletefile"):
        assert step in text, step
    tokens = _file_tokens(workspace.history_db)
    assert tokens["batch"] in text
    for document in ("results.csv", "results.xlsx", "result.zip"):
        assert str(workspace.out_dir) in text and document in text, document
    assert PASSWORD not in text


def test_wrong_password_stops_at_the_ping_with_one_line_naming_status_101(
    tmp_path: Path, sandbox: ServedSandbox, prefect_server: PrefectServer
) -> None:
    before = sandbox.requests()
    workspace = CliWorkspace(tmp_path / "wrong", sandbox, prefect_server, password="not-the-password")
    result = workspace.run("address-batch", str(EXAMPLE), "--out", str(workspace.out_dir))
    after = sandbox.requests()

    assert result.returncode == 2  # the settings must change before a run can go on
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert "not-the-password" not in output
    (reason,) = [line for line in result.stderr.splitlines() if line.startswith("failed:")]
    assert "Status 101" in reason and "AuthenticationFailed" in reason and "ping" in reason
    assert result.stderr.rstrip().endswith(reason)
    # Refused at the ping: nothing was uploaded or created, so nothing is left to delete.
    assert _counted(after, "ping") - _counted(before, "ping") == 1
    assert _counted(after, "uploadfile") == _counted(before, "uploadfile")
    assert _counted(after, "runbatch") == _counted(before, "runbatch")
