"""The one submit-once protocol and the key it runs under, on a real SQLite history: what is sent, what is
recorded, and what the next run with the key does."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, event, select, update
from sqlalchemy.orm import Session

import history
from connectors.errors import RemoteRejected, ServerError, TransportFailure
from connectors.sending import TOKEN_REQUEST_EXTENSION, note_request
from history.errors import KeyBusy
from history.jobs import BatchJobData
from history.models import JobState, KeyLease, Run, Step
from history.recorder import RunRecorder
from history.remote_jobs import RemoteReport
from tasks.job_waits import JobParked, recorded_wait, recording_wait, waited_before
from tasks.polling import Observation, PollTimedOut, RemoteJobEnded, WaitParked
from tasks.run_history import start_recording
from tasks.submission import (
    ResumeMismatch,
    SubmissionJob,
    SubmissionUncertain,
    SubmitContext,
    is_marker,
    submit_each,
    submit_once,
)

KEY = "key-under-test"


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'history.db'}"


async def _run(database_url: str, *, key: str = KEY, wait_s: float = 5.0) -> RunRecorder:
    recorder = await start_recording(database_url, flow="test", idempotency_key=key, parameters={})
    await recorder.hold_key(ttl_s=30, wait_s=wait_s, poll_s=0.05)
    return recorder


@pytest.fixture
async def run(database_url: str) -> AsyncIterator[Callable[..., Awaitable[RunRecorder]]]:
    """Start runs of the key; each is finished at the end of the test if the test did not."""
    started: list[RunRecorder] = []

    async def start(**options: object) -> RunRecorder:
        recorder = await _run(database_url, **options)  # type: ignore[arg-type]
        started.append(recorder)
        return recorder

    yield start
    for recorder in started:
        if recorder.holds_key:
            await recorder.finish("COMPLETED")


class Service:
    """Counts sends; answers with ids 1, 2, ... or raises what it is told to."""

    def __init__(self) -> None:
        self.sent = 0
        self.failure: BaseException | None = None

    async def send(self) -> str:
        self.sent += 1
        if self.failure is not None:
            raise self.failure
        return f"job-{self.sent}"


def _dropped() -> TransportFailure:
    return TransportFailure("peer closed the connection", api="test", sent=True)


BATCH = SubmissionJob("batch", "batch job")


async def _submit(  # type: ignore[no-untyped-def]
    recorder: RunRecorder,
    service: Service,
    *,
    resubmit: bool = False,
    prepare=None,
    **job: object,
):
    """A batch job's submission under the recorder's key; ``job``: what the job says otherwise."""
    return await submit_once(
        SubmitContext(recorder, "test", resubmit=resubmit),
        dataclasses.replace(BATCH, **job),  # type: ignore[arg-type]
        service.send,
        str,
        prepare=prepare,
    )


def _counted_writes(recorder: RunRecorder) -> list[str]:
    """The names of the history writes ``recorder`` makes from now on, each its own transaction."""
    writes: list[str] = []
    write = recorder._write

    async def counted(work, *args, **kwargs):  # type: ignore[no-untyped-def]
        writes.append(work.__name__)
        return await write(work, *args, **kwargs)

    recorder._write = counted  # type: ignore[method-assign]
    return writes


async def test_a_submission_is_recorded_once_and_resumed_by_the_next_run(run) -> None:  # type: ignore[no-untyped-def]
    service = Service()
    first = await run()
    submitted = await _submit(first, service)
    assert not submitted.resumed and submitted.answer == "job-1"
    assert submitted.job.remote_id == "job-1" and submitted.job.state is JobState.SUBMITTED
    await first.finish("FAILED")

    second = await run()
    resumed = await _submit(second, service)
    assert resumed.resumed and resumed.job.remote_id == "job-1" and resumed.answer is None
    assert service.sent == 1


async def test_the_marker_is_synced_to_disk_before_the_request_leaves_and_no_other_write_waits_for_it(
    database_url: str,
    run,  # type: ignore[no-untyped-def]
) -> None:
    # Each write to the jobs table, with the SQLite sync level of the transaction that makes it.
    engine = history.db.session_factory(database_url).kw["bind"]
    writes: list[tuple[str, int]] = []
    sent_at: list[int] = []

    def note(_connection, cursor, statement, parameters, _context, _many) -> None:  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith(("INSERT INTO REMOTE_JOBS", "UPDATE REMOTE_JOBS")):
            level = cursor.connection.execute("PRAGMA synchronous").fetchone()[0]
            writes.append((statement.split()[0].upper(), int(level)))

    service = Service()
    original_send = service.send

    async def send() -> str:
        sent_at.append(len(writes))
        return await original_send()

    event.listen(engine, "before_cursor_execute", note)
    try:
        recorder = await run()
        submitted = await submit_once(SubmitContext(recorder, "test"), BATCH, send, str)
    finally:
        event.remove(engine, "before_cursor_execute", note)
    assert submitted.answer == "job-1" and service.sent == 1
    assert writes[0] == ("INSERT", history.db.SQLITE_SYNCHRONOUS_FULL)  # the PENDING marker
    assert sent_at == [1]  # sent once the marker was committed, and not before
    assert writes[1:] and all(level < history.db.SQLITE_SYNCHRONOUS_FULL for _, level in writes[1:])


@pytest.mark.parametrize(
    "failure",
    [
        _dropped(),
        ServerError("HTTP 502 Bad Gateway", api="test", status_code=502),
        RemoteRejected("Status 999 UnknownError", api="test", code="999"),
    ],
    ids=["dropped", "http-502", "rejection-not-on-the-list"],
)
async def test_an_unknown_outcome_refuses_until_resubmit(run, failure: BaseException) -> None:  # type: ignore[no-untyped-def]
    service = Service()
    service.failure = failure
    first = await run()
    with pytest.raises(type(failure)):
        await _submit(first, service)
    marker = await first.find_job(api="test", kind="batch")
    assert marker is not None and is_marker(marker) and marker.state is JobState.UNCERTAIN
    await first.finish("FAILED")

    second = await run()
    with pytest.raises(SubmissionUncertain, match="--resubmit") as refused:
        await _submit(second, service, hint="look in the portal")
    assert "Look in the portal" in str(refused.value) and service.sent == 1
    assert refused.value.exit_code == 2
    await second.finish("FAILED")

    third = await run()
    service.failure = None
    again = await _submit(third, service, resubmit=True)
    assert not again.resumed and again.job.remote_id == "job-2" and service.sent == 2
    assert again.replaced is not None and again.replaced.id == marker.id


async def test_a_run_killed_with_the_request_in_flight_leaves_pending_read_as_uncertain(
    run,  # type: ignore[no-untyped-def]
) -> None:
    service = Service()
    first = await run()

    async def never_answers() -> str:
        service.sent += 1
        await note_request(httpx.Request("POST", "https://service.example/jobs"))  # handed over
        await asyncio.sleep(3600)
        return "unreachable"

    sending = asyncio.create_task(submit_once(SubmitContext(first, "test"), BATCH, never_answers, str))
    await asyncio.sleep(0.2)
    marker = await first.find_job(api="test", kind="batch")
    assert marker is not None and marker.state is JobState.PENDING
    # The process dies: nothing more is written, and its lease is released by the end of the run.
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending
    recorded = await first.find_job(api="test", kind="batch")
    assert recorded is not None and recorded.state is JobState.UNCERTAIN
    await first.finish("CANCELLED")

    second = await run()
    with pytest.raises(SubmissionUncertain):
        await _submit(second, service)
    assert service.sent == 1


@pytest.mark.parametrize("handed_over", ["nothing", "a token request"])
async def test_a_submission_cancelled_before_its_request_was_handed_over_is_not_sent_and_runs_again(
    run,  # type: ignore[no-untyped-def]
    handed_over: str,
) -> None:
    service = Service()
    first = await run()

    async def waits_for_a_token() -> str:
        if handed_over == "a token request":
            token = httpx.Request(
                "POST", "https://auth.example/token", extensions={TOKEN_REQUEST_EXTENSION: True}
            )
            await note_request(token)
        await asyncio.sleep(3600)
        return "unreachable"

    sending = asyncio.create_task(submit_once(SubmitContext(first, "test"), BATCH, waits_for_a_token, str))
    await asyncio.sleep(0.2)
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending
    recorded = await first.find_job(api="test", kind="batch")
    assert recorded is not None and recorded.state is JobState.NOT_SENT
    await first.finish("CANCELLED")

    second = await run()
    submission = await _submit(second, service)  # no --resubmit needed
    assert service.sent == 1 and submission.job.state is JobState.SUBMITTED


@pytest.mark.parametrize("started", [False, True])
async def test_a_local_failure_is_not_sent_only_while_no_request_was_handed_over(
    run,  # type: ignore[no-untyped-def]
    started: bool,
) -> None:
    recorder = await run()

    async def refused_here() -> str:
        if started:
            await note_request(httpx.Request("POST", "https://service.example/jobs"))
        raise ValueError("Out of range float values are not JSON compliant")

    with pytest.raises(ValueError, match="not JSON compliant"):
        await submit_once(SubmitContext(recorder, "test"), BATCH, refused_here, str)
    recorded = await recorder.find_job(api="test", kind="batch")
    assert recorded is not None
    assert recorded.state is (JobState.UNCERTAIN if started else JobState.NOT_SENT)


@pytest.mark.parametrize(
    ("failure", "state"),
    [
        (
            RemoteRejected("refused: no such alignment", api="test", code="801", not_processed=True),
            JobState.REJECTED,
        ),
        (TransportFailure("connection refused", api="test", sent=False), JobState.NOT_SENT),
    ],
)
async def test_a_rejected_or_never_sent_submission_is_followed_by_a_new_one(
    run,  # type: ignore[no-untyped-def]
    failure: BaseException,
    state: JobState,
) -> None:
    service = Service()
    service.failure = failure
    first = await run()
    with pytest.raises(type(failure)):
        await _submit(first, service)
    ended = await first.find_job(api="test", kind="batch")
    assert ended is not None and ended.state is state
    await first.finish("FAILED")

    service.failure = None
    second = await run()
    submitted = await _submit(second, service)
    assert not submitted.resumed and service.sent == 2


async def test_resubmit_replaces_a_resumable_job_only_where_the_flow_allows_it(run) -> None:  # type: ignore[no-untyped-def]
    service = Service()
    first = await run()
    await _submit(first, service)
    await first.finish("FAILED")

    second = await run()
    resumed = await _submit(second, service, resubmit=True)
    assert resumed.resumed and service.sent == 1, "without a rule, --resubmit leaves a known job alone"
    await second.finish("FAILED")

    third = await run()
    replaced = await _submit(third, service, resubmit=True, replaceable=lambda job: True)
    assert not replaced.resumed and service.sent == 2 and replaced.job.remote_id == "job-2"
    assert replaced.replaced is not None and replaced.replaced.remote_id == "job-1"
    assert replaced.replaced.id is not None
    earlier = await third.job_with_remote_id(api="test", kind="batch", remote_id="job-1")
    assert earlier is not None and earlier.state is JobState.SUPERSEDED
    await third.finish("COMPLETED")

    fourth = await run()
    again = await _submit(fourth, service, resubmit=True, replaceable=lambda job: False)
    assert again.resumed and again.job.remote_id == "job-2" and service.sent == 2


async def test_a_recorded_job_made_from_other_input_is_never_resumed(run) -> None:  # type: ignore[no-untyped-def]
    service = Service()
    first = await run()
    await _submit(first, service, fingerprint="a" * 64)
    await first.finish("COMPLETED")

    second = await run()
    with pytest.raises(ResumeMismatch) as mismatch:
        await _submit(second, service, fingerprint="b" * 64)
    assert "a" * 64 in str(mismatch.value) and "b" * 64 in str(mismatch.value)
    assert mismatch.value.exit_code == 2 and service.sent == 1


async def test_free_preparation_runs_only_for_a_new_submission_and_is_recorded(run) -> None:  # type: ignore[no-untyped-def]
    service = Service()
    uploads: list[str] = []

    async def upload() -> dict[str, str]:
        uploads.append("upload")
        return {"input_token": f"token-{len(uploads)}"}

    first = await run()
    submitted = await _submit(first, service, prepare=upload)
    assert submitted.job.data["input_token"] == "token-1"
    await first.finish("COMPLETED")
    second = await run()
    await _submit(second, service, prepare=upload)
    assert uploads == ["upload"]


async def test_what_the_answer_says_is_recorded_with_its_id(run) -> None:  # type: ignore[no-untyped-def]
    service = Service()
    recorder = await run()
    writes = _counted_writes(recorder)
    submitted = await _submit(
        recorder, service, answer_data=lambda answer: BatchJobData(settlement_id=len(answer))
    )
    assert (submitted.job.remote_id, submitted.job.facts(BatchJobData).settlement_id) == ("job-1", 5)
    assert len(writes) == 3  # the look-up, the marker, and the id with what the answer says


async def test_every_ending_of_a_wait_is_recorded(run) -> None:  # type: ignore[no-untyped-def]
    service = Service()
    recorder = await run()
    job = (await _submit(recorder, service)).job

    class Failed(RemoteJobEnded):
        pass

    cancelled = Failed("cancelled by the operator")
    cancelled.cancelled = True
    endings: list[tuple[BaseException, JobState]] = [
        (PollTimedOut("batch job", 10.0, None), JobState.WAITING),
        (KeyboardInterrupt(), JobState.WAITING),
        (Failed("failed"), JobState.FAILED),
        (cancelled, JobState.CANCELLED),
    ]
    for error, state in endings:
        with pytest.raises(type(error)):
            async with recording_wait(recorder, job, what="batch job"):
                raise error
        recorded = await recorder.find_job(api="test", kind="batch")
        assert recorded is not None and recorded.state is state, error


async def test_a_status_write_in_flight_when_the_wait_is_cancelled_lands_before_the_waiting_one(
    run,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    service = Service()
    recorder = await run()
    job = (await _submit(recorder, service)).job
    factory = recorder._factory
    release, entered = threading.Event(), threading.Event()

    class HeldFactory:
        """Holds the next write's thread before it opens its transaction, as a busy thread pool would."""

        def begin(self):  # type: ignore[no-untyped-def]
            if not entered.is_set():
                entered.set()
                release.wait(10)
            return factory.begin()

    monkeypatch.setattr(recorder, "_factory", HeldFactory())

    async def wait() -> None:
        async with recording_wait(recorder, job, what="batch job"):
            await recorder.update_job(
                job, status=JobState.RUNNING, report=RemoteReport(remote_status="in progress")
            )
            await asyncio.sleep(60)

    waiting = asyncio.ensure_future(wait())
    await asyncio.to_thread(entered.wait, 10)
    waiting.cancel()
    await asyncio.sleep(0.2)
    assert not waiting.done()  # the poll's write is still in its thread; the cancellation waits for it
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    recorded = await recorder.find_job(api="test", kind="batch")
    assert recorded is not None and recorded.state is JobState.WAITING


async def test_a_parked_wait_is_returned_recorded_and_continued_from_where_it_stopped(run) -> None:  # type: ignore[no-untyped-def]
    service = Service()
    recorder = await run()
    job = (await _submit(recorder, service)).job
    before = datetime.now(UTC)

    async def parks(waited_s: float) -> str | WaitParked:
        return WaitParked("batch job", waited_s, 300.0, Observation("running", False))

    first = await recorded_wait(recorder, job, lambda: parks(600.0), what="batch job")
    assert isinstance(first, JobParked)  # an outcome the caller handles, not an exception
    parked = first.job
    assert parked.state is JobState.WAITING and first.count == 1
    assert first.resume_at - before >= timedelta(seconds=300)
    assert 600 <= waited_before(parked) < 610
    assert waited_before(job) == 0  # the job as it was before it ever parked

    # The follow-up parks again: the wait still began when the first run's did.
    second = await recorded_wait(recorder, parked, lambda: parks(1300.0), what="batch job")
    assert isinstance(second, JobParked) and second.count == 2
    assert second.job.data["parked"]["waiting_since"] == parked.data["parked"]["waiting_since"]

    # A wait that ends otherwise forgets the parking: the next one starts afresh.
    with pytest.raises(PollTimedOut):
        async with recording_wait(recorder, second.job, what="batch job"):
            raise PollTimedOut("batch job", 3600.0, None)
    timed_out = await recorder.find_job(api="test", kind="batch")
    assert timed_out is not None and timed_out.state is JobState.WAITING
    assert not timed_out.data.get("parked") and waited_before(timed_out) == 0


async def test_a_second_run_with_the_key_waits_for_a_live_holder_then_gives_up(
    database_url: str,
    run,  # type: ignore[no-untyped-def]
) -> None:
    holder = await run()
    told: list[str] = []
    second = await start_recording(database_url, flow="test", idempotency_key=KEY, parameters={})
    with pytest.raises(KeyBusy) as busy:
        await second.hold_key(ttl_s=30, wait_s=0.3, poll_s=0.05, notify=told.append)
    assert f"run {holder.run_id}" in str(busy.value) and "Run again" in str(busy.value)
    assert len(told) == 1 and f"run {holder.run_id}" in told[0]
    await second.finish("FAILED")


async def test_a_run_goes_on_under_the_key_of_its_work_and_gives_its_first_key_back(
    database_url: str,
    run,  # type: ignore[no-untyped-def]
) -> None:
    work = "work-key"
    first = await run(key="options-a")
    await first.rekey(work)
    assert first.idempotency_key == work and first.holds_key
    factory = history.session_factory(database_url)
    with factory() as session:
        assert session.get(KeyLease, work).run_id == first.run_id  # type: ignore[union-attr]
        assert session.get(KeyLease, "options-a") is None
        assert session.get(Run, first.run_id).idempotency_key == work  # type: ignore[union-attr]
    service = Service()
    await _submit(first, service)

    # Another spelling of the options: its own first key is free, the work's key is held by the first run.
    second = await run(key="options-b", wait_s=0.3)
    with pytest.raises(KeyBusy):
        await second.rekey(work)
    assert second.idempotency_key == "options-b" and second.holds_key
    await second.finish("FAILED")
    await first.finish("COMPLETED")

    third = await run(key="options-c")
    await third.rekey(work)
    resumed = await _submit(third, service)
    assert resumed.resumed and resumed.job.remote_id == "job-1" and service.sent == 1
    await third.finish("COMPLETED")
    with factory() as session:
        assert session.get(KeyLease, work) is None
        holds = session.scalars(
            select(Step.detail).where(Step.run_id == third.run_id, Step.name == history.HOLD_KEY_STEP)
        ).all()
    assert holds == ["options-c", work]


async def test_the_key_is_taken_and_an_interrupted_run_before_found_in_one_transaction(
    database_url: str,
    run,  # type: ignore[no-untyped-def]
) -> None:
    first = await run()
    await first.finish("INTERRUPTED")
    other = await run(key="work-key")
    await other.finish("INTERRUPTED")

    second = await start_recording(database_url, flow="test", idempotency_key=KEY, parameters={})
    writes = _counted_writes(second)
    await second.hold_key(ttl_s=30, wait_s=5, poll_s=0.05)
    assert writes == ["_try_acquire"] and second.outputs.took_up == first.run_id
    await second.rekey("work-key")  # the run it took up is said once: the other is not looked for
    assert writes == ["_try_acquire", "_try_acquire", "switch"] and second.outputs.took_up == first.run_id
    await second.finish("COMPLETED")

    third = await run(key="options")
    await third.rekey("work-key")
    assert third.outputs.took_up is None  # the run before it under the work's key completed


async def test_a_key_is_taken_over_when_its_holder_ended_or_its_process_is_gone(
    database_url: str,
    run,  # type: ignore[no-untyped-def]
) -> None:
    first = await run()
    await first.finish("COMPLETED")
    second = await run(wait_s=0.5)
    assert second.holds_key

    # The holder's process died without finishing its run: its pid no longer lives on this host.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    if second._heartbeat is not None:  # noqa: SLF001
        second._heartbeat.cancel()  # noqa: SLF001
    factory = history.session_factory(database_url)
    with factory.begin() as session:
        session.execute(
            update(KeyLease)
            .where(KeyLease.idempotency_key == KEY)
            .values(pid=int(dead.stdout), process_started=None)
        )
    third = await run(wait_s=0.5)
    assert third.holds_key


async def test_a_run_ends_and_gives_its_key_back_in_one_commit(database_url: str, run) -> None:  # type: ignore[no-untyped-def]
    """A claimant that found the run ended while its lease was still there would take the key over and
    record the finished run's hold as lost."""
    first = await run()
    seen: list[tuple[str, int | None]] = []
    reader = create_engine(database_url)

    def after_commit(session: object) -> None:
        with reader.connect() as connection:
            state = connection.scalar(select(Run.state).where(Run.id == first.run_id))
            holder = connection.scalar(select(KeyLease.run_id).where(KeyLease.idempotency_key == KEY))
        seen.append((str(state), holder))

    event.listen(Session, "after_commit", after_commit)
    try:
        await first.finish("COMPLETED")
    finally:
        event.remove(Session, "after_commit", after_commit)
        reader.dispose()
    assert seen and seen[-1] == ("COMPLETED", None)
    assert ("COMPLETED", first.run_id) not in seen, seen
    with history.session_factory(database_url)() as session:
        outcomes = session.scalars(
            select(Step.outcome).where(Step.run_id == first.run_id, Step.name == history.HOLD_KEY_STEP)
        ).all()
    assert outcomes == ["ok"]


async def test_a_key_is_taken_over_when_its_lease_expired(database_url: str, run) -> None:  # type: ignore[no-untyped-def]
    first = await run()
    if first._heartbeat is not None:  # noqa: SLF001 - a hung holder no longer renews
        first._heartbeat.cancel()  # noqa: SLF001
    factory = history.session_factory(database_url)
    with factory.begin() as session:
        session.execute(
            update(KeyLease)
            .where(KeyLease.idempotency_key == KEY)
            .values(host="another-host", expires_at=history.utcnow())
        )
    second = await run(wait_s=0.5)
    assert second.holds_key


async def test_submit_each_stops_at_a_failure_without_cutting_off_the_requests_in_flight() -> None:
    started: list[int] = []
    ended: list[int] = []

    async def submit(item: int) -> None:
        started.append(item)
        await asyncio.sleep(0.05 if item == 0 else 0.2)
        ended.append(item)
        if item < 3:
            raise ServerError(f"failed {item}", api="x", status_code=500)

    with pytest.raises(ServerError, match="failed 0"):
        await submit_each(range(10), submit, concurrency=3)
    assert started == [0, 1, 2] and sorted(ended) == [0, 1, 2]  # nothing new started, none cut off


async def test_submit_each_is_cut_off_by_a_cancellation() -> None:
    ended: list[int] = []

    async def submit(item: int) -> None:
        await asyncio.sleep(10)
        ended.append(item)

    work = asyncio.create_task(submit_each(range(4), submit, concurrency=2))
    await asyncio.sleep(0.05)
    work.cancel()
    with pytest.raises(asyncio.CancelledError):
        await work
    assert ended == []


def test_a_submission_job_says_what_its_marker_carries_and_which_recorded_job_it_resumes() -> None:
    job = SubmissionJob("batch", "batch job", fingerprint="a" * 64)
    assert job.marker_facts() == {"fingerprint": "a" * 64}
    assert SubmissionJob("batch", "batch job").marker_facts() == {}

    class Recorded:
        def __init__(self, state: JobState) -> None:
            self.state = state

    waiting, failed = Recorded(JobState.WAITING), Recorded(JobState.FAILED)
    assert job.resumes(waiting) and not job.resumes(failed)  # type: ignore[arg-type]  # by its state
    only_failed = dataclasses.replace(job, resumable=lambda recorded: recorded.state is JobState.FAILED)
    assert only_failed.resumes(failed) and not only_failed.resumes(waiting)  # type: ignore[arg-type]
