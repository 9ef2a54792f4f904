"""Recording a flow run in the run history: the run, its steps, remote jobs, documents and messages, on top
of the lease that lets one run at a time work on an idempotency key (:mod:`history.leased_run`).

Flows hold one :class:`RunRecorder`. Remote jobs are read back as detached :class:`JobSnapshot` values, so
callers never touch ORM objects. Every text written for the reader (a step's or an event's detail, the run's
parameters, error and summary, a message) goes through the process's secret scrubber first
(:mod:`core.redaction`), so a service that echoes a password leaves it nowhere; a job's data (the handles a
later run resumes with) is kept as it is.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from core.redaction import redact, scrubbed_json
from history.db import session_factory
from history.job_recorder import DETAIL_CHARS, JobRecorder, updated_job
from history.jobs import JobSnapshot
from history.leased_run import RunOutputs, record_shielded
from history.models import RemoteJob
from history.remote_jobs import JobChange
from history.step_writer import RequestAttempt, StepWriter
from history.store import (
    StepRecord,
    abandon_stale_runs,
    finish_run,
    history_identity,
    record_document,
    record_message,
    record_step,
    recorded_flow_run,
    start_run,
)

__all__ = [
    "JobSnapshot",
    "RecordedFailure",
    "RunOutputs",
    "RunRecorder",
    "record_shielded",
    "record_unrecorded_failure",
]


class RunRecorder(JobRecorder):
    """Writes one flow run's history, and keeps the run's :class:`RunOutputs` for its summary.

    Every text written for the reader passes the process's secret scrubber (:mod:`core.redaction`).
    """

    def __init__(
        self,
        factory: sessionmaker[Session],
        run_id: int,
        *,
        flow: str,
        idempotency_key: str | None,
        history_id: str = "",
    ) -> None:
        super().__init__(factory, run_id, flow=flow, idempotency_key=idempotency_key, history_id=history_id)
        self._steps = StepWriter(self._write_request_steps)

    @classmethod
    async def start(
        cls,
        database_url: str,
        *,
        flow: str,
        idempotency_key: str | None,
        parameters: Mapping[str, Any],
        flow_run_id: str | None = None,
    ) -> RunRecorder:
        """Record a new run of ``flow`` (the orchestrator's run ``flow_run_id``, if any) and return its
        recorder; it does not hold its key yet (:meth:`hold_key`)."""

        def start() -> RunRecorder:
            factory = session_factory(database_url)
            with factory.begin() as session:
                run = start_run(
                    session,
                    flow=flow,
                    idempotency_key=idempotency_key,
                    parameters=scrubbed_json(dict(parameters)),
                    flow_run_id=flow_run_id,
                )
                session.flush()
                run_id = run.id
                history_id = history_identity(session)
            return cls(
                factory,
                run_id,
                flow=flow,
                idempotency_key=idempotency_key,
                history_id=history_id,
            )

        return await asyncio.to_thread(start)

    def for_key(self, key: str) -> RunRecorder:
        """This run's recorder for one piece of its work that has its own idempotency key (one row of a
        file): jobs are recorded and found under ``key``, and a submission is recorded only while the run
        still holds its own key, whose lease guards every piece."""
        piece = copy.copy(self)
        piece.idempotency_key = key
        piece._lease_key = self._lease_key or self.idempotency_key
        return piece

    # -- the run ---------------------------------------------------------------------------------------

    async def finish(
        self, state: str, *, error: str | None = None, summary: Mapping[str, Any] | None = None
    ) -> None:
        """Record how the run ended and let go of its key, in one transaction: a claimant never sees the run
        ended while it still holds the key (it would take the key over and record this hold as lost)."""
        await self._write(self._steps.close)
        self._stop_renewing()

        clean_error = None if error is None else redact(error)
        clean_summary = None if summary is None else scrubbed_json(dict(summary))

        def finish() -> None:
            with self._factory.begin() as session:
                finish_run(session, self._run(session), state=state, error=clean_error, summary=clean_summary)
                self._give_back(session)
            self.holds_key = False

        try:
            await self._write(finish)
        finally:
            await self._release_key()

    @asynccontextmanager
    async def step(self, name: str, *, detail: str | None = None) -> AsyncIterator[None]:
        """Record a local step with its duration and outcome."""
        started = time.monotonic()
        try:
            yield
        except BaseException as error:
            await self._write(
                self._record_step, name, type(error).__name__, time.monotonic() - started, str(error)
            )
            raise
        await self._write(self._record_step, name, "ok", time.monotonic() - started, detail)

    def _record_step(self, name: str, outcome: str, duration_s: float, detail: str | None) -> None:
        with self._factory.begin() as session:
            step = StepRecord(name, outcome, duration_s, detail=self._text(detail))
            record_step(session, self._run(session), step)

    def request_log(self, record: RequestAttempt) -> None:
        """Hook for the HTTP clients' request log: one step per remote call attempt, written aside."""
        self._steps.put(record)

    def _write_request_steps(self, records: list[RequestAttempt]) -> None:
        with self._factory.begin() as session:
            run = self._run(session)
            for record in records:
                step = StepRecord(
                    name=f"{record.api} {record.method} {record.path}",
                    outcome=record.outcome,
                    duration_s=record.duration_s,
                    attempt=record.attempt,
                    detail=self._text(record.error) if record.error else None,
                )
                record_step(session, run, step)

    async def abandon_stale_runs(self) -> list[int]:
        """Mark earlier RUNNING runs of this work as abandoned when this run resumes what they started."""
        key = self.idempotency_key
        if not key:
            return []

        def abandon() -> list[int]:
            with self._factory.begin() as session:
                return abandon_stale_runs(
                    session, flow=self.flow, idempotency_key=key, resumed_by=self._run(session)
                )

        return await self._write(abandon)

    # -- documents and messages ------------------------------------------------------------------------

    def note_reused(self, what: str, which: str) -> None:
        """Say that this run took up earlier work (``what``, e.g. ``address batch``; ``which``, e.g. its id
        and run) instead of doing it again; the run summary lists it."""
        self.outputs.reused.setdefault(what, []).append(which)

    def note_replaced(self, what: str, which: str) -> None:
        """Say that this run submitted ``what`` anew over an earlier submission (``which``: its id, state and
        run), as ``--resubmit`` asked; the run summary lists it."""
        self.outputs.replaced.setdefault(what, []).append(which)

    async def document(self, kind: str, path: Path, *, job: JobSnapshot | None = None) -> None:
        """Record a file this run wrote (with its size and SHA-256), and list it in the run's outputs."""
        await self.documents([(kind, path)], job=job)

    async def documents(self, files: Iterable[tuple[str, Path]], *, job: JobSnapshot | None = None) -> None:
        """Record the files this run wrote, each ``(kind, path)`` with its size and SHA-256, in one
        transaction, and list them in the run's outputs."""
        files = self._listed(files)

        def record() -> None:
            with self._factory.begin() as session:
                remote_job = session.get(RemoteJob, job.id) if job is not None else None
                self._record_documents(session, files, remote_job)

        if files:
            await self._write(record)

    async def job_documents(
        self, job: JobSnapshot, files: Iterable[tuple[str, Path]], change: JobChange
    ) -> JobSnapshot:
        """Record the files ``job`` gave, as :meth:`documents` does, and ``change`` to the job (see
        :meth:`change`), in one transaction; returns the job as stored."""
        files = self._listed(files)

        def record() -> JobSnapshot:
            with self._factory.begin() as session:
                self._record_documents(session, files, session.get(RemoteJob, job.id))
                return updated_job(session, job, change)

        return await self._write(record)

    def _listed(self, files: Iterable[tuple[str, Path]]) -> list[tuple[str, Path]]:
        """``files`` listed in the run's outputs."""
        files = list(files)
        for kind, path in files:
            self.outputs.documents.setdefault(path.resolve(), kind)
        return files

    def _record_documents(
        self, session: Session, files: list[tuple[str, Path]], remote_job: RemoteJob | None
    ) -> None:
        run = self._run(session)
        for kind, path in files:
            record_document(session, run, kind=kind, path=path, remote_job=remote_job)

    async def message(self, level: str, code: str, text: str) -> None:
        clean = redact(text)

        def record() -> None:
            with self._factory.begin() as session:
                record_message(session, self._run(session), level=level, code=code, text=clean)

        await self._write(record)


@dataclass(frozen=True)
class RecordedFailure:
    """A failed run recorded by :func:`record_unrecorded_failure`: its id in the history, and the
    history's id."""

    run_id: int
    history_id: str


async def record_unrecorded_failure(
    database_url: str,
    *,
    flow: str,
    flow_run_id: str,
    parameters: Mapping[str, Any],
    error: str,
) -> RecordedFailure | None:
    """Record a run of the flow run ``flow_run_id`` that failed before it opened its own record (a missing
    input file, a parameter the flow does not take): FAILED, with ``error``. Returns the new run, or None
    when the flow run is recorded already."""

    def record() -> RecordedFailure | None:
        factory = session_factory(database_url)
        with factory.begin() as session:
            if recorded_flow_run(session, flow_run_id):
                return None
            run = start_run(
                session,
                flow=flow,
                parameters=scrubbed_json(dict(parameters)),
                flow_run_id=flow_run_id,
            )
            finish_run(session, run, state="FAILED", error=redact(error)[:DETAIL_CHARS], summary=None)
            return RecordedFailure(run.id, history_identity(session))

    return await asyncio.to_thread(record)
