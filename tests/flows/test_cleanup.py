"""The clean-up flow deletes what runs left behind, past an age, and records it; it keeps the files of a
batch job whose result is still owed until the service's retention has passed, or when forced."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

import history
from connectors.errors import ServerError
from flows import address_batch as batch_module
from flows import batch_steps
from flows.address_batch import address_batch
from flows.cleanup import cleanup
from runtime.settings import get_settings
from tasks.address_service.cleanup import CleanupReport
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


class _Killed(BaseException):
    pass


async def test_cleanup_deletes_left_files_past_the_age_and_closes_their_job(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def crash(*args: object, **kwargs: object) -> None:
        raise _Killed

    async def no_cleanup(*args: object) -> CleanupReport:
        return CleanupReport()

    with monkeypatch.context() as patched:
        patched.setattr(batch_steps, "wait_for_batch", crash)
        patched.setattr(batch_module, "delete_key_files", no_cleanup)
        with pytest.raises(_Killed):
            await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)

    young = await call(cleanup, older_than_hours=1)
    assert young.deleted == [] and young.kept == {} and sandbox.transport.count("/deletefile") == 0

    factory = history.session_factory(get_settings().effective_database_url)
    with factory.begin() as session:
        for job in session.query(history.RemoteJob):
            job.created_at = history.utcnow() - timedelta(hours=2)
    # The killed run's job may still run on the service: its files stay until asked for by force.
    owed = await call(cleanup, older_than_hours=1)
    assert owed.deleted == [] and sandbox.transport.count("/deletefile") == 0
    assert len(owed.kept) == 2
    assert {kept["reason"] for kept in owed.kept.values()} == {"job may still run"}
    summary = await call(cleanup, older_than_hours=1, force=True)
    assert len(summary.deleted) == 2 and summary.not_deleted == {} and summary.kept == {}
    with factory() as session:
        jobs = {job.kind: job for job in session.query(history.RemoteJob)}
    assert jobs["upload-file"].deleted_at is not None and jobs["output-file"].deleted_at is not None
    assert jobs["batch"].status == "DELETED"

    # The next run with the same work starts a new job instead of resuming one whose files are gone.
    result = await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert result.result_rows == result.accepted_rows
    assert sandbox.transport.count("/runbatch") == 2


async def test_a_finished_job_whose_download_failed_keeps_its_files_until_the_services_retention(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox.inject(api="address", endpoint="downloadfile/*", kind="http_status", value=503, times=None)
    with pytest.raises(ServerError):
        await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    sandbox.config.faults.clear()
    factory = history.session_factory(get_settings().effective_database_url)

    def age_every_job(days: float) -> str:
        with factory.begin() as session:
            for job in session.query(history.RemoteJob):
                job.created_at = history.utcnow() - timedelta(days=days)
            (batch,) = session.query(history.RemoteJob).filter_by(kind="batch")
            assert batch.status == "FINISHED"
            return batch.remote_id

    batch_token = age_every_job(8)
    week_later = await call(cleanup)
    assert week_later.deleted == [] and sandbox.transport.count("/deletefile") == 0
    owed = {"job": batch_token, "state": "FINISHED", "reason": "result not downloaded yet"}
    assert list(week_later.kept.values()) == [owed, owed]

    age_every_job(93)  # past the service's three months: it has deleted the files by now anyway
    later = await call(cleanup)
    assert len(later.deleted) + len(later.already_gone) == 2 and later.kept == {}
    with factory() as session:
        jobs = {job.kind: job for job in session.query(history.RemoteJob)}
    assert jobs["upload-file"].deleted_at is not None and jobs["output-file"].deleted_at is not None
    assert jobs["batch"].status == "DELETED"
