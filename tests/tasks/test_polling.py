"""The one poller on a fake clock: intervals, estimates, deadline, failure states, transient errors and
parking."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connectors.errors import AuthFailed, ServerError
from core.errors import PostflowsError
from tasks.polling import Observation, PolledJob, PollPolicy, PollTimedOut, WaitClock, WaitParked, poll_until


class FakeTime:
    """A monotonic clock that only moves when the poller sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class JobFailed(PostflowsError):
    pass


def script(*steps: Observation[str] | Exception) -> Iterator[Observation[str] | Exception]:
    yield from steps


async def run(
    steps: Iterator[Observation[str] | Exception],
    policy: PollPolicy,
    seen: list[str] | None = None,
    *,
    waited_s: float = 0.0,
    time: FakeTime | None = None,
) -> tuple[str | WaitParked, FakeTime]:
    time = time or FakeTime()

    async def check() -> Observation[str]:
        step = next(steps)
        if isinstance(step, Exception):
            raise step
        return step

    result = await poll_until(
        check,
        policy,
        seen.append if seen is not None else None,
        job=PolledJob(waited_s=waited_s, progress=False),
        clock=WaitClock(time.sleep, time.clock),
    )
    return result, time


async def parked_run(
    steps: Iterator[Observation[str] | Exception],
    policy: PollPolicy,
    *,
    waited_s: float = 0.0,
    time: FakeTime | None = None,
) -> WaitParked:
    """The parked wait ``run`` returns (a returned outcome: the wait raises nothing)."""
    result, _ = await run(steps, policy, waited_s=waited_s, time=time)
    assert isinstance(result, WaitParked), result
    return result


def waiting(detail: str = "running", estimate: float | None = None) -> Observation[str]:
    return Observation(detail, done=False, estimate_s=estimate, detail=detail)


async def test_intervals_grow_from_the_minimum_to_the_maximum() -> None:
    steps = script(*[waiting() for _ in range(6)], Observation("finished", done=True))
    seen: list[str] = []
    result, time = await run(steps, PollPolicy(max_wait_s=1000, min_interval_s=2, max_interval_s=8), seen)
    assert result == "finished"
    assert time.sleeps == [2, 3, 4.5, 6.75, 8, 8]
    assert seen == ["running"] * 6 + ["finished"]


async def test_the_services_estimate_guides_the_next_look_within_the_bounds() -> None:
    steps = script(
        waiting(estimate=30), waiting(estimate=500), waiting(estimate=0.1), Observation("ok", True)
    )
    _, time = await run(steps, PollPolicy(max_wait_s=1000, min_interval_s=1, max_interval_s=60))
    assert time.sleeps == [30, 60, 1]


async def test_the_deadline_ends_the_wait_with_the_last_status_and_never_oversleeps() -> None:
    steps = script(*[waiting(f"running {n}%") for n in range(100)])
    with pytest.raises(PollTimedOut) as timed_out:
        await run(steps, PollPolicy(max_wait_s=10, min_interval_s=4, max_interval_s=4))
    assert timed_out.value.waited_s == 10
    # One last look at the deadline itself: 0, 4, 8 and 10 seconds.
    assert "running 3%" in str(timed_out.value)
    assert timed_out.value.last is not None and timed_out.value.last.status == "running 3%"


async def test_deadline_sleeps_add_up_to_the_maximum_wait() -> None:
    time = FakeTime()

    async def check() -> Observation[str]:
        return waiting()

    with pytest.raises(PollTimedOut):
        await poll_until(
            check,
            PollPolicy(10, 4, 4),
            job=PolledJob(progress=False),
            clock=WaitClock(time.sleep, time.clock),
        )
    assert time.sleeps == [4, 4, 2]


async def test_a_failure_state_raised_by_the_check_ends_the_wait_at_once() -> None:
    steps = script(waiting(), JobFailed("TokenStatus 5 Failed"), Observation("never", True))
    with pytest.raises(JobFailed):
        await run(steps, PollPolicy(100, 1, 10))
    assert next(steps).status == "never"  # nothing asked after the failure


async def test_transient_errors_are_looked_past_with_the_same_back_off_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outage = ServerError("503 from the status endpoint", api="demo", status_code=503)
    steps = script(waiting(), outage, outage, outage, Observation("finished", True))
    with caplog.at_level("WARNING", logger="postflows.polling"):
        result, time = await run(steps, PollPolicy(max_wait_s=100, min_interval_s=1, max_interval_s=60))
    assert result == "finished"
    assert time.sleeps == [1, 1.5, 2.25, 3.375]
    said = [record.getMessage() for record in caplog.records if record.name == "postflows.polling"]
    assert len(said) == 3
    assert said[0].startswith("remote job: its status could not be read (")
    assert "503 from the status endpoint" in said[0] and said[0].endswith("looking again in 2 s")


async def test_a_status_endpoint_down_past_the_deadline_raises_its_own_error_when_nothing_was_seen() -> None:
    outage = ServerError("503", api="demo", status_code=503)
    steps = script(*[outage] * 50)
    with pytest.raises(ServerError):
        await run(steps, PollPolicy(max_wait_s=5, min_interval_s=1, max_interval_s=1))


async def test_errors_that_are_not_transient_are_not_looked_past() -> None:
    steps = script(AuthFailed("401", api="demo", status_code=401), Observation("x", True))
    with pytest.raises(AuthFailed):
        await run(steps, PollPolicy(100, 1, 10))


async def test_an_async_status_callback_is_awaited() -> None:
    recorded: list[str] = []

    async def on_status(status: str) -> None:
        recorded.append(status)

    time = FakeTime()
    steps = script(waiting(), Observation("done", True))

    async def check() -> Observation[str]:
        step = next(steps)
        assert isinstance(step, Observation)
        return step

    await poll_until(
        check,
        PollPolicy(10, 1, 1),
        on_status,
        job=PolledJob(progress=False),
        clock=WaitClock(time.sleep, time.clock),
    )
    assert recorded == ["running", "done"]


def test_policy_refuses_impossible_intervals() -> None:
    with pytest.raises(ValueError):
        PollPolicy(min_interval_s=0)
    with pytest.raises(ValueError):
        PollPolicy(min_interval_s=5, max_interval_s=1)


PARKING = PollPolicy(max_wait_s=1000, min_interval_s=1, max_interval_s=4, park_after_s=10)


async def test_a_wait_without_an_estimate_parks_once_it_has_lasted_the_threshold() -> None:
    time = FakeTime()
    parked = await parked_run(script(*[waiting("running")] * 20), PARKING, time=time)
    assert parked.waited_s == pytest.approx(12.125)  # the first look past 10s: 1+1.5+2.25+3.375+4
    assert sum(time.sleeps) == pytest.approx(parked.waited_s)
    assert parked.resume_in_s == 10  # a job that ran that long is looked at again that much later
    assert parked.last.detail == "running"


async def test_an_estimate_longer_than_the_threshold_parks_at_once_until_the_job_should_end() -> None:
    time = FakeTime()
    parked = await parked_run(script(waiting(estimate=240), Observation("never", True)), PARKING, time=time)
    assert time.sleeps == [] and parked.resume_in_s == 240


async def test_a_short_estimate_waits_here() -> None:
    result, time = await run(script(waiting(estimate=3), Observation("done", True)), PARKING)
    assert result == "done" and time.sleeps == [3]


async def test_a_job_done_at_the_first_look_of_a_continued_wait_is_done() -> None:
    result, _ = await run(script(Observation("done", True)), PARKING, waited_s=500)
    assert result == "done"


async def test_a_continued_wait_parks_again_after_one_look_and_keeps_counting() -> None:
    parked = await parked_run(script(waiting(), Observation("never", True)), PARKING, waited_s=300)
    assert parked.waited_s == 300


async def test_a_continued_wait_keeps_the_first_runs_deadline() -> None:
    time = FakeTime()
    with pytest.raises(PollTimedOut) as timed_out:
        await run(script(*[waiting()] * 10), PollPolicy(100, 1, 4), waited_s=97, time=time)
    assert timed_out.value.waited_s == 100 and sum(time.sleeps) == 3


async def test_a_parked_wait_is_looked_at_again_by_the_deadline_at_the_latest() -> None:
    policy = PollPolicy(max_wait_s=100, min_interval_s=1, max_interval_s=4, park_after_s=10)
    parked = await parked_run(script(waiting(estimate=500)), policy, waited_s=30)
    assert parked.resume_in_s == 70


async def test_without_a_threshold_a_wait_never_parks() -> None:
    steps = script(waiting(estimate=5000), *[waiting()] * 30, Observation("done", True))
    result, _ = await run(steps, PollPolicy(max_wait_s=10_000, min_interval_s=1, max_interval_s=60))
    assert result == "done"


def test_policy_refuses_a_threshold_that_is_not_positive() -> None:
    with pytest.raises(ValueError):
        PollPolicy(park_after_s=0)


async def test_a_job_of_an_hour_with_estimates_is_looked_at_at_most_25_times_and_seen_at_its_end() -> None:
    time = FakeTime()
    looks: list[float] = []

    async def check() -> Observation[str]:
        looks.append(time.now)
        left = max(0.0, 3600.0 - time.now)
        return Observation("done", True) if left == 0 else waiting(estimate=left)

    result = await poll_until(
        check,
        PollPolicy(max_wait_s=7200),
        job=PolledJob(progress=False),
        clock=WaitClock(time.sleep, time.clock),
    )
    assert result == "done"
    assert len(looks) <= 25
    assert time.now == 3600.0
