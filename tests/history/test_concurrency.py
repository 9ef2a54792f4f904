"""Many threads writing the history at once must neither fail nor lose rows ("database is locked")."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from history import (
    JobEvent,
    RemoteJob,
    Run,
    Step,
    StepRecord,
    finish_run,
    record_step,
    save_remote_job,
    start_run,
    update_remote_job,
)
from history.remote_jobs import JobChange, RemoteReport

WRITERS = 20
RUNS_PER_WRITER = 3
STEPS_PER_RUN = 4


def _writer(factory: sessionmaker[Session], barrier: Barrier, writer: int) -> None:
    barrier.wait()
    for number in range(RUNS_PER_WRITER):
        with factory.begin() as session:
            run = start_run(session, flow="concurrent", idempotency_key=f"w{writer}-{number}")
        for step in range(STEPS_PER_RUN):
            with factory.begin() as session:
                record_step(session, run, StepRecord(name=f"step-{step}", outcome="ok", duration_s=0.01))
        with factory.begin() as session:
            # Every writer polls the same shared job: upserts and events race on one row.
            job = save_remote_job(session, run, api="newspaper", kind="batch", remote_id="shared")
            update_remote_job(
                session, job, JobChange(report=RemoteReport(progress=float(writer * 100 + number)))
            )
            finish_run(session, run, state="COMPLETED")


def test_concurrent_writers(history_factory: sessionmaker[Session]) -> None:
    barrier = Barrier(WRITERS)
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        futures = [pool.submit(_writer, history_factory, barrier, writer) for writer in range(WRITERS)]
        for future in futures:
            future.result(timeout=90)

    with history_factory.begin() as session:
        assert session.scalar(select(func.count()).select_from(Run)) == WRITERS * RUNS_PER_WRITER
        assert (
            session.scalar(select(func.count()).select_from(Step))
            == WRITERS * RUNS_PER_WRITER * STEPS_PER_RUN
        )
        assert session.scalar(select(func.count()).select_from(RemoteJob)) == 1
        # Progress values are distinct per write, so each write that changed progress left an event.
        assert session.scalar(select(func.count()).select_from(JobEvent)) == WRITERS * RUNS_PER_WRITER
        states = set(session.scalars(select(Run.state)))
    assert states == {"COMPLETED"}
