"""Answers the address service may give where its specification shows little, end to end: a ping that is a
bare HTTP 200, and a /deletefile that does not answer Status 0 (the file stays recorded as on the service
until ``postflows cleanup`` deletes it)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import history
from flows.address_batch import address_batch
from flows.address_query import address_query
from flows.cleanup import cleanup
from postflows.cli import app
from runtime.settings import get_settings
from sandbox.inprocess import SANDBOX_ORIGIN
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}
FILE_KINDS = ("upload-file", "output-file")
runner = CliRunner()


def _runs() -> list[history.Run]:
    """Every recorded run, oldest first, with its remote jobs and messages."""
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        runs = [history.get_run(session, run.id) for run in history.list_runs(session, limit=50)]
        return sorted((run for run in runs if run is not None), key=lambda run: run.id)


def _files(run: history.Run) -> dict[str, history.RemoteJob]:
    return {job.remote_id: job for job in run.remote_jobs if job.kind in FILE_KINDS}


async def _stored_files(sandbox: Sandbox) -> set[str]:
    """The file tokens the sandbox's address service still holds."""
    async with httpx.AsyncClient(transport=sandbox.transport.inner) as client:
        stored = (await client.get(f"{SANDBOX_ORIGIN}/_sandbox/stored")).json()
    return set(stored["address_files"])


def _json_tail(output: str) -> dict[str, object]:
    """The summary: the JSON object that starts on a line of its own at the end of the output."""
    lines = output.splitlines()
    start = max(number for number, line in enumerate(lines) if line == "{")
    return json.loads("\n".join(lines[start:]))


@pytest.mark.parametrize("ping_answer", ["empty-json", "empty-text"])
async def test_a_ping_answered_with_an_empty_200_opens_the_batch(
    sandbox: Sandbox, tmp_path: Path, ping_answer: str
) -> None:
    sandbox.config.address_ping_answer = ping_answer  # type: ignore[assignment]
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert summary.result_rows == summary.accepted_rows > 0
    assert sandbox.transport.count("/ping") == 1 and sandbox.transport.count("/runbatch") == 1


async def test_a_ping_answered_with_an_empty_200_opens_the_queries(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.config.address_ping_answer = "empty-json"
    summary = await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=4)
    assert summary.failed_queries == 0
    assert sandbox.transport.count("/ping") == 1
    assert sandbox.transport.count("/runquery2") == summary.accepted_rows > 0


def _assert_left_on_the_service(run: history.Run, files: dict[str, history.RemoteJob]) -> None:
    """The run completed, recorded its two files as still on the service and said so in one warning."""
    assert run.state == "COMPLETED" and len(files) == 2
    for job in files.values():
        assert job.deleted_at is None and job.remote_status == "deletefile Status 302"
        assert "Status 302 DatabaseItemNotFound" in job.data["not_deleted"]
    (warning,) = [message for message in run.messages if message.code == "deletefile"]
    assert warning.level == "warning" and all(token in warning.text for token in files)
    assert "`postflows cleanup` asks again" in warning.text


async def test_deletefile_answered_302_leaves_the_files_to_the_cleanup_which_deletes_them(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """302 is "error accessing the database" (§7), not "already gone": the run completes and says the files
    are still there; the clean-up asks again, files seconds old included, and the service deletes them."""
    sandbox.inject(api="address", endpoint="deletefile/*", kind="service_status", value=302, times=2)
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert summary.result_rows == summary.accepted_rows > 0
    (run,) = _runs()
    files = _files(run)
    _assert_left_on_the_service(run, files)
    assert set(files) <= await _stored_files(sandbox)
    assert sandbox.transport.count("/deletefile") == 2 and sandbox.transport.count("/runbatch") == 1

    cleaned = await call(cleanup)  # the nightly request: files older than a week, and those left behind
    assert sorted(cleaned.deleted) == sorted(files) and cleaned.not_deleted == {}
    assert sandbox.transport.count("/deletefile") == 4
    assert not set(files) & await _stored_files(sandbox)
    first, _ = _runs()
    for job in _files(first).values():
        assert job.deleted_at is not None and job.status == "DELETED"
    assert {job.kind: job.status for job in first.remote_jobs}["batch"] == "COMPLETED"


def test_postflows_cleanup_prints_what_is_still_on_the_service_and_asks_again_next_time(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox.inject(api="address", endpoint="deletefile/*", kind="service_status", value=302, times=4)
    asyncio.run(call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST))
    files = _files(_runs()[0])
    _assert_left_on_the_service(_runs()[0], files)

    still = runner.invoke(app, ["cleanup"])
    assert still.exit_code == 0, still.output
    assert sorted(_json_tail(still.output)["not_deleted"]) == sorted(files)  # type: ignore[arg-type]
    said = [line for line in still.stderr.splitlines() if line.startswith("still on the service ")]
    assert sorted(line.split()[4].rstrip(":") for line in said) == sorted(files)
    assert all("Status 302" in line and "the next clean-up asks again" in line for line in said)
    assert set(files) <= asyncio.run(_stored_files(sandbox))

    done = runner.invoke(app, ["cleanup"])
    assert done.exit_code == 0, done.output
    summary = _json_tail(done.output)
    assert sorted(summary["deleted"]) == sorted(files) and summary["not_deleted"] == {}  # type: ignore[arg-type]
    assert not set(files) & asyncio.run(_stored_files(sandbox))
    assert sandbox.transport.count("/deletefile") == 6
