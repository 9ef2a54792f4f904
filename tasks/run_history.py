"""Recording a flow run in the run history: the run, its steps, remote jobs, documents and messages.

Flows hold one :class:`RunRecorder`; each call is its own short transaction so a crash loses nothing that
was already acknowledged by a remote service. Remote jobs are read back as detached :class:`JobSnapshot`
values, so callers never touch ORM objects.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

import history
from connectors.http import RequestRecord
from history.models import RemoteJob, Run


@dataclass(frozen=True)
class JobSnapshot:
    """A remote job as recorded: its ids, last status and free-form data."""

    id: int
    api: str
    kind: str
    remote_id: str
    status: str | None
    progress: float | None
    data: dict[str, Any] = field(default_factory=dict)
    finished: bool = False
    deleted: bool = False

    @classmethod
    def of(cls, job: RemoteJob) -> JobSnapshot:
        return cls(
            id=job.id,
            api=job.api,
            kind=job.kind,
            remote_id=job.remote_id,
            status=job.status,
            progress=job.progress,
            data=dict(job.data or {}),
            finished=job.finished_at is not None,
            deleted=job.deleted_at is not None,
        )


def _flow_run_id() -> str | None:
    try:
        from prefect.runtime import flow_run

        run_id = flow_run.get_id()
    except Exception:  # noqa: BLE001 - outside a flow run there is simply no id
        return None
    return str(run_id) if run_id else None


class RunRecorder:
    """Writes one flow run's history."""

    def __init__(
        self, factory: sessionmaker[Session], run_id: int, *, flow: str, idempotency_key: str | None
    ):
        self._factory = factory
        self.run_id = run_id
        self.flow = flow
        self.idempotency_key = idempotency_key

    @classmethod
    def start(
        cls,
        database_url: str,
        *,
        flow: str,
        idempotency_key: str | None,
        parameters: Mapping[str, Any],
    ) -> RunRecorder:
        factory = history.session_factory(database_url)
        with factory.begin() as session:
            run = history.start_run(
                session,
                flow=flow,
                idempotency_key=idempotency_key,
                parameters=dict(parameters),
                flow_run_id=_flow_run_id(),
            )
            session.flush()
            run_id = run.id
        return cls(factory, run_id, flow=flow, idempotency_key=idempotency_key)

    def _run(self, session: Session) -> Run:
        run = session.get(Run, self.run_id)
        if run is None:  # pragma: no cover - the run row is never deleted while the flow runs
            raise LookupError(f"run {self.run_id} vanished from the history")
        return run

    def finish(
        self, state: str, *, error: str | None = None, summary: Mapping[str, Any] | None = None
    ) -> None:
        with self._factory.begin() as session:
            history.finish_run(session, self._run(session), state=state, error=error, summary=summary)

    @contextmanager
    def step(self, name: str, *, detail: str | None = None) -> Iterator[None]:
        """Record a local step with its duration and outcome."""
        started = time.monotonic()
        try:
            yield
        except BaseException as error:
            self._record_step(name, type(error).__name__, time.monotonic() - started, detail=str(error)[:500])
            raise
        self._record_step(name, "ok", time.monotonic() - started, detail=detail)

    def _record_step(
        self, name: str, outcome: str, duration_s: float, *, attempt: int = 1, detail: str | None = None
    ) -> None:
        with self._factory.begin() as session:
            history.record_step(
                session,
                self._run(session),
                name=name,
                outcome=outcome,
                duration_s=duration_s,
                attempt=attempt,
                detail=detail,
            )

    def request_log(self, record: RequestRecord) -> None:
        """Hook for :class:`connectors.http.ApiClient`: one step per remote call attempt."""
        self._record_step(
            f"{record.api} {record.method} {record.path}",
            record.outcome,
            record.duration_s,
            attempt=record.attempt,
            detail=record.error[:500] if record.error else None,
        )

    def abandon_stale_runs(self) -> list[int]:
        """Mark earlier RUNNING runs of this work as abandoned when this run resumes what they started."""
        if not self.idempotency_key:
            return []
        with self._factory.begin() as session:
            return history.abandon_stale_runs(
                session, flow=self.flow, idempotency_key=self.idempotency_key, resumed_by=self._run(session)
            )

    def save_job(
        self,
        *,
        api: str,
        kind: str,
        remote_id: str,
        status: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> JobSnapshot:
        with self._factory.begin() as session:
            job = history.save_remote_job(
                session,
                self._run(session),
                api=api,
                kind=kind,
                remote_id=remote_id,
                idempotency_key=self.idempotency_key,
                status=status,
                data=dict(data or {}),
            )
            session.flush()
            return JobSnapshot.of(job)

    def update_job(
        self,
        job: JobSnapshot,
        *,
        status: str | None = None,
        progress: float | None = None,
        status_date: datetime | None = None,
        data: Mapping[str, Any] | None = None,
        finished: bool = False,
        deleted: bool = False,
    ) -> None:
        with self._factory.begin() as session:
            row = session.get(RemoteJob, job.id)
            if row is None:  # pragma: no cover
                raise LookupError(f"remote job {job.id} vanished from the history")
            history.update_remote_job(
                session,
                row,
                status=status,
                progress=progress,
                status_date=status_date,
                data=dict(data) if data is not None else None,
                finished=finished,
                deleted=deleted,
            )

    def find_job(self, *, api: str, kind: str, include_deleted: bool = False) -> JobSnapshot | None:
        """The newest job of this kind recorded under this run's idempotency key (by any earlier run)."""
        if not self.idempotency_key:
            return None
        with self._factory.begin() as session:
            job = history.find_remote_job(
                session,
                api=api,
                kind=kind,
                idempotency_key=self.idempotency_key,
                include_deleted=include_deleted,
            )
            return JobSnapshot.of(job) if job is not None else None

    def document(self, kind: str, path: Path, *, job: JobSnapshot | None = None) -> None:
        with self._factory.begin() as session:
            remote_job = session.get(RemoteJob, job.id) if job is not None else None
            history.record_document(session, self._run(session), kind=kind, path=path, remote_job=remote_job)

    def message(self, level: str, code: str, text: str) -> None:
        with self._factory.begin() as session:
            history.record_message(session, self._run(session), level=level, code=code, text=text)
