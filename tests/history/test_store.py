"""The history store on SQLite and PostgreSQL: runs, steps, remote jobs, events, documents, messages."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from core.redaction import MASK
from history import (
    JobEvent,
    RemoteJob,
    Run,
    RunState,
    StepRecord,
    find_document,
    find_remote_job,
    finish_run,
    get_run,
    jobs_for_key,
    jobs_recorded_since,
    latest_run,
    list_runs,
    record_document,
    record_message,
    record_step,
    save_remote_job,
    start_run,
    update_remote_job,
)
from history.remote_jobs import JobChange, RemoteReport

Factory = sessionmaker[Session]


def _new_run(factory: Factory, *, flow: str = "flow", key: str | None = None) -> Run:
    with factory.begin() as session:
        return start_run(session, flow=flow, idempotency_key=key)


def test_run_lifecycle(history_factory: Factory) -> None:
    with history_factory.begin() as session:
        run = start_run(
            session, flow="purchase", idempotency_key="k-1", parameters={"year": 2026}, flow_run_id="fr-1"
        )
    assert run.id is not None
    assert run.state == RunState.RUNNING
    assert run.started_at.tzinfo is not None and run.finished_at is None and run.duration is None

    with history_factory.begin() as session:
        finish_run(session, run, state=RunState.COMPLETED, summary={"orders": 3})

    assert run.state == "COMPLETED"
    with history_factory.begin() as session:
        stored = get_run(session, run.id)
    assert stored is not None
    assert (stored.flow, stored.flow_run_id, stored.idempotency_key) == ("purchase", "fr-1", "k-1")
    assert stored.parameters == {"year": 2026}
    assert stored.summary == {"orders": 3}
    assert stored.state == "COMPLETED" and stored.error is None
    assert stored.finished_at is not None and stored.finished_at.utcoffset() == timedelta(0)
    assert stored.duration is not None and stored.duration >= timedelta(0)


def test_failed_run_keeps_exception_text(history_factory: Factory) -> None:
    run = _new_run(history_factory)
    with history_factory.begin() as session:
        finish_run(session, run, state="FAILED", error=RuntimeError("remote said no"))
    with history_factory.begin() as session:
        stored = get_run(session, run.id)
    assert stored is not None
    assert (stored.state, stored.error) == ("FAILED", "RuntimeError: remote said no")


def test_finish_run_refuses_running_and_unknown_states(history_factory: Factory) -> None:
    run = _new_run(history_factory)
    with pytest.raises(ValueError), history_factory.begin() as session:
        finish_run(session, run, state=RunState.RUNNING)
    with pytest.raises(ValueError), history_factory.begin() as session:
        finish_run(session, run, state="DONE")


def test_finish_run_with_a_copy_already_in_the_session(history_factory: Factory) -> None:
    run = _new_run(history_factory)
    with history_factory.begin() as session:
        loaded = get_run(session, run.id)
        stored = finish_run(session, run, state="CANCELLED")
        assert stored is loaded
    assert run.state == "CANCELLED"


def test_parameters_are_scrubbed(history_factory: Factory, tmp_path: Path) -> None:
    parameters = {
        "password": "hunter2",
        "Client_Secret": "s3cr3t",
        "settings": {"newspaper": {"access-token": "tok-123", "api_key": "k-999", "user": "ann"}},
        "headers": [{"Authorization": "Basic abc"}],
        "login": SecretStr("wrapped-secret"),
        "out_dir": tmp_path / "out",
        "since": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        "count": 3,
    }
    with history_factory.begin() as session:
        run = start_run(session, flow="scrub", parameters=parameters)
    with history_factory.begin() as session:
        stored = get_run(session, run.id)
    assert stored is not None
    assert stored.parameters == {
        "password": MASK,
        "Client_Secret": MASK,
        "settings": {"newspaper": {"access-token": MASK, "api_key": MASK, "user": "ann"}},
        "headers": [{"Authorization": MASK}],
        "login": MASK,
        "out_dir": str(tmp_path / "out"),
        "since": "2026-01-02T03:04:05+00:00",
        "count": 3,
    }


def test_latest_run_is_newest_for_flow_and_key(history_factory: Factory) -> None:
    first = _new_run(history_factory, flow="purchase", key="k")
    second = _new_run(history_factory, flow="purchase", key="k")
    _new_run(history_factory, flow="other", key="k")
    _new_run(history_factory, flow="purchase", key="other")

    with history_factory.begin() as session:
        latest = latest_run(session, flow="purchase", idempotency_key="k")
        missing = latest_run(session, flow="purchase", idempotency_key="nope")
    assert latest is not None and latest.id == second.id != first.id
    assert missing is None


def test_steps_are_recorded_in_order(history_factory: Factory) -> None:
    run = _new_run(history_factory)
    began = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    with history_factory.begin() as session:
        record_step(
            session, run, StepRecord(name="upload", outcome="retried", duration_s=0.5, detail="HTTP 503")
        )
        record_step(
            session,
            run,
            StepRecord(name="upload", outcome="ok", duration_s=1.25, attempt=2, started_at=began),
        )
    with history_factory.begin() as session:
        stored = get_run(session, run.id)
    assert stored is not None
    assert [(s.name, s.attempt, s.outcome, s.duration_s, s.detail) for s in stored.steps] == [
        ("upload", 1, "retried", 0.5, "HTTP 503"),
        ("upload", 2, "ok", 1.25, None),
    ]
    assert stored.steps[1].started_at == began
    assert stored.steps[0].started_at.tzinfo is not None


def test_naive_datetimes_are_refused(history_factory: Factory) -> None:
    run = _new_run(history_factory)
    with pytest.raises(Exception, match="naive datetime"), history_factory.begin() as session:
        record_step(
            session, run, StepRecord(name="x", outcome="ok", duration_s=1, started_at=datetime(2026, 1, 1))
        )


def test_save_remote_job_upserts_on_api_kind_remote_id(history_factory: Factory) -> None:
    first_run = _new_run(history_factory)
    second_run = _new_run(history_factory)
    with history_factory.begin() as session:
        job = save_remote_job(
            session,
            first_run,
            api="newspaper",
            kind="batch",
            remote_id="B-1",
            change=JobChange(status="NEW", data={"n": 1}),
        )
    with history_factory.begin() as session:
        again = save_remote_job(
            session,
            second_run,
            api="newspaper",
            kind="batch",
            remote_id="B-1",
            idempotency_key="k",
            change=JobChange(status="RUNNING", data={"m": 2}),
        )
        other_kind = save_remote_job(session, second_run, api="newspaper", kind="order", remote_id="B-1")
    assert again.id == job.id
    assert other_kind.id != job.id
    with history_factory.begin() as session:
        jobs = jobs_for_key(session, idempotency_key="k")
        stored = get_run(session, first_run.id)
    assert [j.id for j in jobs] == [job.id]
    assert stored is not None
    [stored_job] = stored.remote_jobs
    assert stored_job.run_id == first_run.id  # the creating run keeps the job
    assert (stored_job.status, stored_job.idempotency_key, stored_job.data) == (
        "RUNNING",
        "k",
        {"n": 1, "m": 2},
    )
    assert [e.status for e in stored_job.events] == ["NEW", "RUNNING"]


def test_a_new_job_keeps_the_whole_change_and_a_report_may_give_it_a_new_id(history_factory: Factory) -> None:
    run = _new_run(history_factory)
    said_at = datetime(2026, 5, 1, 8, 30, tzinfo=UTC)
    report = RemoteReport(remote_status="DONE", progress=100, status_date=said_at)
    change = JobChange(status="COMPLETED", report=report, finished=True, deleted=True, detail="cleaned up")
    with history_factory.begin() as session:
        job = save_remote_job(session, run, api="address", kind="batch", remote_id="T-1", change=change)
        update_remote_job(session, job, JobChange(report=RemoteReport(remote_id="T-2")))
    with history_factory.begin() as session:
        [stored] = session.scalars(select(RemoteJob).where(RemoteJob.id == job.id)).all()
        assert (stored.remote_id, stored.status, stored.remote_status, stored.progress) == (
            "T-2",
            "COMPLETED",
            "DONE",
            100,
        )
        assert stored.finished_at is not None and stored.deleted_at is not None
        [event] = stored.events
        assert (event.status, event.detail, event.status_date) == ("COMPLETED", "cleaned up", said_at)


def test_events_only_on_change(history_factory: Factory) -> None:
    run = _new_run(history_factory)
    with history_factory.begin() as session:
        job = save_remote_job(session, run, api="address", kind="batch", remote_id="T-9")
    status_date = datetime(2026, 5, 1, 8, 30, tzinfo=UTC)
    observed: list[JobEvent | None] = []
    with history_factory.begin() as session:
        observed.append(
            update_remote_job(
                session,
                job,
                JobChange(status="queued", report=RemoteReport(progress=0, status_date=status_date)),
            )
        )
        observed.append(
            update_remote_job(session, job, JobChange(status="queued", report=RemoteReport(progress=0)))
        )
        observed.append(update_remote_job(session, job, JobChange(report=RemoteReport(progress=40))))
        observed.append(update_remote_job(session, job, JobChange(status="queued")))
        observed.append(update_remote_job(session, job, JobChange(data={"rows": 10})))
    with history_factory.begin() as session:
        observed.append(
            update_remote_job(
                session, job, JobChange(status="done", report=RemoteReport(progress=100), finished=True)
            )
        )
        observed.append(update_remote_job(session, job, JobChange(status="done", finished=True)))

    assert [event is not None for event in observed] == [True, False, True, False, False, True, False]
    with history_factory.begin() as session:
        stored = get_run(session, run.id)
    assert stored is not None
    [stored_job] = stored.remote_jobs
    assert [(e.status, e.progress) for e in stored_job.events] == [
        ("queued", 0),
        ("queued", 40),
        ("done", 100),
    ]
    assert stored_job.events[0].status_date == status_date
    assert (stored_job.status, stored_job.progress, stored_job.data) == ("done", 100, {"rows": 10})
    assert stored_job.finished_at is not None and stored_job.deleted_at is None
    assert job.finished_at == stored_job.finished_at  # the caller's object follows along
    assert stored_job.updated_at >= stored_job.created_at


def test_find_remote_job_newest_and_ignores_deleted(history_factory: Factory) -> None:
    run = _new_run(history_factory)
    with history_factory.begin() as session:
        old = save_remote_job(
            session, run, api="newspaper", kind="upload-file", remote_id="F-1", idempotency_key="k"
        )
        new = save_remote_job(
            session, run, api="newspaper", kind="upload-file", remote_id="F-2", idempotency_key="k"
        )
        save_remote_job(
            session, run, api="newspaper", kind="output-file", remote_id="F-3", idempotency_key="k"
        )
        save_remote_job(
            session, run, api="commerce", kind="upload-file", remote_id="F-4", idempotency_key="k"
        )

    def find(*, include_deleted: bool = False) -> RemoteJob | None:
        with history_factory.begin() as session:
            return find_remote_job(
                session,
                api="newspaper",
                kind="upload-file",
                idempotency_key="k",
                include_deleted=include_deleted,
            )

    assert (found := find()) is not None and found.id == new.id
    with history_factory.begin() as session:
        update_remote_job(session, new, JobChange(deleted=True))
    assert (found := find()) is not None and found.id == old.id
    assert (found := find(include_deleted=True)) is not None and found.id == new.id
    with history_factory.begin() as session:
        update_remote_job(session, old, JobChange(deleted=True))
        assert find_remote_job(session, api="newspaper", kind="upload-file", idempotency_key="other") is None
    assert find() is None

    with history_factory.begin() as session:
        everything = jobs_for_key(session, idempotency_key="k")
        newspaper = jobs_for_key(session, idempotency_key="k", api="newspaper")
    assert [j.remote_id for j in everything] == ["F-1", "F-2", "F-3", "F-4"]
    assert [j.remote_id for j in newspaper] == ["F-1", "F-2", "F-3"]


def test_jobs_recorded_since_are_of_one_api_and_kind_not_deleted_oldest_first(
    history_factory: Factory,
) -> None:
    run = _new_run(history_factory)
    now = datetime.now(UTC)
    with history_factory.begin() as session:
        for remote_id, api, kind in (
            ("7000001", "newspaper", "order"),
            ("7000002", "newspaper", "order"),
            ("7000003", "newspaper", "order"),
            ("P-1", "newspaper", "purchase"),
            ("7000004", "commerce", "order"),
        ):
            save_remote_job(session, run, api=api, kind=kind, remote_id=remote_id)
        by_id = {job.remote_id: job for job in session.scalars(select(RemoteJob))}
        by_id["7000001"].created_at = now - timedelta(days=31)
        update_remote_job(session, by_id["7000003"], JobChange(deleted=True))

    def since(days: float) -> list[str]:
        with history_factory.begin() as session:
            jobs = jobs_recorded_since(
                session, api="newspaper", kind="order", since=now - timedelta(days=days)
            )
            return [job.remote_id for job in jobs]

    assert since(30) == ["7000002"]
    assert since(32) == ["7000001", "7000002"]


def test_documents_have_size_and_sha256(history_factory: Factory, tmp_path: Path) -> None:
    content = b"%PDF-1.4\n" + bytes(range(256)) * 9000  # > 2 MiB, so it is hashed in several chunks
    pdf = tmp_path / "invoice.pdf"
    pdf.write_bytes(content)
    run = _new_run(history_factory)
    with history_factory.begin() as session:
        job = save_remote_job(session, run, api="commerce", kind="purchase", remote_id="P-1")
        document = record_document(session, run, kind="invoice-pdf", path=pdf, remote_job=job)
        record_document(session, run, kind="other", path=str(pdf))

    expected = hashlib.sha256(content).hexdigest()
    assert (document.size, document.sha256, document.path) == (len(content), expected, str(pdf.resolve()))
    with history_factory.begin() as session:
        found = find_document(session, kind="invoice-pdf", sha256=expected.upper())
        assert find_document(session, kind="invoice-pdf", sha256="0" * 64) is None
        stored = get_run(session, run.id)
    assert found is not None and found.id == document.id and found.remote_job_id == job.id
    assert stored is not None and [d.kind for d in stored.documents] == ["invoice-pdf", "other"]


def test_messages(history_factory: Factory) -> None:
    run = _new_run(history_factory)
    with history_factory.begin() as session:
        record_message(session, run, level="warning", code="W-204", text="Edition not yet printed")
        record_message(session, run, level="info", code=None, text="resumed")
        with pytest.raises(ValueError):
            record_message(session, run, level="fatal", code="X", text="nope")
    with history_factory.begin() as session:
        stored = get_run(session, run.id)
    assert stored is not None
    assert [(m.level, m.code, m.text) for m in stored.messages] == [
        ("warning", "W-204", "Edition not yet printed"),
        ("info", None, "resumed"),
    ]


def test_list_runs_newest_first_with_limit_and_flow(history_factory: Factory) -> None:
    ids = [_new_run(history_factory, flow="a" if n % 2 else "b").id for n in range(5)]
    with history_factory.begin() as session:
        everything = list_runs(session)
        limited = list_runs(session, limit=2)
        only_a = list_runs(session, flow="a")
    assert [r.id for r in everything] == ids[::-1]
    assert [r.id for r in limited] == ids[:-3:-1]
    assert [r.id for r in only_a] == [ids[3], ids[1]]


def test_get_run_loads_everything_for_use_after_the_session(history_factory: Factory, tmp_path: Path) -> None:
    (tmp_path / "result.csv").write_text("a,b\n1,2\n")
    run = _new_run(history_factory)
    with history_factory.begin() as session:
        record_step(session, run, StepRecord(name="submit", outcome="ok", duration_s=0.1))
        job = save_remote_job(
            session, run, api="address", kind="batch", remote_id="T", change=JobChange(status="open")
        )
        update_remote_job(session, job, JobChange(status="closed"))
        record_document(session, run, kind="result-csv", path=tmp_path / "result.csv", remote_job=job)
        record_message(session, run, level="error", code="E1", text="bad row")
    with history_factory.begin() as session:
        stored = get_run(session, run.id)
        assert get_run(session, run.id + 1000) is None
    assert stored is not None
    # The session is closed: anything not eagerly loaded would raise DetachedInstanceError here.
    assert [s.name for s in stored.steps] == ["submit"]
    assert [[e.status for e in j.events] for j in stored.remote_jobs] == [["open", "closed"]]
    assert [d.size for d in stored.documents] == [8]
    assert [m.code for m in stored.messages] == ["E1"]


def test_a_recorded_job_keeps_the_key_it_was_created_under(history_factory: Factory) -> None:
    run = _new_run(history_factory)
    with history_factory.begin() as session:
        save_remote_job(
            session, run, api="newspaper", kind="order", remote_id="O-1", idempotency_key="order-key"
        )
    with history_factory.begin() as session:
        save_remote_job(
            session,
            run,
            api="newspaper",
            kind="order",
            remote_id="O-1",
            idempotency_key="reports-key",
            change=JobChange(status="DONE"),
        )
    with history_factory.begin() as session:
        found = find_remote_job(session, api="newspaper", kind="order", idempotency_key="order-key")
        assert found is not None and found.status == "DONE"
        assert find_remote_job(session, api="newspaper", kind="order", idempotency_key="reports-key") is None
