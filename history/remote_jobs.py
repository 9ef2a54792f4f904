"""Remote jobs and their status events: what each API holds for us, so a re-run resumes, not resubmits."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


def save_remote_job(
    session: Session,
    run: Run,
    *,
    api: str,
    kind: str,
    remote_id: str,
    idempotency_key: str | None = None,
    status: str | None = None,
    remote_status: str | None = None,
    progress: float | None = None,
    data: Mapping[str, Any] | None = None,
) -> RemoteJob:
    """Record a job the remote side holds, or update it if ``(api, kind, remote_id)`` is already known.

    A known job keeps the run and the idempotency key that created it; its status and progress go through
    ``update_remote_job`` so a change is recorded as an event. ``data`` is made JSON-safe with secret-typed
    values masked; it is meant for the service's handles (tokens, file ids) a re-run needs, so keys are not
    masked by name.

    Args:
        session: The open session.
        run: The run that submitted the job.
        api: Which API, e.g. ``"newspaper"``.
        kind: What it is, e.g. ``"upload-file"``, ``"output-file"``, ``"batch"``, ``"order"``, ``"purchase"``.
        remote_id: The service's id or token for it.
        idempotency_key: The request it belongs to, so a re-run finds it.
        status: Where the job stands (a :class:`~history.models.JobState`).
        remote_status: The last status the service reported, in its own words.
        progress: Progress in percent, when the service reports it.
        data: Further facts about the job.

    Returns:
        The stored job.
    """
    existing = job_with_remote_id(session, api=api, kind=kind, remote_id=remote_id)
    if existing is None:
        now = utcnow()
        job = RemoteJob(
            run_id=run.id,
            api=api,
            kind=kind,
            remote_id=remote_id,
            idempotency_key=idempotency_key,
            status=status,
            remote_status=remote_status,
            progress=progress,
            data=json_mapping(data, mask_secret_keys=False),
            created_at=now,
            updated_at=now,
        )
        try:
            # A concurrent writer may insert the same job first; the savepoint lets us fall back to theirs.
            with session.begin_nested():
                session.add(job)
                if status is not None or remote_status is not None or progress is not None:
                    job.events.append(
                        JobEvent(
                            status=status, remote_status=remote_status, progress=progress, recorded_at=now
                        )
                    )
            return job
        except IntegrityError:
            existing = job_with_remote_id(session, api=api, kind=kind, remote_id=remote_id)
            if existing is None:
                raise
    # The key the job was first recorded under stays: another flow seeing the same remote id must not take
    # the job away from the request that created it.
    if existing.idempotency_key is None:
        existing.idempotency_key = idempotency_key
    update_remote_job(
        session, existing, status=status, remote_status=remote_status, progress=progress, data=data
    )
    return existing


def update_remote_job(
    session: Session,
    job: RemoteJob,
    *,
    status: str | None = None,
    remote_status: str | None = None,
    progress: float | None = None,
    status_date: datetime | None = None,
    data: Mapping[str, Any] | None = None,
    finished: bool = False,
    deleted: bool = False,
    detail: str | None = None,
) -> JobEvent | None:
    """Record what the service now says about ``job``.

    Args:
        session: The open session.
        job: The job from ``save_remote_job`` or ``find_remote_job``.
        status: The job's state now; ``None`` leaves it unchanged.
        remote_status: What the service reports now; ``None`` leaves it unchanged.
        progress: The progress reported now; ``None`` leaves it unchanged.
        status_date: When the service says the status was reached.
        data: Keys to merge into the job's data.
        finished: Mark the job finished (the first time only).
        deleted: Mark the job deleted on the remote side (the first time only).
        detail: Free text stored with the event.

    Returns:
        The new event when status or progress changed, otherwise ``None``.
    """
    stored = attached(session, job)
    now = utcnow()
    changes: dict[str, Any] = {"updated_at": now}
    status_changed = status is not None and status != stored.status
    remote_changed = remote_status is not None and remote_status != stored.remote_status
    progress_changed = progress is not None and progress != stored.progress
    if status_changed:
        changes["status"] = status
    if remote_changed:
        changes["remote_status"] = remote_status
    if progress_changed:
        changes["progress"] = progress
    if data:
        changes["data"] = {**stored.data, **json_mapping(data, mask_secret_keys=False)}
    if finished and stored.finished_at is None:
        changes["finished_at"] = now
    if deleted and stored.deleted_at is None:
        changes["deleted_at"] = now
    mirror((stored, job), **changes)
    event: JobEvent | None = None
    if status_changed or remote_changed or progress_changed:
        event = JobEvent(
            job_id=stored.id,
            status=stored.status,
            remote_status=stored.remote_status,
            progress=stored.progress,
            status_date=status_date,
            recorded_at=now,
            detail=detail,
        )
        session.add(event)
    session.flush()
    return event


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


def unfinished_jobs(session: Session, *, idempotency_key: str, api: str, kind: str) -> list[RemoteJob]:
    """Jobs of this api and kind for ``idempotency_key`` that are not deleted, oldest first."""
    statement = select(RemoteJob).where(
        RemoteJob.api == api,
        RemoteJob.kind == kind,
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
    update_remote_job(
        session, row, status=JobState.DELETED.value, deleted=True, data=file_deleted_data(row.data)
    )
    for batch in batches_using_file(session, api=api, token=row.remote_id):
        state = JobSnapshot.of(batch).state
        if state is None or not state.final:
            update_remote_job(session, batch, status=JobState.DELETED.value, finished=True, detail=detail)


def mark_file_not_deleted(session: Session, job_id: int, *, answer: str, reason: str) -> None:
    """Record the remote file of job ``job_id`` as still on the service: its /deletefile was answered with
    ``answer`` (short, kept as the remote status), not Status 0, for ``reason``."""
    row = session.get(RemoteJob, job_id)
    if row is None:
        return
    update_remote_job(
        session, row, remote_status=answer, data=FileJobData(not_deleted=reason).changes(), detail=reason
    )


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
