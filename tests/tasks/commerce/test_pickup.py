"""Registering pickup users row by row under the submit-once protocol, on a real SQLite history and a fake
pickup service: what is sent, what a re-run resumes, and what waits for --resubmit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from sqlalchemy import select

import history
from connectors.commerce import CommerceRejected, PickupUser, PickupUserRequest
from connectors.commerce.errors import GuessedPathNotFound
from connectors.errors import AuthFailed, ServerError, TransportFailure
from fileio.commerce.pickup_input import PickupInput, PickupRow, pickup_request
from history.errors import LeaseLost
from history.identity import Endpoint
from history.models import JobState
from history.recorder import RunRecorder
from tasks.commerce.pickup import (
    KIND,
    PickupUncertain,
    RowStatus,
    register_pickup_users,
    results_frame,
    status_counts,
)
from tasks.run_history import start_recording

ENDPOINT = Endpoint("https://commerce.example/", "client-1")
RUN_KEY = "pickup-registration@test"


class PickupService:
    """Answers the same id for the same person (names and e-mail, any case), like the real service; can lose
    the answer of (or refuse, or fail) a person's registration."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, ...], str] = {}
        self.sent: list[str] = []
        self.lose: set[str] = set()
        self.refuse: set[str] = set()
        self.refuse_unsure: set[str] = set()
        self.server_error: set[str] = set()
        self.auth_fails = False
        self.wrong_path = False
        self.in_flight = 0
        self.most_in_flight = 0
        self.hold_until_in_flight = 0

    async def register_pickup_user(self, request: PickupUserRequest) -> PickupUser:
        name = request.user_details.first_name
        self.sent.append(name)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            async with asyncio.timeout(5):  # answered once this many have been in flight together
                while self.most_in_flight < self.hold_until_in_flight:
                    await asyncio.sleep(0.01)
        finally:
            self.in_flight -= 1
        if self.auth_fails:
            raise AuthFailed("commerce: HTTP 403", api="commerce", status_code=403, not_processed=True)
        if self.wrong_path:
            raise GuessedPathNotFound(
                "commerce: HTTP 404 for POST /pickup/v1/users: set POSTFLOWS_COMMERCE_PICKUP_PATH",
                api="commerce",
                status_code=404,
                setting="POSTFLOWS_COMMERCE_PICKUP_PATH",
            )
        if name in self.refuse:
            raise CommerceRejected(
                "commerce: HTTP 400: street unknown",
                code="400",
                meaning="",
                status_code=400,
                not_processed=True,
            )
        if name in self.refuse_unsure:
            raise CommerceRejected(
                "commerce: HTTP 400: street unknown", code="400", meaning="", status_code=400
            )
        if name in self.server_error:
            raise ServerError("commerce: HTTP 502", api="commerce", status_code=502)
        who = (
            name.casefold(),
            request.user_details.last_name.casefold(),
            (request.notification.email or "").casefold(),
        )
        user_id = self.ids.setdefault(who, f"pickup-{len(self.ids) + 1}")
        if name in self.lose:
            self.lose.discard(name)
            raise TransportFailure("commerce: peer closed the connection", api="commerce", sent=True)
        return PickupUser(id=user_id, verified="NONE")


def row(number: int, first: str, *, language: str = "DE", email: str | None = None) -> PickupRow:
    cells = {
        "firstName": first,
        "lastName": "Muster",
        "language": language,
        "zip": "8001",
        "city": "Zürich",
        "email": email or f"{first.lower()}@example.ch",
    }
    return PickupRow(number, pickup_request(cells))


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'history.db'}"


@pytest.fixture
async def run(database_url: str) -> AsyncIterator[Callable[[], Awaitable[RunRecorder]]]:
    started: list[RunRecorder] = []

    async def start() -> RunRecorder:
        recorder = await start_recording(database_url, flow="test", idempotency_key=RUN_KEY, parameters={})
        await recorder.hold_key(ttl_s=30, wait_s=5, poll_s=0.05)
        started.append(recorder)
        return recorder

    yield start
    for recorder in started:
        if recorder.holds_key:
            await recorder.finish("COMPLETED")


async def register(recorder: RunRecorder, service: PickupService, rows: list[PickupRow], **options: object):  # type: ignore[no-untyped-def]
    outcomes = await register_pickup_users.fn(service, recorder, rows, endpoint=ENDPOINT, **options)  # type: ignore[arg-type]
    await recorder.finish("COMPLETED")
    return outcomes


def jobs(database_url: str) -> list[history.RemoteJob]:
    with history.session_factory(database_url)() as session:
        return list(session.scalars(select(history.RemoteJob)))


async def test_registers_once_and_a_rerun_resumes_without_sending(run, database_url: str) -> None:  # type: ignore[no-untyped-def]
    service = PickupService()
    rows = [row(1, "Hans"), row(2, "Anna"), row(3, "Hans")]  # row 3 repeats row 1
    first = await register(await run(), service, rows)
    assert [(o.row, o.status) for o in first] == [(n, RowStatus.REGISTERED) for n in (1, 2, 3)]
    assert first[2].pickup_id == first[0].pickup_id != first[1].pickup_id
    assert sorted(service.sent) == ["Anna", "Hans"]  # the repeated row is sent once
    assert "same request as row 1" in first[2].message
    assert {o.verified for o in first} == {"NONE"}

    again = await register(await run(), service, rows)
    assert [o.status for o in again] == [RowStatus.RESUMED] * 3
    assert [o.pickup_id for o in again] == [o.pickup_id for o in first]
    assert [o.verified for o in again] == ["NONE"] * 3
    assert len(service.sent) == 2
    recorded = [job for job in jobs(database_url) if job.kind == KIND]
    assert {job.remote_id for job in recorded} == {"pickup-1", "pickup-2"}
    assert {job.status for job in recorded} == {JobState.COMPLETED}


async def test_lost_answer_waits_for_resubmit_and_gets_the_same_id(run) -> None:  # type: ignore[no-untyped-def]
    service = PickupService()
    service.lose.add("Anna")
    rows = [row(1, "Hans"), row(2, "Anna")]
    first = await register(await run(), service, rows, concurrency=1)
    assert [o.status for o in first] == [RowStatus.REGISTERED, RowStatus.UNCERTAIN]
    assert "--resubmit" in first[1].message and first[1].pickup_id == ""

    again = await register(await run(), service, rows)
    assert [o.status for o in again] == [RowStatus.RESUMED, RowStatus.UNCERTAIN]
    assert service.sent == ["Hans", "Anna"]  # the uncertain row was not sent again on its own

    resubmitted = await register(await run(), service, rows, resubmit=True)
    assert [o.status for o in resubmitted] == [RowStatus.RESUMED, RowStatus.REGISTERED]
    assert resubmitted[1].pickup_id == service.ids[("anna", "muster", "anna@example.ch")]
    assert service.sent == ["Hans", "Anna", "Anna"]


async def test_server_error_on_the_post_is_uncertain(run) -> None:  # type: ignore[no-untyped-def]
    service = PickupService()
    service.server_error.add("Anna")
    [outcome] = await register(await run(), service, [row(1, "Anna")])
    assert outcome.status is RowStatus.UNCERTAIN and "HTTP 502" in outcome.message


async def test_a_refusal_that_certainly_means_not_processed_keeps_the_message_and_the_rest_goes_on(
    run,
) -> None:  # type: ignore[no-untyped-def]
    service = PickupService()
    service.refuse.add("Anna")
    outcomes = await register(await run(), service, [row(1, "Anna"), row(2, "Hans")])
    assert [o.status for o in outcomes] == [RowStatus.REFUSED, RowStatus.REGISTERED]
    assert "street unknown" in outcomes[0].message
    assert status_counts(outcomes) == {"registered": 1, "resumed": 0, "uncertain": 0, "refused": 1}


async def test_a_400_that_does_not_prove_not_processed_is_uncertain_and_the_next_run_stops_with_exit_2(
    run,
) -> None:  # type: ignore[no-untyped-def]
    service = PickupService()
    service.refuse_unsure.add("Anna")
    rows = [row(1, "Anna"), row(2, "Hans")]
    first = await register(await run(), service, rows)
    assert [o.status for o in first] == [RowStatus.UNCERTAIN, RowStatus.REGISTERED]
    assert "HTTP 400: street unknown" in first[0].message and not first[0].sent_before
    assert PickupUncertain([first[0]], "results.csv").exit_code == 1  # this run's request: the work failed

    again = await register(await run(), service, rows)
    assert [o.status for o in again] == [RowStatus.UNCERTAIN, RowStatus.RESUMED]
    assert again[0].sent_before and sorted(service.sent) == ["Anna", "Hans"]  # one POST each in all
    stopped = PickupUncertain([again[0]], "results.csv")
    assert stopped.exit_code == 2 and "--resubmit" in str(stopped)
    # Still 2 when a request of this run lost its answer too: an earlier one waits for --resubmit.
    assert PickupUncertain([again[0], first[0]], "results.csv").exit_code == 2


async def test_a_wrong_path_stops_the_run_and_the_next_one_with_the_right_path_sends_every_row(  # type: ignore[no-untyped-def]
    run, database_url: str
) -> None:
    service = PickupService()
    service.wrong_path, service.hold_until_in_flight = True, 3
    rows = [row(number, name) for number, name in enumerate(["Anna", "Hans", "Eva", "Max", "Ida", "Urs"], 1)]
    recorder = await run()
    with pytest.raises(GuessedPathNotFound, match="POSTFLOWS_COMMERCE_PICKUP_PATH"):
        await register_pickup_users.fn(service, recorder, rows, endpoint=ENDPOINT, concurrency=3)  # type: ignore[arg-type]
    await recorder.finish("FAILED")
    # The three in flight ended with their own answer (none cut off, none left uncertain); no fourth left.
    assert len(service.sent) == 3 and service.most_in_flight == 3
    assert {job.status for job in jobs(database_url) if job.kind == KIND} == {JobState.REJECTED}

    service.wrong_path, service.hold_until_in_flight = False, 0
    again = await register(await run(), service, rows, concurrency=3)
    assert [o.status for o in again] == [RowStatus.REGISTERED] * 6


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_one_user_written_two_ways_gets_one_id_and_two_records(  # type: ignore[no-untyped-def]
    run, database_url: str, concurrency: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if concurrency > 1:
        # Both answers arrive before either id is recorded: the second must not claim the same remote id.
        slow = RunRecorder.update_job

        async def update_later(self, job, **changes):  # type: ignore[no-untyped-def]
            await asyncio.sleep(0.2)
            return await slow(self, job, **changes)

        monkeypatch.setattr(RunRecorder, "update_job", update_later)
    service = PickupService()
    rows = [row(1, "Anna", language="DE"), row(2, "Anna", language="FR", email="ANNA@example.ch")]
    first = await register(await run(), service, rows, concurrency=concurrency)
    assert [(o.status, o.pickup_id) for o in first] == [(RowStatus.REGISTERED, "pickup-1")] * 2
    again = await register(await run(), service, rows)
    assert [(o.status, o.pickup_id) for o in again] == [(RowStatus.RESUMED, "pickup-1")] * 2
    assert len(service.sent) == 2
    remote_ids = sorted(job.remote_id for job in jobs(database_url) if job.kind == KIND)
    assert remote_ids[0] == "pickup-1" and remote_ids[1].startswith("pickup-1 for pickup-user:")


async def test_a_failure_not_about_the_row_stops_the_run(run) -> None:  # type: ignore[no-untyped-def]
    service = PickupService()
    service.auth_fails = True
    recorder = await run()
    with pytest.raises(AuthFailed):
        await register_pickup_users.fn(
            service, recorder, [row(1, "Anna"), row(2, "Hans")], endpoint=ENDPOINT, concurrency=1
        )  # type: ignore[arg-type]
    assert service.sent == ["Anna"]


async def test_nothing_is_sent_once_the_run_lost_its_key(run, database_url: str) -> None:  # type: ignore[no-untyped-def]
    service = PickupService()
    recorder = await run()
    with history.session_factory(database_url).begin() as session:
        history.release_lease(session, key=RUN_KEY, run_id=recorder.run_id)
    with pytest.raises(LeaseLost):
        await register_pickup_users.fn(service, recorder, [row(1, "Anna")], endpoint=ENDPOINT)  # type: ignore[arg-type]
    assert service.sent == []


def test_results_keep_every_input_column(tmp_path: Path) -> None:
    import pandas as pd

    from tasks.commerce.pickup import RowOutcome

    frame = pd.DataFrame(
        {"firstName": ["Hans", "x", "Anna"], "status": ["vip", "", "new"], "Kdnr": ["K1", "K2", "K3"]},
        index=[1, 2, 3],
    )
    read = PickupInput(
        frame, {"firstName": "firstName"}, [], pd.DataFrame(), pd.DataFrame(), 0, "Kdnr", {1: 2, 3: 5}
    )
    outcomes = [
        RowOutcome(3, RowStatus.REFUSED, message="no"),
        RowOutcome(1, RowStatus.REGISTERED, "p-1", "NONE"),
    ]
    results = results_frame(read, outcomes)
    assert list(results.columns) == [  # named as rejected.csv names rows: the id, the line, the row
        "Kdnr",
        "line",
        "row",
        "firstName",
        "status (input)",
        "pickupId",
        "verified",
        "status",
        "message",
    ]
    assert results.values.tolist() == [
        ["K1", 2, 1, "Hans", "vip", "p-1", "NONE", "registered", ""],
        ["K3", 5, 3, "Anna", "new", "", "", "refused", "no"],
    ]
