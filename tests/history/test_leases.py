"""Key leases on SQLite and PostgreSQL: one holder per key, taken over when the holder is gone; ``hold key``
steps keep who held it when, and a run resuming the key's work closes only the runs that held it before."""

from __future__ import annotations

import threading
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from history import (
    HOLD_KEY_STEP,
    Claimant,
    LeaseHolder,
    Run,
    RunState,
    Step,
    abandon_stale_runs,
    finish_run,
    holds_lease,
    lease_holder,
    release_lease,
    renew_lease,
    start_run,
    try_acquire_lease,
    utcnow,
)

Factory = sessionmaker[Session]
TTL = timedelta(seconds=60)


def _run(factory: Factory) -> Run:
    with factory.begin() as session:
        return start_run(session, flow="flow", idempotency_key="key")


def _claimant(run: Run, pid: int = 100) -> Claimant:
    return Claimant(run_id=run.id, host="host-a", pid=pid, process_started="boot:1")


def _acquire(factory: Factory, run: Run, *, alive: bool = True, ttl: timedelta = TTL) -> LeaseHolder | None:
    with factory.begin() as session:
        return try_acquire_lease(
            session, key="key", claimant=_claimant(run), ttl=ttl, is_alive=lambda holder: alive
        )


def test_the_first_claimant_holds_the_key_and_a_second_sees_it(history_factory: Factory) -> None:
    first, second = _run(history_factory), _run(history_factory)
    assert _acquire(history_factory, first) is None
    holder = _acquire(history_factory, second)
    assert holder is not None and holder.run_id == first.id and holder.host == "host-a"
    assert _acquire(history_factory, first) is None  # the holder may ask again
    with history_factory.begin() as session:
        assert holds_lease(session, key="key", run_id=first.id)
        assert not holds_lease(session, key="key", run_id=second.id)


def test_a_dead_process_an_ended_run_or_an_expired_lease_loses_the_key(history_factory: Factory) -> None:
    first, second, third, fourth = (_run(history_factory) for _ in range(4))
    assert _acquire(history_factory, first) is None
    assert _acquire(history_factory, second, alive=False) is None  # the holder's process is gone
    with history_factory.begin() as session:
        assert lease_holder(session, key="key").run_id == second.id  # type: ignore[union-attr]
        finish_run(session, session.get(Run, second.id), state=RunState.COMPLETED)  # type: ignore[arg-type]
    assert _acquire(history_factory, third) is None  # the holder's run ended
    with history_factory.begin() as session:
        assert renew_lease(session, key="key", run_id=third.id, ttl=timedelta(seconds=-1))
    assert _acquire(history_factory, fourth) is None  # the holder stopped renewing: expired
    with history_factory.begin() as session:
        assert not renew_lease(session, key="key", run_id=third.id, ttl=TTL)  # it has lost the key


def test_release_lets_the_next_claimant_in(history_factory: Factory) -> None:
    first, second = _run(history_factory), _run(history_factory)
    assert _acquire(history_factory, first) is None
    with history_factory.begin() as session:
        release_lease(session, key="key", run_id=second.id)  # not the holder: nothing happens
        assert lease_holder(session, key="key").run_id == first.id  # type: ignore[union-attr]
        release_lease(session, key="key", run_id=first.id)
        assert lease_holder(session, key="key") is None
    assert _acquire(history_factory, second) is None


def test_concurrent_claimants_end_with_exactly_one_holder(history_factory: Factory) -> None:
    runs = [_run(history_factory) for _ in range(8)]
    outcomes: dict[int, LeaseHolder | None | str] = {}
    barrier = threading.Barrier(len(runs))

    def claim(run: Run) -> None:
        barrier.wait()
        for _ in range(5):
            try:
                outcomes[run.id] = _acquire(history_factory, run)
                return
            except IntegrityError:
                continue  # another claimant inserted first: ask again
        outcomes[run.id] = "gave up"

    threads = [threading.Thread(target=claim, args=(run,)) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [run_id for run_id, outcome in outcomes.items() if outcome is None]
    assert len(winners) == 1
    assert all(
        isinstance(outcome, LeaseHolder) and outcome.run_id == winners[0]
        for run_id, outcome in outcomes.items()
        if run_id != winners[0]
    )
    with history_factory.begin() as session:
        assert lease_holder(session, key="key").run_id == winners[0]  # type: ignore[union-attr]
        assert lease_holder(session, key="key").expires_at > utcnow()  # type: ignore[union-attr]


def _holds(factory: Factory) -> list[tuple[int, str, float]]:
    """Every ``hold key`` step: (run, outcome, seconds held), oldest first."""
    with factory.begin() as session:
        steps = session.scalars(select(Step).where(Step.name == HOLD_KEY_STEP).order_by(Step.id)).all()
        assert all(step.detail == "key" for step in steps)
        return [(step.run_id, step.outcome, step.duration_s) for step in steps]


def test_each_holder_has_a_hold_step_that_says_how_its_hold_ended(history_factory: Factory) -> None:
    first, second, third = (_run(history_factory) for _ in range(3))
    assert _acquire(history_factory, first) is None
    assert _acquire(history_factory, first) is None  # asking again is no second hold
    assert [(run, outcome) for run, outcome, _ in _holds(history_factory)] == [(first.id, "holding")]
    assert _acquire(history_factory, second, alive=False) is None  # first's process is gone
    with history_factory.begin() as session:
        release_lease(session, key="key", run_id=second.id)
    assert _acquire(history_factory, third) is None
    holds = _holds(history_factory)
    assert [(run, outcome) for run, outcome, _ in holds] == [
        (first.id, "lost"),
        (second.id, "ok"),
        (third.id, "holding"),
    ]
    assert all(seconds >= 0 for _, _, seconds in holds)
    with history_factory.begin() as session:
        spans = session.scalars(select(Step).where(Step.name == HOLD_KEY_STEP).order_by(Step.id)).all()
        # One holder at a time: each hold ends before the next begins.
        for held, following in zip(spans, spans[1:], strict=False):
            assert held.started_at + timedelta(seconds=held.duration_s) <= following.started_at


def test_a_resuming_run_closes_dead_holders_but_not_the_runs_waiting_for_the_key(
    history_factory: Factory,
) -> None:
    """Runs waiting for the key are alive: closing them as abandoned would make the lease of the one that
    takes the key next look stale, and the run after it would take the key over while it still works."""
    dead, resumer, waiting, last = (_run(history_factory) for _ in range(4))
    assert _acquire(history_factory, dead) is None  # then its process dies, its run stays RUNNING
    assert _acquire(history_factory, resumer, alive=False) is None
    assert _acquire(history_factory, waiting) is not None and _acquire(history_factory, last) is not None
    with history_factory.begin() as session:
        closed = abandon_stale_runs(session, flow="flow", idempotency_key="key", resumed_by=resumer)
        finish_run(session, session.get(Run, resumer.id), state=RunState.COMPLETED)  # type: ignore[arg-type]
        release_lease(session, key="key", run_id=resumer.id)
    assert closed == [dead.id]
    with history_factory.begin() as session:
        states = {run_id: session.get(Run, run_id).state for run_id in (waiting.id, last.id)}  # type: ignore[union-attr]
    assert states == {waiting.id: "RUNNING", last.id: "RUNNING"}

    assert _acquire(history_factory, waiting) is None
    holder = _acquire(history_factory, last)  # the waiting run now works on the key: last must wait
    assert holder is not None and holder.run_id == waiting.id
