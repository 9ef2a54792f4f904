"""Resuming the address batch: the same work is resumed and never billed twice on its own; other work never
shares its results; an unknown runbatch outcome stops the next run until --resubmit; two runs of one key take
turns.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from openpyxl import Workbook

import history
from connectors.errors import TransportFailure
from flows import address_batch as batch_module
from flows import batch_steps
from flows.address_batch import address_batch
from history.models import JobState
from history.recorder import RunRecorder
from runtime.settings import get_settings
from sandbox.inprocess import address_service_url
from tasks.address_service.cleanup import CleanupReport
from tasks.submission import ResumeMismatch, SubmissionUncertain
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


class _Killed(BaseException):
    """Stands for the process dying: no clean-up code runs after it."""


def _factory():  # type: ignore[no-untyped-def]
    return history.session_factory(get_settings().effective_database_url)


def _runs() -> list[history.Run]:
    with _factory()() as session:
        return [history.get_run(session, run.id) for run in history.list_runs(session, limit=50)]  # type: ignore[misc]


def _jobs(kind: str) -> list[history.RemoteJob]:
    return [job for run in reversed(_runs()) for job in run.remote_jobs if job.kind == kind]


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _as_if_killed() -> None:
    """Make the newest run look like its process died mid-run: still RUNNING, holding its key."""
    with _factory().begin() as session:
        (run,) = history.list_runs(session, limit=1)
        run.state, run.finished_at, run.error = "RUNNING", None, None
        session.add(
            history.KeyLease(
                idempotency_key=run.idempotency_key,
                run_id=run.id,
                host=__import__("socket").gethostname(),
                pid=_dead_pid(),
                expires_at=history.utcnow() + __import__("datetime").timedelta(hours=1),
            )
        )


async def _deleted(sandbox: Sandbox, token: str) -> bool:
    async with httpx.AsyncClient(
        transport=sandbox.transport.inner, auth=("sandbox-user", "sandbox-password")
    ) as c:
        response = await c.get(f"{address_service_url()}/deletefile/{token}")
    return int(response.json()["Status"]) == 302


async def _all_files_deleted(sandbox: Sandbox) -> bool:
    tokens = [job.remote_id for kind in ("upload-file", "output-file") for job in _jobs(kind)]
    assert tokens
    return all([await _deleted(sandbox, token) for token in tokens]) and all(
        job.deleted_at is not None for kind in ("upload-file", "output-file") for job in _jobs(kind)
    )


async def test_rerun_after_a_crash_resumes_the_recorded_job(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"

    async def crash(*args: object, **kwargs: object) -> None:
        raise _Killed

    async def no_cleanup(*args: object) -> CleanupReport:
        return CleanupReport()

    with monkeypatch.context() as patched:
        patched.setattr(batch_steps, "wait_for_batch", crash)
        patched.setattr(batch_module, "delete_key_files", no_cleanup)
        with pytest.raises(_Killed):
            await call(
                address_batch, input_path=EXAMPLE, output_dir=out, idempotency_key="crm-export-1", **FAST
            )
    _as_if_killed()

    summary = await call(
        address_batch, input_path=EXAMPLE, output_dir=out, idempotency_key="crm-export-1", **FAST
    )
    assert sandbox.transport.count("/runbatch") == 1 and sandbox.transport.count("/uploadfile") == 1
    assert sandbox.transport.count("/deletefile") == 2
    assert summary.result_rows == summary.accepted_rows
    assert sorted(run.state for run in _runs()) == ["COMPLETED", "FAILED"]
    assert any("abandoned; its work was resumed by run" in (run.error or "") for run in _runs())

    # A third run with the same key neither submits nor downloads again: it rebuilds from the recorded file,
    # after the one ping every run opens with.
    before, pinged = sum(sandbox.transport.calls.values()), sandbox.transport.count("/ping")
    again = await call(
        address_batch, input_path=EXAMPLE, output_dir=out, idempotency_key="crm-export-1", **FAST
    )
    assert sandbox.transport.count("/ping") == pinged + 1
    assert sum(sandbox.transport.calls.values()) == before + 1
    assert again.qstat == summary.qstat


async def test_a_kill_between_the_runbatch_answer_and_the_history_write_is_never_billed_twice_on_its_own(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    original = RunRecorder.update_job

    async def killed_before_recording(self: RunRecorder, job, **changes):  # type: ignore[no-untyped-def]
        if job.kind == "batch" and changes.get("status") is JobState.SUBMITTED:
            raise _Killed
        return await original(self, job, **changes)

    with monkeypatch.context() as patched:
        patched.setattr(RunRecorder, "update_job", killed_before_recording)
        patched.setattr(batch_module, "delete_key_files", lambda *args: asyncio.sleep(0, CleanupReport()))
        with pytest.raises(_Killed):
            await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    _as_if_killed()
    assert sandbox.transport.count("/runbatch") == 1

    with pytest.raises(SubmissionUncertain, match="--resubmit") as refused:
        await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert "address batch" in str(refused.value)
    assert sandbox.transport.count("/runbatch") == 1 and sandbox.transport.count("/uploadfile") == 1
    (marker,) = _jobs("batch")
    assert marker.status == "UNCERTAIN"

    summary = await call(address_batch, input_path=EXAMPLE, output_dir=out, resubmit=True, **FAST)
    assert summary.result_rows == summary.accepted_rows
    assert sandbox.transport.count("/runbatch") == 2
    assert sorted(job.status for job in _jobs("batch")) == ["COMPLETED", "SUPERSEDED"]
    assert await _all_files_deleted(sandbox)


@pytest.mark.parametrize(
    "fault",
    [
        {"kind": "drop"},
        {"kind": "service_status", "value": 201},
        {"kind": "service_status", "value": 203},
        {"kind": "http_status", "value": 502},
        {"kind": "lost_answer"},
        {"kind": "processed_status", "value": 201},
    ],
    ids=["dropped", "status-201", "status-203", "http-502", "ran-answer-lost", "ran-then-status-201"],
)
async def test_a_runbatch_whose_outcome_is_unknown_is_not_sent_again_until_the_user_says_so(
    sandbox: Sandbox, tmp_path: Path, fault: dict[str, object]
) -> None:
    out = tmp_path / "out"
    sandbox.inject(api="address", endpoint="runbatch", **fault)
    with pytest.raises(Exception) as first:
        await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert not isinstance(first.value, SubmissionUncertain)
    assert sandbox.transport.count("/runbatch") == 1
    (marker,) = _jobs("batch")
    assert marker.status == "UNCERTAIN"
    assert sandbox.transport.count("/deletefile") == 0  # the batch may exist and need its files

    with pytest.raises(SubmissionUncertain, match="--resubmit"):
        await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert sandbox.transport.count("/runbatch") == 1

    summary = await call(address_batch, input_path=EXAMPLE, output_dir=out, resubmit=True, **FAST)
    assert summary.result_rows == summary.accepted_rows
    assert sandbox.transport.count("/runbatch") == 2
    assert await _all_files_deleted(sandbox)


async def test_a_failed_runbatch_that_created_nothing_is_followed_by_a_new_one(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    sandbox.inject(api="address", endpoint="runbatch", kind="service_status", value=801)
    with pytest.raises(Exception, match="801"):
        await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    (rejected,) = _jobs("batch")
    assert rejected.status == "REJECTED"
    assert sandbox.transport.count("/deletefile") == 2

    summary = await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert summary.result_rows == summary.accepted_rows
    assert sandbox.transport.count("/runbatch") == 2
    assert await _all_files_deleted(sandbox)


async def test_two_runs_of_one_key_at_once_take_turns_and_bill_once(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.config.job_seconds = 1.0
    first, second = await asyncio.gather(
        call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "a", idempotency_key="shared", **FAST),
        call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "b", idempotency_key="shared", **FAST),
    )
    assert sandbox.transport.count("/runbatch") == 1 and sandbox.transport.count("/uploadfile") == 1
    assert first.qstat == second.qstat
    assert sorted(run.state for run in _runs()) == ["COMPLETED", "COMPLETED"]
    assert await _all_files_deleted(sandbox)


async def test_two_sheets_of_one_workbook_are_two_pieces_of_work(sandbox: Sandbox, tmp_path: Path) -> None:
    workbook = Workbook()
    header = ["KundenNr", "Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort"]
    sheets = {
        "Bern": [["B-1", "Hans", "Muster", "Lindenstrasse", "12", "6010", "Kriens"]],
        "Zürich": [["Z-1", "Jürg", "Zürcher", "Mühleweg", "7", "5073", "Gipf-Oberfrick"]],
    }
    workbook.remove(workbook.active)  # type: ignore[arg-type]
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in [header, *rows]:
            sheet.append(row)
    source = tmp_path / "customers.xlsx"
    workbook.save(source)

    for name in sheets:
        await call(address_batch, input_path=source, output_dir=tmp_path / name, input_sheet=name, **FAST)
    assert sandbox.transport.count("/runbatch") == 2
    for name, rows in sheets.items():
        results = read_output_csv(tmp_path / name / "results.csv", dtype=str, keep_default_na=False)
        assert list(results["KundenNr"]) == [row[0] for row in rows]


async def test_a_recorded_job_of_other_input_is_never_used_for_this_one(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox.config.job_seconds = 2.5
    with pytest.raises(Exception, match="not finished"):
        await call(
            address_batch,
            input_path=EXAMPLE,
            output_dir=tmp_path / "a",
            idempotency_key="crm",
            max_wait_s=0.2,
            **FAST,
        )
    other = tmp_path / "other.csv"
    other.write_text(EXAMPLE.read_text(encoding="utf-8").replace("Muster", "Meier"), encoding="utf-8")
    with pytest.raises(ResumeMismatch) as mismatch:
        await call(address_batch, input_path=other, output_dir=tmp_path / "b", idempotency_key="crm", **FAST)
    recorded = _jobs("batch")[0].data["fingerprint"]
    assert recorded in str(mismatch.value) and mismatch.value.current in str(mismatch.value)
    assert mismatch.value.exit_code == 2
    assert sandbox.transport.count("/runbatch") == 1
    assert not (tmp_path / "b" / "results.csv").exists()


def test_the_key_names_the_service_and_every_option_that_changes_the_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from history.identity import derive_key
    from runtime.settings import Settings
    from runtime.wiring import address_service_endpoint

    source = tmp_path / "in.csv"
    source.write_text("Name;Ort\nMuster;Bern\n", encoding="utf-8")
    sandbox_endpoint = address_service_endpoint(Settings())
    real = Settings(address_service_url="https://real.example/REST/v1", address_service_user="u1")
    other_user = Settings(address_service_url="https://real.example/REST/v1", address_service_user="u2")

    def key(endpoint, **parameters: object) -> str:  # type: ignore[no-untyped-def]
        return derive_key("address-batch", endpoint=endpoint, files=(source,), parameters=parameters)

    keys = {
        key(sandbox_endpoint, sheet=None),
        key(address_service_endpoint(real), sheet=None),
        key(address_service_endpoint(other_user), sheet=None),
        key(sandbox_endpoint, sheet="Zürich"),
        key(sandbox_endpoint, sheet=None, delimiter=";"),
    }
    assert len(keys) == 5
    assert key(sandbox_endpoint, sheet=None) == key(sandbox_endpoint, sheet=None)


async def test_the_transport_failure_of_a_lost_runbatch_answer_says_it_was_sent(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox.inject(api="address", endpoint="runbatch", kind="drop")
    with pytest.raises(TransportFailure) as lost:
        await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert lost.value.sent
