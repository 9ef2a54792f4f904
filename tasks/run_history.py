"""Recording a flow run in the run history: the run, its steps, remote jobs, documents and messages, and the
lease that lets one run at a time work on an idempotency key.

Flows hold one :class:`RunRecorder`. Every write is its own short transaction, run in a worker thread so a
busy SQLite file never blocks the event loop; a crash loses nothing a remote service already acknowledged.
Remote jobs are read back as detached :class:`JobSnapshot` values, so callers never touch ORM objects. Every
text written for the reader (a step's or an event's detail, the run's parameters, error and summary, a
message) is scrubbed of the registered secrets first (:mod:`connectors.redaction`), so a service that echoes
a password leaves it nowhere; a job's data (the handles a later run resumes with) is kept as it is.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import queue
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

import history
from connectors.errors import PostflowsError
from connectors.http import RequestRecord
from connectors.redaction import redact
from history.models import JobState, RemoteJob, Run
from history.processes import claimant, holder_is_alive
from history.scrub import json_safe

logger = logging.getLogger("postflows.history")

P = ParamSpec("P")
T = TypeVar("T")

DEFAULT_LEASE_TTL_S = 60.0
DEFAULT_LEASE_WAIT_S = 600.0
DETAIL_CHARS = 500


def scrubbed(value: Any) -> Any:
    """``value`` made JSON-safe (secret values and the values of secret-named keys masked: see
    :func:`history.json_safe`) with every registered secret scrubbed from its texts."""
    return _scrub_json(json_safe(value, mask_secret_keys=True))


def _scrub_json(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(key): _scrub_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub_json(item) for item in value]
    return value


def _text(text: str | None) -> str | None:
    return None if text is None else redact(text)[:DETAIL_CHARS]


@dataclass(frozen=True)
class JobSnapshot:
    """A remote job as recorded: its ids, state, the service's last status and free-form data."""

    id: int
    api: str
    kind: str
    remote_id: str
    status: str | None
    progress: float | None
    data: dict[str, Any] = field(default_factory=dict)
    finished: bool = False
    deleted: bool = False
    run_id: int | None = None
    remote_status: str | None = None

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
            run_id=job.run_id,
            remote_status=job.remote_status,
        )

    @property
    def state(self) -> JobState | None:
        """The job's state, or None for a status written before states existed."""
        try:
            return JobState(self.status) if self.status is not None else None
        except ValueError:
            return None


class KeyBusy(PostflowsError):
    """Another live run holds the idempotency key and did not let go within the allowed wait."""

    def __init__(self, key: str, holder: history.LeaseHolder, waited_s: float) -> None:
        super().__init__(
            f"key {key} is held by run {holder.run_id} (process {holder.pid} on {holder.host}, since "
            f"{holder.acquired_at:%Y-%m-%d %H:%M:%S} UTC); waited {waited_s:.0f}s. Run again when it has "
            "finished: the run history then resumes its work"
        )
        self.key = key
        self.holder = holder


class LeaseLost(PostflowsError):
    """This run no longer holds its idempotency key (it was presumed dead); nothing more is submitted."""


def _flow_run_id() -> str | None:
    try:
        from prefect.runtime import flow_run

        run_id = flow_run.get_id()
    except Exception:  # noqa: BLE001 - outside a flow run there is simply no id
        return None
    return str(run_id) if run_id else None


class _StepWriter:
    """Writes request-log steps from a background thread, so the HTTP core's hook never waits on the disk."""

    def __init__(self, write: Callable[[list[RequestRecord]], None]) -> None:
        self._write = write
        self._queue: queue.SimpleQueue[RequestRecord | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def put(self, record: RequestRecord) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._drain, name="postflows-steps", daemon=True)
                self._thread.start()
        self._queue.put(record)

    def close(self) -> None:
        """Write what is queued and stop the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _drain(self) -> None:
        while True:
            records = [self._queue.get()]
            while not self._queue.empty():
                records.append(self._queue.get())
            stop = records[-1] is None
            batch = [record for record in records if record is not None]
            if batch:
                try:
                    self._write(batch)
                except Exception as error:  # noqa: BLE001 - a lost log line must not end the run
                    logger.warning("could not record %d request steps: %s", len(batch), error)
            if stop:
                return


@dataclass
class RunOutputs:
    """What a run wrote and what earlier work it took up instead of doing it again, gathered as it goes; the
    recorders of the run's pieces (:meth:`RunRecorder.for_key`) share it."""

    documents: dict[Path, str] = field(default_factory=dict)
    """Every document recorded: absolute path → kind, in the order written (a path's first kind)."""
    reused: dict[str, list[str]] = field(default_factory=dict)
    """What was taken up (``address batch``) → which (an id and the run that started it)."""
    replaced: dict[str, list[str]] = field(default_factory=dict)
    """What was submitted anew over an earlier submission (``--resubmit``) → which earlier one."""
    took_up: int | None = None
    """The run of this work just before this one, when it was interrupted (this run takes its work up)."""


@dataclass(frozen=True)
class _LeaseWait:
    """How a run waits for a key that a live run holds: at most ``wait_s``, looking every ``poll_s``."""

    wait_s: float = DEFAULT_LEASE_WAIT_S
    poll_s: float = 1.0
    notify: Callable[[str], None] | None = None


class RunRecorder:
    """Writes one flow run's history, and keeps the run's :class:`RunOutputs` for its summary."""

    def __init__(
        self, factory: sessionmaker[Session], run_id: int, *, flow: str, idempotency_key: str | None
    ):
        self._factory = factory
        self.run_id = run_id
        self.flow = flow
        self.idempotency_key = idempotency_key
        self._steps = _StepWriter(self._write_request_steps)
        self._heartbeat: asyncio.Task[None] | None = None
        self._lease_ttl = timedelta(seconds=DEFAULT_LEASE_TTL_S)
        self._lease_wait = _LeaseWait()
        self._lease_key: str | None = None
        self.holds_key = False
        self.outputs = RunOutputs()

    @classmethod
    async def start(
        cls,
        database_url: str,
        *,
        flow: str,
        idempotency_key: str | None,
        parameters: Mapping[str, Any],
    ) -> RunRecorder:
        def start() -> RunRecorder:
            factory = history.session_factory(database_url)
            with factory.begin() as session:
                run = history.start_run(
                    session,
                    flow=flow,
                    idempotency_key=idempotency_key,
                    parameters=scrubbed(dict(parameters)),
                    flow_run_id=_flow_run_id(),
                )
                session.flush()
                run_id = run.id
            return cls(factory, run_id, flow=flow, idempotency_key=idempotency_key)

        return await asyncio.to_thread(start)

    def for_key(self, key: str) -> RunRecorder:
        """This run's recorder for one piece of its work that has its own idempotency key (one row of a
        file): jobs are recorded and found under ``key``, and a submission is recorded only while the run
        still holds its own key, whose lease guards every piece."""
        piece = copy.copy(self)
        piece.idempotency_key = key
        piece._lease_key = self._lease_key or self.idempotency_key
        return piece

    def _run(self, session: Session) -> Run:
        run = session.get(Run, self.run_id)
        if run is None:  # pragma: no cover - the run row is never deleted while the flow runs
            raise LookupError(f"run {self.run_id} vanished from the history")
        return run

    async def _write(self, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a history write in a worker thread and await its end even when the caller is cancelled: a
        cancelled await would leave the thread committing after whatever the caller writes next (a poll's
        RUNNING landing after the interruption's WAITING)."""
        return await record_shielded(asyncio.to_thread(work, *args, **kwargs))

    # -- the key lease ---------------------------------------------------------------------------------

    async def hold_key(
        self,
        *,
        ttl_s: float = DEFAULT_LEASE_TTL_S,
        wait_s: float = DEFAULT_LEASE_WAIT_S,
        poll_s: float = 1.0,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        """Hold this run's idempotency key until :meth:`finish`, waiting (bounded) for a live holder.

        Raises:
            KeyBusy: a live run still holds the key after ``wait_s``.
        """
        self._lease_ttl = timedelta(seconds=ttl_s)
        self._lease_wait = _LeaseWait(wait_s, poll_s, notify)
        key = self.idempotency_key
        if not key:
            return
        await self._acquire(key)
        self.holds_key = True
        self._heartbeat = asyncio.create_task(self._renew_forever(key, ttl_s / 3))
        await self._note_interrupted(key)

    async def rekey(self, key: str) -> None:
        """Go on under ``key``: the identity of the work, known once the run has read its input (a hash of
        what it will send). The run holds ``key`` (waiting, bounded, for a live holder as :meth:`hold_key`
        does), records it as its key and gives back the key it held until now; it then finds and records
        its jobs under ``key``, so runs that send the same bytes share them whatever their options.

        Raises:
            KeyBusy: a live run still holds ``key`` after the lease wait; this run keeps its own key.
        """
        previous = self.idempotency_key
        if key == previous:
            return
        await self._acquire(key)
        self._stop_renewing()

        def switch() -> None:
            with self._factory.begin() as session:
                history.rekey_run(session, self._run(session), key)
                if self.holds_key and previous:
                    history.release_lease(session, key=previous, run_id=self.run_id)

        await self._write(switch)
        self.idempotency_key = key
        self.holds_key = True
        self._heartbeat = asyncio.create_task(self._renew_forever(key, self._lease_ttl.total_seconds() / 3))
        await self._note_interrupted(key)

    async def _note_interrupted(self, key: str) -> None:
        """Say so when the run of this work just before this one was interrupted: this run takes it up."""
        if self.outputs.took_up is not None:
            return

        def find() -> tuple[int, str] | None:
            with self._factory.begin() as session:
                earlier = history.interrupted_before(
                    session, flow=self.flow, idempotency_key=key, run_id=self.run_id
                )
                if earlier is None:
                    return None
                when = earlier.finished_at or earlier.started_at
                return earlier.id, f"at {when.isoformat(timespec='seconds')}"

        found = await self._write(find)
        if found is not None:
            self.outputs.took_up = found[0]
            logger.warning("run %s of this work was interrupted %s; this run takes it up", *found)

    async def _acquire(self, key: str) -> None:
        """Take the lease on ``key``, waiting (bounded) while a live run holds it."""
        wait = self._lease_wait
        started = time.monotonic()
        told: int | None = None
        while True:
            holder = await self._write(self._try_acquire, key)
            if holder is None:
                return
            waited = time.monotonic() - started
            if waited >= wait.wait_s:
                raise KeyBusy(key, holder, waited)
            if told != holder.run_id:
                told = holder.run_id
                message = (
                    f"key {key} is held by run {holder.run_id} (process {holder.pid} on {holder.host}); "
                    f"waiting up to {wait.wait_s:.0f}s for it to finish"
                )
                logger.warning(message)
                if wait.notify is not None:
                    wait.notify(message)
            await asyncio.sleep(min(wait.poll_s, max(0.0, wait.wait_s - waited)))

    def _try_acquire(self, key: str) -> history.LeaseHolder | None:
        for _ in range(5):
            try:
                with self._factory.begin() as session:
                    return history.try_acquire_lease(
                        session,
                        key=key,
                        claimant=claimant(self.run_id),
                        ttl=self._lease_ttl,
                        is_alive=holder_is_alive,
                    )
            except IntegrityError:
                continue  # another process inserted the key first: read who it is
        raise RuntimeError(f"could not read the lease of key {key}")

    async def _renew_forever(self, key: str, every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            try:
                held = await self._write(self._renew, key)
            except Exception as error:  # noqa: BLE001 - try again at the next beat
                logger.warning("could not renew the lease of key %s: %s", key, error)
                continue
            if not held:
                self.holds_key = False
                logger.error("run %s lost the lease of key %s; it submits nothing more", self.run_id, key)
                return

    def _renew(self, key: str) -> bool:
        with self._factory.begin() as session:
            return history.renew_lease(session, key=key, run_id=self.run_id, ttl=self._lease_ttl)

    def _stop_renewing(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            self._heartbeat = None

    def _give_back(self, session: Session) -> None:
        """Release this run's key in ``session``, if it holds one."""
        if self.holds_key and self.idempotency_key:
            history.release_lease(session, key=self.idempotency_key, run_id=self.run_id)

    async def _release_key(self) -> None:
        self._stop_renewing()
        if self.holds_key:

            def release() -> None:
                with self._factory.begin() as session:
                    self._give_back(session)

            await self._write(release)
        self.holds_key = False

    # -- the run ---------------------------------------------------------------------------------------

    async def finish(
        self, state: str, *, error: str | None = None, summary: Mapping[str, Any] | None = None
    ) -> None:
        """Record how the run ended and let go of its key, in one transaction: a claimant never sees the run
        ended while it still holds the key (it would take the key over and record this hold as lost)."""
        await self._write(self._steps.close)
        self._stop_renewing()

        clean_error = None if error is None else redact(error)
        clean_summary = None if summary is None else scrubbed(dict(summary))

        def finish() -> None:
            with self._factory.begin() as session:
                history.finish_run(
                    session, self._run(session), state=state, error=clean_error, summary=clean_summary
                )
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
            history.record_step(
                session,
                self._run(session),
                name=name,
                outcome=outcome,
                duration_s=duration_s,
                detail=_text(detail),
            )

    def request_log(self, record: RequestRecord) -> None:
        """Hook for :class:`connectors.http.ApiClient`: one step per remote call attempt, written aside."""
        self._steps.put(record)

    def _write_request_steps(self, records: list[RequestRecord]) -> None:
        with self._factory.begin() as session:
            run = self._run(session)
            for record in records:
                history.record_step(
                    session,
                    run,
                    name=f"{record.api} {record.method} {record.path}",
                    outcome=record.outcome,
                    duration_s=record.duration_s,
                    attempt=record.attempt,
                    detail=_text(record.error) if record.error else None,
                )

    async def abandon_stale_runs(self) -> list[int]:
        """Mark earlier RUNNING runs of this work as abandoned when this run resumes what they started."""
        key = self.idempotency_key
        if not key:
            return []

        def abandon() -> list[int]:
            with self._factory.begin() as session:
                return history.abandon_stale_runs(
                    session, flow=self.flow, idempotency_key=key, resumed_by=self._run(session)
                )

        return await self._write(abandon)

    # -- remote jobs -----------------------------------------------------------------------------------

    async def save_job(
        self,
        *,
        api: str,
        kind: str,
        remote_id: str,
        status: JobState | str | None = None,
        remote_status: str | None = None,
        data: Mapping[str, Any] | None = None,
        require_key: bool = False,
    ) -> JobSnapshot:
        """Record a job the remote side holds (or is about to hold) under this run's key.

        Args:
            require_key: write only while this run holds its key, checked in the same transaction, so a
                run presumed dead can never record a submission beside its successor.

        Raises:
            LeaseLost: ``require_key`` and the key is no longer this run's.
        """

        def save() -> JobSnapshot:
            with self._factory.begin() as session:
                key = self._lease_key or self.idempotency_key
                if require_key and key and not history.holds_lease(session, key=key, run_id=self.run_id):
                    raise LeaseLost(f"run {self.run_id} no longer holds key {key}; not submitting")
                job = history.save_remote_job(
                    session,
                    self._run(session),
                    api=api,
                    kind=kind,
                    remote_id=remote_id,
                    idempotency_key=self.idempotency_key,
                    status=str(status) if status is not None else None,
                    remote_status=remote_status,
                    data=dict(data or {}),
                )
                session.flush()
                return JobSnapshot.of(job)

        return await self._write(save)

    async def update_job(
        self,
        job: JobSnapshot,
        *,
        status: JobState | str | None = None,
        remote_status: str | None = None,
        remote_id: str | None = None,
        progress: float | None = None,
        status_date: datetime | None = None,
        data: Mapping[str, Any] | None = None,
        finished: bool = False,
        deleted: bool = False,
        detail: str | None = None,
    ) -> JobSnapshot:
        """Record what is now known about ``job``; returns it as stored."""

        def update() -> JobSnapshot:
            with self._factory.begin() as session:
                row = session.get(RemoteJob, job.id)
                if row is None:  # pragma: no cover
                    raise LookupError(f"remote job {job.id} vanished from the history")
                if remote_id is not None:
                    row.remote_id = remote_id
                history.update_remote_job(
                    session,
                    row,
                    status=str(status) if status is not None else None,
                    remote_status=remote_status,
                    progress=progress,
                    status_date=status_date,
                    data=dict(data) if data is not None else None,
                    finished=finished,
                    deleted=deleted,
                    detail=_text(detail),
                )
                return JobSnapshot.of(row)

        return await self._write(update)

    async def find_job(self, *, api: str, kind: str, include_deleted: bool = True) -> JobSnapshot | None:
        """The newest job of this kind recorded under this run's idempotency key (by any run)."""
        key = self.idempotency_key
        if not key:
            return None

        def find() -> JobSnapshot | None:
            with self._factory.begin() as session:
                job = history.find_remote_job(
                    session, api=api, kind=kind, idempotency_key=key, include_deleted=include_deleted
                )
                return JobSnapshot.of(job) if job is not None else None

        return await self._write(find)

    async def job_with_remote_id(self, *, api: str, kind: str, remote_id: str) -> JobSnapshot | None:
        """The job recorded with the service's id ``remote_id``, under any key, or None."""

        def find() -> JobSnapshot | None:
            with self._factory.begin() as session:
                job = history.job_with_remote_id(session, api=api, kind=kind, remote_id=remote_id)
                return JobSnapshot.of(job) if job is not None else None

        return await self._write(find)

    async def jobs_since(self, *, api: str, kind: str, since: datetime) -> list[JobSnapshot]:
        """Every job of this api and kind recorded at or after ``since`` (under any key) that is not deleted,
        oldest first."""

        def find() -> list[JobSnapshot]:
            with self._factory.begin() as session:
                jobs = history.jobs_recorded_since(session, api=api, kind=kind, since=since)
                return [JobSnapshot.of(job) for job in jobs]

        return await self._write(find)

    async def open_jobs(self, *, api: str, kind: str) -> list[JobSnapshot]:
        """Every job of this kind under this run's key that is not deleted yet, oldest first."""
        key = self.idempotency_key
        if not key:
            return []

        def find() -> list[JobSnapshot]:
            with self._factory.begin() as session:
                jobs = history.unfinished_jobs(session, idempotency_key=key, api=api, kind=kind)
                return [JobSnapshot.of(job) for job in jobs]

        return await self._write(find)

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
        self.outputs.documents.setdefault(path.resolve(), kind)

        def record() -> None:
            with self._factory.begin() as session:
                remote_job = session.get(RemoteJob, job.id) if job is not None else None
                history.record_document(
                    session, self._run(session), kind=kind, path=path, remote_job=remote_job
                )

        await self._write(record)

    async def message(self, level: str, code: str, text: str) -> None:
        clean = redact(text)

        def record() -> None:
            with self._factory.begin() as session:
                history.record_message(session, self._run(session), level=level, code=code, text=clean)

        await self._write(record)


async def record_shielded(write: Awaitable[T]) -> T:
    """Await a history write to its end even while the task awaiting it is being cancelled."""
    task = asyncio.ensure_future(write)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise
