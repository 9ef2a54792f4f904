"""Reading and writing the run history; every function works inside the caller's session.

Call sites own the transaction: ``with factory.begin() as session: run = start_run(session, ...)``.
Objects returned here may be passed into a later session (the factory keeps them loaded after commit).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from os import PathLike
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import inspect, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from history.models import (
    Base,
    Document,
    JobEvent,
    MessageLevel,
    RemoteJob,
    Run,
    RunMessage,
    RunState,
    Step,
    utcnow,
)
from history.scrub import json_safe

HASH_CHUNK_BYTES = 1024 * 1024

_Row = TypeVar("_Row", bound=Base)


def _attached(session: Session, obj: _Row) -> _Row:
    """``obj`` as an instance of ``session``: re-attached when detached, or the session's own copy."""
    if obj in session:
        return obj
    state = inspect(obj)
    if state.detached and state.key is not None and state.key not in session.identity_map:
        session.add(obj)
        return obj
    found = session.get(type(obj), state.identity)
    if found is None:
        raise LookupError(f"{obj!r} is not in the history database")
    return found


def _set(targets: tuple[Base, ...], **values: Any) -> None:
    # The caller's object and the session's copy may differ; both should show the new state.
    for target in {id(t): t for t in targets}.values():
        for name, value in values.items():
            setattr(target, name, value)


def _mapping(value: Mapping[str, Any] | Any | None, *, mask_secret_keys: bool) -> dict[str, Any]:
    if value is None:
        return {}
    safe = json_safe(value, mask_secret_keys=mask_secret_keys)
    return safe if isinstance(safe, dict) else {"value": safe}


def start_run(
    session: Session,
    *,
    flow: str,
    idempotency_key: str | None = None,
    parameters: Mapping[str, Any] | Any | None = None,
    flow_run_id: str | None = None,
) -> Run:
    """Record that a flow started.

    Args:
        session: The open session.
        flow: Flow name.
        idempotency_key: Identifies the business request, so a re-run can find what an earlier run did.
        parameters: The flow's parameters; secrets are masked and values made JSON-safe before storing.
        flow_run_id: Prefect's flow run id, when running under Prefect.

    Returns:
        The new run, state ``RUNNING``, with its id assigned.
    """
    run = Run(
        flow=flow,
        idempotency_key=idempotency_key,
        parameters=_mapping(parameters, mask_secret_keys=True),
        flow_run_id=str(flow_run_id) if flow_run_id is not None else None,
        state=RunState.RUNNING.value,
        started_at=utcnow(),
    )
    session.add(run)
    session.flush()
    return run


def finish_run(
    session: Session,
    run: Run,
    *,
    state: RunState | str,
    error: str | BaseException | None = None,
    summary: Mapping[str, Any] | Any | None = None,
) -> Run:
    """Record how a run ended.

    Args:
        session: The open session.
        run: The run from ``start_run`` (may come from an earlier session).
        state: ``COMPLETED``, ``FAILED`` or ``CANCELLED`` (``RUNNING`` is refused).
        error: What went wrong; an exception is stored as ``"TypeName: message"``.
        summary: Counts and outcomes for display; made JSON-safe with secrets masked.

    Returns:
        The run as stored in this session.
    """
    final = RunState(state)
    if final is RunState.RUNNING:
        raise ValueError("finish_run needs a final state, not RUNNING")
    if isinstance(error, BaseException):
        error = f"{type(error).__name__}: {error}"
    stored = _attached(session, run)
    _set(
        (stored, run),
        state=final.value,
        error=error,
        summary=_mapping(summary, mask_secret_keys=True) if summary is not None else None,
        finished_at=utcnow(),
    )
    session.flush()
    return stored


def latest_run(session: Session, *, flow: str, idempotency_key: str) -> Run | None:
    """The newest run of ``flow`` for ``idempotency_key``, whatever its state."""
    statement = (
        select(Run)
        .where(Run.flow == flow, Run.idempotency_key == idempotency_key)
        .order_by(Run.id.desc())
        .limit(1)
    )
    return session.scalars(statement).first()


def record_step(
    session: Session,
    run: Run,
    *,
    name: str,
    outcome: str,
    duration_s: float,
    attempt: int = 1,
    detail: str | None = None,
    started_at: datetime | None = None,
) -> Step:
    """Record one remote call or task attempt of ``run``.

    Args:
        session: The open session.
        run: The run the step belongs to.
        name: What was done, e.g. ``"newspaper.upload-file"``.
        outcome: How it went, e.g. ``"ok"``, ``"retried"``, ``"failed"``.
        duration_s: Seconds it took.
        attempt: 1 for the first try, counting up on retries.
        detail: Free text for the reader (an error message, a remote id).
        started_at: When it started; defaults to ``duration_s`` before now.

    Returns:
        The new step.
    """
    if started_at is None:
        started_at = utcnow() - timedelta(seconds=duration_s)
    step = Step(
        run_id=run.id,
        name=name,
        outcome=outcome,
        duration_s=duration_s,
        attempt=attempt,
        detail=detail,
        started_at=started_at,
    )
    session.add(step)
    session.flush()
    return step


def _find_job(session: Session, *, api: str, kind: str, remote_id: str) -> RemoteJob | None:
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
    progress: float | None = None,
    data: Mapping[str, Any] | None = None,
) -> RemoteJob:
    """Record a job the remote side holds, or update it if ``(api, kind, remote_id)`` is already known.

    A known job keeps the run that created it; its status and progress go through ``update_remote_job``
    so a change is recorded as an event. ``data`` is made JSON-safe with secret-typed values masked; it is
    meant for the service's handles (tokens, file ids) a re-run needs, so keys are not masked by name.

    Args:
        session: The open session.
        run: The run that submitted the job.
        api: Which API, e.g. ``"newspaper"``.
        kind: What it is, e.g. ``"upload-file"``, ``"output-file"``, ``"batch"``, ``"order"``, ``"purchase"``.
        remote_id: The service's id or token for it.
        idempotency_key: The request it belongs to, so a re-run finds it.
        status: The last status the service reported.
        progress: Progress in percent, when the service reports it.
        data: Further facts about the job.

    Returns:
        The stored job.
    """
    existing = _find_job(session, api=api, kind=kind, remote_id=remote_id)
    if existing is None:
        now = utcnow()
        job = RemoteJob(
            run_id=run.id,
            api=api,
            kind=kind,
            remote_id=remote_id,
            idempotency_key=idempotency_key,
            status=status,
            progress=progress,
            data=_mapping(data, mask_secret_keys=False),
            created_at=now,
            updated_at=now,
        )
        try:
            # A concurrent writer may insert the same job first; the savepoint lets us fall back to theirs.
            with session.begin_nested():
                session.add(job)
                if status is not None or progress is not None:
                    job.events.append(JobEvent(status=status, progress=progress, recorded_at=now))
            return job
        except IntegrityError:
            existing = _find_job(session, api=api, kind=kind, remote_id=remote_id)
            if existing is None:
                raise
    if idempotency_key is not None:
        existing.idempotency_key = idempotency_key
    update_remote_job(session, existing, status=status, progress=progress, data=data)
    return existing


def update_remote_job(
    session: Session,
    job: RemoteJob,
    *,
    status: str | None = None,
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
        status: The status reported now; ``None`` leaves it unchanged.
        progress: The progress reported now; ``None`` leaves it unchanged.
        status_date: When the service says the status was reached.
        data: Keys to merge into the job's data.
        finished: Mark the job finished (the first time only).
        deleted: Mark the job deleted on the remote side (the first time only).
        detail: Free text stored with the event.

    Returns:
        The new event when status or progress changed, otherwise ``None``.
    """
    stored = _attached(session, job)
    now = utcnow()
    changes: dict[str, Any] = {"updated_at": now}
    status_changed = status is not None and status != stored.status
    progress_changed = progress is not None and progress != stored.progress
    if status_changed:
        changes["status"] = status
    if progress_changed:
        changes["progress"] = progress
    if data:
        changes["data"] = {**stored.data, **_mapping(data, mask_secret_keys=False)}
    if finished and stored.finished_at is None:
        changes["finished_at"] = now
    if deleted and stored.deleted_at is None:
        changes["deleted_at"] = now
    _set((stored, job), **changes)
    event: JobEvent | None = None
    if status_changed or progress_changed:
        event = JobEvent(
            job_id=stored.id,
            status=stored.status,
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


def jobs_for_key(session: Session, *, idempotency_key: str, api: str | None = None) -> list[RemoteJob]:
    """Every job recorded for ``idempotency_key`` (optionally of one API), oldest first, deleted included."""
    statement = select(RemoteJob).where(RemoteJob.idempotency_key == idempotency_key)
    if api is not None:
        statement = statement.where(RemoteJob.api == api)
    return list(session.scalars(statement.order_by(RemoteJob.id)))


def file_digest(path: Path) -> tuple[int, str]:
    """Size in bytes and SHA-256 hex digest of ``path``, read in chunks so large files stay cheap."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as stream:
        while chunk := stream.read(HASH_CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def record_document(
    session: Session,
    run: Run,
    *,
    kind: str,
    path: str | PathLike[str],
    remote_job: RemoteJob | None = None,
) -> Document:
    """Record a file ``run`` downloaded or produced, with its size and SHA-256.

    Args:
        session: The open session.
        run: The run that produced the file.
        kind: What the file is, e.g. ``"invoice-pdf"`` or ``"result-csv"``.
        path: Where it is; stored as an absolute path.
        remote_job: The job it was downloaded from, if any.

    Returns:
        The new document.
    """
    file = Path(path).resolve()
    size, sha256 = file_digest(file)
    document = Document(
        run_id=run.id,
        remote_job_id=remote_job.id if remote_job is not None else None,
        kind=kind,
        path=str(file),
        size=size,
        sha256=sha256,
        created_at=utcnow(),
    )
    session.add(document)
    session.flush()
    return document


def find_document(session: Session, *, kind: str, sha256: str) -> Document | None:
    """The newest document of ``kind`` with this content hash."""
    statement = (
        select(Document)
        .where(Document.kind == kind, Document.sha256 == sha256.lower())
        .order_by(Document.id.desc())
        .limit(1)
    )
    return session.scalars(statement).first()


def record_message(
    session: Session, run: Run, *, level: MessageLevel | str, code: str | None, text: str
) -> RunMessage:
    """Record a message a service returned during ``run``.

    Args:
        session: The open session.
        run: The run it belongs to.
        level: ``"info"``, ``"warning"`` or ``"error"``.
        code: The service's message code, if it has one.
        text: The message text.

    Returns:
        The new message.
    """
    message = RunMessage(
        run_id=run.id, level=MessageLevel(level).value, code=code, text=text, created_at=utcnow()
    )
    session.add(message)
    session.flush()
    return message


def list_runs(session: Session, *, limit: int = 20, flow: str | None = None) -> list[Run]:
    """The newest runs first, optionally of one flow."""
    statement = select(Run)
    if flow is not None:
        statement = statement.where(Run.flow == flow)
    return list(session.scalars(statement.order_by(Run.id.desc()).limit(limit)))


def get_run(session: Session, run_id: int) -> Run | None:
    """One run with its steps, remote jobs and their events, documents and messages loaded."""
    statement = (
        select(Run)
        .where(Run.id == run_id)
        .options(
            selectinload(Run.steps),
            selectinload(Run.remote_jobs).selectinload(RemoteJob.events),
            selectinload(Run.documents),
            selectinload(Run.messages),
        )
    )
    return session.scalars(statement).first()
