"""Key leases on SQLite and PostgreSQL: one holder per key, taken over when the holder is gone."""

from __future__ import annotations

import threading
from datetime import timedelta

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from history import (
    Claimant,
    LeaseHolder,
    Run,
    RunState,
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
