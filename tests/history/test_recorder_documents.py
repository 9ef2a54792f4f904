"""The recorder's documents: the files a run wrote, recorded with their size and SHA-256 and listed in the
run's outputs, several in one transaction."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import event, select

import history
from history.models import Document, JobState
from tasks.run_history import start_recording


async def test_several_files_are_recorded_in_one_transaction_with_their_job_and_listed_once(
    database_url: str, tmp_path: Path
) -> None:
    files = {name: tmp_path / f"{name}.csv" for name in ("results", "rejected", "summary")}
    for name, path in files.items():
        path.write_text(f"{name}\n" * 3)
    recorder = await start_recording(database_url, flow="documents", idempotency_key=None, parameters={})
    job = await recorder.save_job(api="test", kind="batch", remote_id="job-1", status=JobState.SUBMITTED)
    engine = history.db.session_factory(database_url).kw["bind"]
    transactions: list[object] = []

    def committed(connection: object) -> None:
        transactions.append(connection)

    event.listen(engine, "commit", committed)
    try:
        await recorder.documents([(path.stem, path) for path in files.values()], job=job)
        await recorder.documents([])  # nothing to record: no transaction
        await recorder.document("results again", files["results"])
    finally:
        event.remove(engine, "commit", committed)
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
