"""Leases on idempotency keys: one run at a time works on a key; a dead holder loses it.

A lease is a row per key (the primary key makes two holders impossible). It names the holding run, its host
and process, and expires unless renewed. Whether a process on this host still lives is the caller's
judgement (``is_alive``), so this module stays free of operating-system calls. The row is gone once given
back; a ``hold key`` step of the holding run keeps when it held the key, and which runs ever did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from history.models import KeyLease, Run, RunState, Step, utcnow

HOLD_KEY_STEP = "hold key"
"""The step recording that a run held a key (detail: the key), from when it took it: outcome ``holding``
while it does, ``ok`` once it gave the key back, ``lost`` when another run took it over (presumed dead)."""
HOLDING, RELEASED, LOST = "holding", "ok", "lost"


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds a key, as recorded."""

    key: str
    run_id: int
    host: str
    pid: int
    process_started: str | None
    acquired_at: datetime
    expires_at: datetime

    @classmethod
    def of(cls, lease: KeyLease) -> LeaseHolder:
        return cls(
            key=lease.idempotency_key,
            run_id=lease.run_id,
            host=lease.host,
            pid=lease.pid,
            process_started=lease.process_started,
            acquired_at=lease.acquired_at,
            expires_at=lease.expires_at,
        )


@dataclass(frozen=True)
class Claimant:
    """The run asking for a key, and where it runs."""

    run_id: int
    host: str
    pid: int
    process_started: str | None = None


def try_acquire_lease(
    session: Session,
    *,
    key: str,
    claimant: Claimant,
    ttl: timedelta,
    is_alive: Callable[[LeaseHolder], bool],
) -> LeaseHolder | None:
    """Take the lease on ``key`` for ``claimant``, unless a live run holds it.

    The lease is taken when nobody holds it, when it expired, when its run has ended, or when ``is_alive``
    says the holder's process is gone; taking it opens the claimant's ``hold key`` step (and closes a
    taken-over holder's as ``lost``). The caller commits; a concurrent claimant that inserted the same key
    first makes this raise ``IntegrityError`` at flush, and the caller simply asks again.

    Returns:
        None when ``claimant`` now holds the lease, else the live holder.
    """
    lease = session.scalars(select(KeyLease).where(KeyLease.idempotency_key == key).with_for_update()).first()
    # The clock is read once the row is ours: a claimant that waited for the previous holder's release
    # never dates its lease before that release.
    now = utcnow()
    if lease is None:
        session.add(
            KeyLease(
                idempotency_key=key,
                run_id=claimant.run_id,
                host=claimant.host,
                pid=claimant.pid,
                process_started=claimant.process_started,
                acquired_at=now,
                expires_at=now + ttl,
            )
        )
        session.flush()
        _open_hold(session, key=key, run_id=claimant.run_id, now=now)
        return None
    holder = LeaseHolder.of(lease)
    if holder.run_id != claimant.run_id:
        if _holder_lives(session, holder, now, is_alive):
            return holder
        _close_hold(session, key=key, run_id=holder.run_id, now=now, outcome=LOST)
        _open_hold(session, key=key, run_id=claimant.run_id, now=now)
        lease.acquired_at = now
    lease.run_id = claimant.run_id
    lease.host = claimant.host
    lease.pid = claimant.pid
    lease.process_started = claimant.process_started
    lease.expires_at = now + ttl
    session.flush()
    return None


def _open_hold(session: Session, *, key: str, run_id: int, now: datetime) -> None:
    session.add(
        Step(run_id=run_id, name=HOLD_KEY_STEP, outcome=HOLDING, started_at=now, duration_s=0.0, detail=key)
    )


def _close_hold(session: Session, *, key: str, run_id: int, now: datetime, outcome: str) -> None:
    step = session.scalars(
        select(Step)
        .where(Step.run_id == run_id, Step.name == HOLD_KEY_STEP, Step.detail == key, Step.outcome == HOLDING)
        .order_by(Step.id.desc())
    ).first()
    if step is not None:  # None: a lease taken before holds were recorded
        step.outcome = outcome
        step.duration_s = max(0.0, (now - step.started_at).total_seconds())


def _holder_lives(
    session: Session, holder: LeaseHolder, now: datetime, is_alive: Callable[[LeaseHolder], bool]
) -> bool:
    if holder.expires_at <= now:
        return False
    run_state = session.scalar(select(Run.state).where(Run.id == holder.run_id))
    if run_state != RunState.RUNNING.value:
        return False
    return is_alive(holder)


def renew_lease(session: Session, *, key: str, run_id: int, ttl: timedelta) -> bool:
    """Extend the lease of ``run_id`` on ``key``; False when that run no longer holds it."""
    result = session.execute(
        update(KeyLease)
        .where(KeyLease.idempotency_key == key, KeyLease.run_id == run_id)
        .values(expires_at=utcnow() + ttl)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def holds_lease(session: Session, *, key: str, run_id: int) -> bool:
    """True when ``run_id`` holds ``key`` now; the row stays locked until the caller's transaction ends."""
    lease = session.scalars(select(KeyLease).where(KeyLease.idempotency_key == key).with_for_update()).first()
    return lease is not None and lease.run_id == run_id


def release_lease(session: Session, *, key: str, run_id: int) -> None:
    """Give the lease back (only if ``run_id`` still holds it), closing its ``hold key`` step."""
    released = session.execute(
        delete(KeyLease).where(KeyLease.idempotency_key == key, KeyLease.run_id == run_id)
    )
    if released.rowcount:  # type: ignore[attr-defined]
        _close_hold(session, key=key, run_id=run_id, now=utcnow(), outcome=RELEASED)


def lease_holder(session: Session, *, key: str) -> LeaseHolder | None:
    """The recorded holder of ``key``, live or not."""
    lease = session.get(KeyLease, key)
    return LeaseHolder.of(lease) if lease is not None else None


__all__ = [
    "HOLD_KEY_STEP",
    "Claimant",
    "LeaseHolder",
    "holds_lease",
    "lease_holder",
    "release_lease",
    "renew_lease",
    "try_acquire_lease",
]
