"""Remote jobs and their status events: what each API holds for us, so a re-run resumes, not resubmits."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from history.jobs import BatchJobData, FileJobData, JobSnapshot
from history.models import JobEvent, JobState, RemoteJob, Run, utcnow
from history.rows import attached, json_mapping, mirror


def job_with_remote_id(session: Session, *, api: str, kind: str, remote_id: str) -> RemoteJob | None:
    """The job of this api and kind that the service knows as ``remote_id`` (unique), or None."""
    statement = select(RemoteJob).where(
        RemoteJob.api == api, RemoteJob.kind == kind, RemoteJob.remote_id == remote_id
    )
    return session.scalars(statement).first()


@dataclass(frozen=True)
class RemoteReport:
    """What a service says of one of its jobs; a part left None stays as recorded.

    Attributes:
        remote_id: the id or token the service gave the job.
        remote_status: the job's status in the service's own words.
        progress: progress in percent, when the service reports it.
        status_date: when the service says the status was reached (kept with the event).
    """

    remote_id: str | None = None
    remote_status: str | None = None
    progress: float | None = None
    status_date: datetime | None = None


@dataclass(frozen=True)
class JobChange:
    """What is now known about a remote job; None and False leave a part as recorded.

    Attributes:
        status: where the job stands (a :class:`~history.models.JobState`).
        report: what the service says of it.
        data: keys to merge into the job's data, made JSON-safe with secret-typed values masked (they are
            the service's handles a re-run needs: keys are not masked by name).
        finished: mark the job finished (the first time only).
        deleted: mark the job deleted on the remote side (the first time only).
        detail: free text stored with the event.
    """

    status: str | None = None
    report: RemoteReport = RemoteReport()
    data: Mapping[str, Any] | None = None
    finished: bool = False
    deleted: bool = False
    detail: str | None = None


def save_remote_job(
    session: Session,
    run: Run,
    *,
    api: str,
    kind: str,
    remote_id: str,
    idempotency_key: str | None = None,
    change: JobChange = JobChange(),
) -> RemoteJob:
    """Record a job the remote side holds, or update it if ``(api, kind, remote_id)`` is already known.

    A known job keeps the run and the idempotency key that created it; ``change`` goes through
    :func:`update_remote_job` so a change is recorded as an event.

    Args:
        session: The open session.
        run: The run that submitted the job.
        api: Which API, e.g. ``"newspaper"``.
        kind: What it is, e.g. ``"upload-file"``, ``"output-file"``, ``"batch"``, ``"order"``, ``"purchase"``.
        remote_id: The service's id or token for it.
        idempotency_key: The request it belongs to, so a re-run finds it.
        change: Its status, what the service reports and further facts (:class:`JobChange`).

    Returns:
        The stored job.
    """
    existing = job_with_remote_id(session, api=api, kind=kind, remote_id=remote_id)
    if existing is None:
        job = RemoteJob(
            run_id=run.id, api=api, kind=kind, remote_id=remote_id, idempotency_key=idempotency_key
        )
        stored = _insert(session, job, change)
        if stored is job:
            return job
        existing = stored
    # The key the job was first recorded under stays: another flow seeing the same remote id must not take
    # the job away from the request that created it.
    if existing.idempotency_key is None:
        existing.idempotency_key = idempotency_key
    update_remote_job(session, existing, change)
    return existing


def _insert(session: Session, job: RemoteJob, change: JobChange) -> RemoteJob:
    """Insert the new ``job`` with ``change`` applied and return it; or return the same job a concurrent
    writer inserted first (the savepoint lets us fall back to theirs)."""
    report = change.report
    now = utcnow()
    job.status, job.remote_status, job.progress = change.status, report.remote_status, report.progress
    job.data = json_mapping(change.data, mask_secret_keys=False)
    job.created_at = job.updated_at = now
    job.finished_at = now if change.finished else None
    job.deleted_at = now if change.deleted else None
    try:
        with session.begin_nested():
            session.add(job)
            if change.status is not None or report.remote_status is not None or report.progress is not None:
                job.events.append(_event(job, change, now))
    except IntegrityError:
        theirs = job_with_remote_id(session, api=job.api, kind=job.kind, remote_id=job.remote_id)
        if theirs is None:
            raise
        return theirs
    return job


def update_remote_job(session: Session, job: RemoteJob, change: JobChange) -> JobEvent | None:
    """Record what the service now says about ``job`` (from ``save_remote_job`` or ``find_remote_job``):
    the parts of ``change`` that are set.

    Returns:
        The new event when the status, the remote status or the progress changed, otherwise ``None``.
    """
    stored = attached(session, job)
    report = change.report
    now = utcnow()
    changes: dict[str, Any] = {"updated_at": now}
    status_changed = change.status is not None and change.status != stored.status
    remote_changed = report.remote_status is not None and report.remote_status != stored.remote_status
    progress_changed = report.progress is not None and report.progress != stored.progress
    if report.remote_id is not None:
        changes["remote_id"] = report.remote_id
    if status_changed:
        changes["status"] = change.status
    if remote_changed:
        changes["remote_status"] = report.remote_status
    if progress_changed:
        changes["progress"] = report.progress
    if change.data:
        changes["data"] = {**stored.data, **json_mapping(change.data, mask_secret_keys=False)}
    if change.finished and stored.finished_at is None:
        changes["finished_at"] = now
    if change.deleted and stored.deleted_at is None:
        changes["deleted_at"] = now
    mirror((stored, job), **changes)
    if not (status_changed or remote_changed or progress_changed):
        session.flush()
        return None
    event = _event(stored, change, now)
    event.job_id = stored.id
    session.add(event)
    session.flush()
    return event


def _event(job: RemoteJob, change: JobChange, now: datetime) -> JobEvent:
    """The status event of ``job`` as it stands now, with the change's date and detail."""
    return JobEvent(
        status=job.status,
        remote_status=job.remote_status,
        progress=job.progress,
        status_date=change.report.status_date,
        recorded_at=now,
        detail=change.detail,
    )


def find_remote_job(
    session: Session, *, api: str, kind: str, idempotency_key: str, include_deleted: bool = False
) -> RemoteJob | None:
    """The newest job of this api and kind for ``idempotency_key``; deleted ones only if asked for."""
    statement = select(RemoteJob).where(
        RemoteJob.api == api, RemoteJob.kind == kind, RemoteJob.idempotency_key == idempotency_key
    )
    if not include_deleted:
        statement = statement.where(RemoteJob.deleted_at.is_(None))
    return session.scalars(statement.order_by(RemoteJob.id.desc()).limit(1)).first()


def unfinished_jobs(
    session: Session, *, idempotency_key: str, api: str, kinds: Collection[str]
) -> list[RemoteJob]:
    """Jobs of this api and these kinds for ``idempotency_key`` that are not deleted, oldest first."""
    statement = select(RemoteJob).where(
        RemoteJob.api == api,
        RemoteJob.kind.in_(kinds),
        RemoteJob.idempotency_key == idempotency_key,
        RemoteJob.deleted_at.is_(None),
    )
    return list(session.scalars(statement.order_by(RemoteJob.id)))


def jobs_recorded_since(session: Session, *, api: str, kind: str, since: datetime) -> list[RemoteJob]:
    """Jobs of this api and kind first recorded at or after ``since`` and not deleted, oldest first."""
    statement = select(RemoteJob).where(
        RemoteJob.api == api,
        RemoteJob.kind == kind,
        RemoteJob.created_at >= since,
        RemoteJob.deleted_at.is_(None),
    )
    return list(session.scalars(statement.order_by(RemoteJob.id)))


def undeleted_files(
    session: Session, *, kinds: tuple[str, ...], older_than: datetime | None = None, api: str | None = None
) -> list[RemoteJob]:
    """Remote files (jobs of ``kinds``) recorded and not deleted yet, oldest first."""
    statement = select(RemoteJob).where(RemoteJob.kind.in_(kinds), RemoteJob.deleted_at.is_(None))
    if older_than is not None:
        statement = statement.where(RemoteJob.created_at < older_than)
    if api is not None:
        statement = statement.where(RemoteJob.api == api)
    return list(session.scalars(statement.order_by(RemoteJob.id)))


def files_to_clean(
    session: Session, *, kinds: tuple[str, ...], older_than: datetime, api: str
) -> list[RemoteJob]:
    """The remote files (jobs of ``kinds``) recorded and not deleted yet that a clean-up asks the service to
    delete: those created before ``older_than``, and, whatever their age, those a /deletefile did not
    delete (recorded with ``not_deleted``), oldest first."""
    return [
        job
        for job in undeleted_files(session, kinds=kinds, api=api)
        if job.created_at < older_than or FileJobData.read(job.data).not_deleted
    ]


def jobs_in_states(session: Session, *, api: str, kind: str, states: Iterable[str]) -> list[RemoteJob]:
    """Jobs of this api and kind (any key) whose status is one of ``states``, oldest first."""
    statement = select(RemoteJob).where(
        RemoteJob.api == api, RemoteJob.kind == kind, RemoteJob.status.in_(list(states))
    )
    return list(session.scalars(statement.order_by(RemoteJob.id)))


def batches_using_file(session: Session, *, api: str, token: str) -> list[RemoteJob]:
    """Batch jobs whose recorded input, output or extra output file is ``token``."""
    statement = select(RemoteJob).where(RemoteJob.api == api, RemoteJob.kind == "batch")
    return [
        job
        for job in session.scalars(statement.order_by(RemoteJob.id))
        if token in batch_file_tokens(job.data)
    ]


def mark_file_deleted(session: Session, job_id: int, *, api: str, detail: str) -> None:
    """Record the remote file of job ``job_id`` as deleted, and every batch job of ``api`` that used it and
    had not ended as DELETED (it can give no result now), with ``detail``."""
    row = session.get(RemoteJob, job_id)
    if row is None:
        return
    deleted = JobChange(status=JobState.DELETED.value, data=file_deleted_data(row.data), deleted=True)
    update_remote_job(session, row, deleted)
    for batch in batches_using_file(session, api=api, token=row.remote_id):
        state = JobSnapshot.of(batch).state
        if state is None or not state.final:
            ended = JobChange(status=JobState.DELETED.value, finished=True, detail=detail)
            update_remote_job(session, batch, ended)


def mark_file_not_deleted(session: Session, job_id: int, *, answer: str, reason: str) -> None:
    """Record the remote file of job ``job_id`` as still on the service: its /deletefile was answered with
    ``answer`` (short, kept as the remote status), not Status 0, for ``reason``."""
    row = session.get(RemoteJob, job_id)
    if row is None:
        return
    refused = JobChange(
        report=RemoteReport(remote_status=answer),
        data=FileJobData(not_deleted=reason).changes(),
        detail=reason,
    )
    update_remote_job(session, row, refused)


def file_deleted_data(data: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The change to a deleted file's data: its refused deletes are over (``not_deleted`` cleared), or
    None when none was recorded."""
    return FileJobData(not_deleted=None).changes() if FileJobData.read(data).not_deleted else None


def batch_file_tokens(data: Mapping[str, Any] | None) -> set[str]:
    """The tokens of every file a batch job uses (from its recorded data): input, output and the
    alignment's extra outputs."""
    return BatchJobData.read(data).file_tokens()


def jobs_for_key(session: Session, *, idempotency_key: str, api: str | None = None) -> list[RemoteJob]:
    """Every job recorded for ``idempotency_key`` (optionally of one API), oldest first, deleted included."""
    statement = select(RemoteJob).where(RemoteJob.idempotency_key == idempotency_key)
    if api is not None:
        statement = statement.where(RemoteJob.api == api)
    return list(session.scalars(statement.order_by(RemoteJob.id)))
