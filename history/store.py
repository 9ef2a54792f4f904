"""Reading and writing the run history; every function works inside the caller's session.

Remote-job functions live in ``history.remote_jobs`` and are re-exported here, so this is the one module
call sites import from.

Call sites own the transaction: ``with factory.begin() as session: run = start_run(session, ...)``.
Objects returned here may be passed into a later session (the factory keeps them loaded after commit).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from os import PathLike
from pathlib import Path
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from history.leases import HOLD_KEY_STEP
from history.models import (
    Document,
    HistoryIdentity,
    MessageLevel,
    RemoteJob,
    Run,
    RunMessage,
    RunState,
    Step,
    utcnow,
)
from history.remote_jobs import find_remote_job as find_remote_job
from history.remote_jobs import jobs_for_key as jobs_for_key
from history.remote_jobs import save_remote_job as save_remote_job
from history.remote_jobs import update_remote_job as update_remote_job
from history.rows import attached, json_mapping, mirror

HASH_CHUNK_BYTES = 1024 * 1024


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
        parameters=json_mapping(parameters, mask_secret_keys=True),
        flow_run_id=str(flow_run_id) if flow_run_id is not None else None,
        state=RunState.RUNNING.value,
        started_at=utcnow(),
    )
    session.add(run)
    session.flush()
    return run


def rekey_run(session: Session, run: Run, idempotency_key: str) -> Run:
    """Record that ``run`` goes on under another idempotency key (the identity of its work, known once its
    input is read); the caller holds the new key's lease."""
    run = attached(session, run)
    run.idempotency_key = idempotency_key
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
        state: ``COMPLETED``, ``FAILED``, ``CANCELLED`` or ``PARKED`` (``RUNNING`` is refused).
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
    stored = attached(session, run)
    mirror(
        (stored, run),
        state=final.value,
        error=error,
        summary=json_mapping(summary, mask_secret_keys=True) if summary is not None else None,
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


def interrupted_before(session: Session, *, flow: str, idempotency_key: str, run_id: int) -> Run | None:
    """The run of ``flow`` for ``idempotency_key`` just before run ``run_id``, when it was interrupted."""
    statement = (
        select(Run)
        .where(Run.flow == flow, Run.idempotency_key == idempotency_key, Run.id < run_id)
        .order_by(Run.id.desc())
        .limit(1)
    )
    earlier = session.scalars(statement).first()
    interrupted = (RunState.INTERRUPTED.value, RunState.CANCELLED.value)
    return earlier if earlier is not None and earlier.state in interrupted else None


def abandon_stale_runs(session: Session, *, flow: str, idempotency_key: str, resumed_by: Run) -> list[int]:
    """Close the earlier RUNNING runs that held this work's key (their process died) as FAILED; returns
    their ids.

    Called by a run that holds the key and resumes their recorded remote job, so the history no longer shows
    them running. A run that never held the key has done none of the work: it is waiting for the key, alive,
    and is left alone (closing it would also let the next claimant take the key from its live holder).
    """
    held_the_key = exists().where(
        Step.run_id == Run.id, Step.name == HOLD_KEY_STEP, Step.detail == idempotency_key
    )
    statement = select(Run).where(
        Run.flow == flow,
        Run.idempotency_key == idempotency_key,
        Run.state == RunState.RUNNING.value,
        Run.id != resumed_by.id,
        held_the_key,
    )
    closed = []
    for run in session.scalars(statement):
        finish_run(
            session,
            run,
            state=RunState.FAILED.value,
            error=f"abandoned; its work was resumed by run {resumed_by.id}",
        )
        closed.append(run.id)
    return closed


@dataclass(frozen=True)
class StepRecord:
    """One remote call or task attempt of a run, as the history keeps it.

    Attributes:
        name: What was done, e.g. ``"newspaper.upload-file"``.
        outcome: How it went, e.g. ``"ok"``, ``"retried"``, ``"failed"``.
        duration_s: Seconds it took.
        attempt: 1 for the first try, counting up on retries.
        detail: Free text for the reader (an error message, a remote id).
        started_at: When it started; None: ``duration_s`` before it is recorded.
    """

    name: str
    outcome: str
    duration_s: float
    attempt: int = 1
    detail: str | None = None
    started_at: datetime | None = None


def record_step(session: Session, run: Run, record: StepRecord) -> Step:
    """Record one remote call or task attempt of ``run``; returns the new step."""
    started_at = record.started_at or utcnow() - timedelta(seconds=record.duration_s)
    step = Step(
        run_id=run.id,
        name=record.name,
        outcome=record.outcome,
        duration_s=record.duration_s,
        attempt=record.attempt,
        detail=record.detail,
        started_at=started_at,
    )
    session.add(step)
    session.flush()
    return step


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


def list_runs(
    session: Session, *, limit: int = 20, flow: str | None = None, before: int | None = None
) -> list[Run]:
    """The newest runs first, at most ``limit``, optionally of one flow and older than run ``before`` (the
    last id of the previous page)."""
    statement = select(Run)
    if flow is not None:
        statement = statement.where(Run.flow == flow)
    if before is not None:
        statement = statement.where(Run.id < before)
    return list(session.scalars(statement.order_by(Run.id.desc()).limit(limit)))


def recorded_flow_run(session: Session, flow_run_id: str) -> bool:
    """Whether a run of the orchestrator's flow run ``flow_run_id`` is recorded."""
    statement = select(Run.id).where(Run.flow_run_id == flow_run_id).limit(1)
    return session.scalar(statement) is not None


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


def history_identity(session: Session) -> str:
    """The history's own id (a UUID), made and stored the first time it is asked for; the same for every
    process that uses this database."""
    row = session.get(HistoryIdentity, 1)
    if row is not None:
        return row.history_id
    try:
        with session.begin_nested():  # another process may make it at the same moment: its id wins
            session.add(HistoryIdentity(id=1, history_id=str(uuid.uuid4())))
    except IntegrityError:
        pass
    made = session.get(HistoryIdentity, 1, populate_existing=True)
    if made is None:  # pragma: no cover
        raise LookupError("the history's identity vanished")
    return made.history_id
