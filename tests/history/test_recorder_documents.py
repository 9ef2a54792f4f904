"""The recorder's documents: the files a run wrote, recorded with their size and SHA-256 and listed in the
run's outputs, several in one transaction."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import event, select

import history
from history.models import Document, JobState
from tasks.run_history import start_recording


@contextmanager
def _commits(database_url: str) -> Iterator[list[object]]:
    """The transactions committed on the history within the block."""
    engine = history.db.session_factory(database_url).kw["bind"]
    transactions: list[object] = []

    def committed(connection: object) -> None:
        transactions.append(connection)

    event.listen(engine, "commit", committed)
    try:
        yield transactions
    finally:
        event.remove(engine, "commit", committed)


async def test_several_files_are_recorded_in_one_transaction_with_their_job_and_listed_once(
    database_url: str, tmp_path: Path
) -> None:
    files = {name: tmp_path / f"{name}.csv" for name in ("results", "rejected", "summary")}
    for name, path in files.items():
        path.write_text(f"{name}\n" * 3)
    recorder = await start_recording(database_url, flow="documents", idempotency_key=None, parameters={})
    job = await recorder.save_job(api="test", kind="batch", remote_id="job-1", status=JobState.SUBMITTED)
    with _commits(database_url) as transactions:
        await recorder.documents([(path.stem, path) for path in files.values()], job=job)
        await recorder.documents([])  # nothing to record: no transaction
        await recorder.document("results again", files["results"])
    await recorder.finish("COMPLETED")

    assert len(transactions) == 2
    with history.db.session_factory(database_url).begin() as session:
        recorded = session.scalars(select(Document).order_by(Document.id)).all()
        assert [(document.kind, Path(document.path)) for document in recorded] == [
            *((name, path.resolve()) for name, path in files.items()),
            ("results again", files["results"].resolve()),
        ]
        assert [document.remote_job_id for document in recorded] == [job.id] * 3 + [None]
        for document in recorded:
            content = Path(document.path).read_bytes()
            assert (document.size, document.sha256) == (len(content), hashlib.sha256(content).hexdigest())
    assert recorder.outputs.documents == {path.resolve(): name for name, path in files.items()}


async def test_a_file_that_cannot_be_read_records_none_of_its_batch(
    database_url: str, tmp_path: Path
) -> None:
    written = tmp_path / "written.csv"
    written.write_text("x\n")
    recorder = await start_recording(database_url, flow="documents", idempotency_key=None, parameters={})
    with pytest.raises(FileNotFoundError):
        await recorder.documents([("written", written), ("missing", tmp_path / "missing.csv")])
    await recorder.finish("FAILED")
    with history.db.session_factory(database_url).begin() as session:
        assert session.scalars(select(Document)).all() == []


async def test_the_files_a_job_gave_and_its_completion_are_one_transaction(
    database_url: str, tmp_path: Path
) -> None:
    download = tmp_path / "result.txt"
    download.write_text("row\n")
    recorder = await start_recording(database_url, flow="documents", idempotency_key="key", parameters={})
    job = await recorder.save_job(api="test", kind="batch", remote_id="job-1", status=JobState.FINISHED)
    with _commits(database_url) as transactions:
        completed = await recorder.job_documents(
            job,
            [("download", download)],
            recorder.change(status=JobState.COMPLETED, finished=True, data={"download": str(download)}),
        )
    await recorder.finish("COMPLETED")

    assert len(transactions) == 1
    assert (completed.state, completed.data["download"]) == (JobState.COMPLETED, str(download))
    assert completed.finished
    with history.db.session_factory(database_url).begin() as session:
        [document] = session.scalars(select(Document)).all()
        assert (document.kind, document.remote_job_id) == ("download", job.id)
    assert recorder.outputs.documents == {download.resolve(): "download"}


async def test_a_job_whose_file_cannot_be_read_is_left_as_it_was(database_url: str, tmp_path: Path) -> None:
    recorder = await start_recording(database_url, flow="documents", idempotency_key="key", parameters={})
    job = await recorder.save_job(api="test", kind="batch", remote_id="job-1", status=JobState.FINISHED)
    with pytest.raises(FileNotFoundError):
        await recorder.job_documents(
            job, [("download", tmp_path / "gone.txt")], recorder.change(status=JobState.COMPLETED)
        )
    await recorder.finish("FAILED")
    [stored] = await recorder.open_jobs(api="test", kinds=("batch",))
    assert (stored.state, stored.finished) == (JobState.FINISHED, False)


async def test_several_jobs_are_updated_in_one_transaction_in_order(database_url: str) -> None:
    recorder = await start_recording(database_url, flow="documents", idempotency_key="key", parameters={})
    jobs = [
        await recorder.save_job(api="test", kind=kind, remote_id=f"{kind}-1", status=JobState.SUBMITTED)
        for kind in ("upload-file", "output-file", "batch")
    ]
    files = jobs[:2]
    with _commits(database_url) as transactions:
        deleted = await recorder.update_jobs(
            [(job, recorder.change(status=JobState.DELETED, deleted=True)) for job in files]
        )
        assert await recorder.update_jobs([]) == []  # nothing to record: no transaction
    open_jobs = await recorder.open_jobs(api="test", kinds=("upload-file", "output-file", "batch", "other"))
    await recorder.finish("COMPLETED")

    assert len(transactions) == 1
    assert [(job.remote_id, job.state) for job in deleted] == [
        ("upload-file-1", JobState.DELETED),
        ("output-file-1", JobState.DELETED),
    ]
    assert all(job.deleted for job in deleted)
    assert [job.remote_id for job in open_jobs] == ["batch-1"]
