"""A run's record and its lease on the idempotency key of its work: taking the key (waiting, bounded, for a
live holder), renewing it while the run works, moving to the key of the work once it is known, giving it
back. :class:`~history.recorder.RunRecorder` builds on it.

Every write is its own short transaction, run in a worker thread so a busy SQLite file never blocks the event
loop, and awaited to its end even when the caller is cancelled (:func:`record_shielded`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import ParamSpec, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from history.errors import KeyBusy
from history.leases import LeaseHolder, release_lease, renew_lease, try_acquire_lease
from history.models import Run
from history.processes import claimant, holder_is_alive
from history.store import interrupted_before, rekey_run

logger = logging.getLogger("postflows.history")

P = ParamSpec("P")
T = TypeVar("T")

DEFAULT_LEASE_TTL_S = 60.0
DEFAULT_LEASE_WAIT_S = 600.0


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
    sandbox: bool = False
    """Whether an API the run calls answers from the embedded sandbox: its files say so."""


@dataclass(frozen=True)
class LeaseWait:
    """How a run waits for a key that a live run holds: at most ``wait_s``, looking every ``poll_s``."""

    wait_s: float = DEFAULT_LEASE_WAIT_S
    poll_s: float = 1.0
    notify: Callable[[str], None] | None = None


async def record_shielded(write: Awaitable[T]) -> T:
    """Await a history write to its end even while the task awaiting it is being cancelled."""
    task = asyncio.ensure_future(write)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise


@dataclass(frozen=True)
class Interrupted:
    """The run of the same work just before this one, interrupted: its id, and when it ended (or began)."""

    run_id: int
    when: str


@dataclass(frozen=True)
class Taken:
    """One try for a key: the live run that holds it, or, once taken, the run it finds interrupted before."""

    holder: LeaseHolder | None = None
    interrupted: Interrupted | None = None


class LeasedRun:
    """One recorded run, and the lease it holds on its idempotency key."""

    def __init__(
        self,
        factory: sessionmaker[Session],
        run_id: int,
        *,
        flow: str,
        idempotency_key: str | None,
        history_id: str = "",
    ) -> None:
        self._factory = factory
        self.run_id = run_id
        self.history_id = history_id
        """The id of the history the run is recorded in (:func:`history.store.history_identity`)."""
        self.flow = flow
        self.idempotency_key = idempotency_key
        self._heartbeat: asyncio.Task[None] | None = None
        self._lease_ttl = timedelta(seconds=DEFAULT_LEASE_TTL_S)
        self._lease_wait = LeaseWait()
        self._lease_key: str | None = None
        self.holds_key = False
        self.outputs = RunOutputs()

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

    async def hold_key(
        self,
        *,
        ttl_s: float = DEFAULT_LEASE_TTL_S,
        wait_s: float = DEFAULT_LEASE_WAIT_S,
        poll_s: float = 1.0,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        """Hold this run's idempotency key until the run finishes, waiting (bounded) for a live holder.

        Raises:
            KeyBusy: a live run still holds the key after ``wait_s``.
        """
        self._lease_ttl = timedelta(seconds=ttl_s)
        self._lease_wait = LeaseWait(wait_s, poll_s, notify)
        key = self.idempotency_key
        if not key:
            return
        interrupted = await self._acquire(key)
        self.holds_key = True
        self._heartbeat = asyncio.create_task(self._renew_forever(key, ttl_s / 3))
        self._note_interrupted(interrupted)

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
        interrupted = await self._acquire(key)
        self._stop_renewing()

        def switch() -> None:
            with self._factory.begin() as session:
                rekey_run(session, self._run(session), key)
                if self.holds_key and previous:
                    release_lease(session, key=previous, run_id=self.run_id)

        await self._write(switch)
        self.idempotency_key = key
        self.holds_key = True
        self._heartbeat = asyncio.create_task(self._renew_forever(key, self._lease_ttl.total_seconds() / 3))
        self._note_interrupted(interrupted)

    def _note_interrupted(self, interrupted: Interrupted | None) -> None:
        """Say so when the run of this work just before this one was interrupted: this run takes it up."""
        if interrupted is not None and self.outputs.took_up is None:
            self.outputs.took_up = interrupted.run_id
            logger.warning(
                "run %s of this work was interrupted at %s; this run takes it up",
                interrupted.run_id,
                interrupted.when,
            )

    async def _acquire(self, key: str) -> Interrupted | None:
        """Take the lease on ``key``, waiting (bounded) while a live run holds it; returns the run of this
        work interrupted just before this one, looked for in the same transaction (None when there is
        none, or this run took one up already)."""
        wait = self._lease_wait
        look_back = self.outputs.took_up is None
        started = time.monotonic()
        told: int | None = None
        while True:
            taken = await self._write(self._try_acquire, key, look_back)
            holder = taken.holder
            if holder is None:
                return taken.interrupted
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

    def _try_acquire(self, key: str, look_back: bool) -> Taken:
        for _ in range(5):
            try:
                with self._factory.begin() as session:
                    holder = try_acquire_lease(
                        session,
                        key=key,
                        claimant=claimant(self.run_id),
                        ttl=self._lease_ttl,
                        is_alive=holder_is_alive,
                    )
                    if holder is not None or not look_back:
                        return Taken(holder)
                    return Taken(interrupted=self._interrupted(session, key))
            except IntegrityError:
                continue  # another process inserted the key first: read who it is
        raise RuntimeError(f"could not read the lease of key {key}")

    def _interrupted(self, session: Session, key: str) -> Interrupted | None:
        earlier = interrupted_before(session, flow=self.flow, idempotency_key=key, run_id=self.run_id)
        if earlier is None:
            return None
        when = earlier.finished_at or earlier.started_at
        return Interrupted(earlier.id, when.isoformat(timespec="seconds"))

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
            return renew_lease(session, key=key, run_id=self.run_id, ttl=self._lease_ttl)

    def _stop_renewing(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            self._heartbeat = None

    def _give_back(self, session: Session) -> None:
        """Release this run's key in ``session``, if it holds one."""
        if self.holds_key and self.idempotency_key:
            release_lease(session, key=self.idempotency_key, run_id=self.run_id)

    async def _release_key(self) -> None:
        self._stop_renewing()
        if self.holds_key:

            def release() -> None:
                with self._factory.begin() as session:
                    self._give_back(session)

            await self._write(release)
        self.holds_key = False
