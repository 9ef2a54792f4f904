"""The one poller: ``poll_until`` asks a remote job for its status until it is done, failed or out of time.

Every wait (batch job, order status, purchase progress) runs through it with one :class:`PollPolicy`: the
service's own estimate of the time left guides the next look when it gives one, otherwise the interval grows
from ``min_interval_s`` to ``max_interval_s``. A status check that fails transiently is looked at again with
the same back-off until the deadline, never faster. A wait that may park (``park_after_s``) returns
:class:`WaitParked` once it has lasted that long, or at once when the service expects the job to take longer:
the caller then lets a later run continue it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from connectors.errors import ApiError
from core.errors import PostflowsError
from tasks.progress import Progress

S = TypeVar("S")
logger = logging.getLogger("postflows.polling")

DEFAULT_MAX_INTERVAL_S = 180.0
"""The longest wait between two looks by default: a job of an hour is looked at about 20 times when the
service estimates the time left (and the last look lands at its estimated end), and a job without estimates
is seen at most 3 minutes late, 5 % of an hour."""


@dataclass(frozen=True)
class PollPolicy:
    """How a remote job is polled.

    Attributes:
        max_wait_s: give up (:class:`PollTimedOut`) after this many seconds.
        min_interval_s: the first wait, and the shortest.
        max_interval_s: the longest wait.
        growth: factor by which the wait grows when the service gives no estimate.
        park_after_s: end the wait, returning :class:`WaitParked`, once it has lasted this long, or when the
            service's estimate of the time left is longer; None waits in-process to the end.
    """

    max_wait_s: float = 3600.0
    min_interval_s: float = 1.0
    max_interval_s: float = DEFAULT_MAX_INTERVAL_S
    growth: float = 1.5
    park_after_s: float | None = None

    def __post_init__(self) -> None:
        if self.min_interval_s <= 0 or self.max_interval_s < self.min_interval_s:
            raise ValueError("poll intervals need 0 < min_interval_s <= max_interval_s")
        if self.max_wait_s < 0 or self.growth < 1:
            raise ValueError("max_wait_s must not be negative and growth must be at least 1")
        if self.park_after_s is not None and self.park_after_s <= 0:
            raise ValueError("park_after_s must be positive")

    def park_in(self, waited_s: float, *, estimate_s: float | None = None) -> float | None:
        """Seconds after which a parked wait should be looked at again, or None to go on waiting here.

        A wait parks once it has lasted ``park_after_s``, or at once when the service expects the job to
        take longer than that. It is looked at again when the estimate says the job ends, else after
        ``park_after_s`` (a job that ran that long is not expected back sooner), at the latest at the
        deadline; never sooner than ``min_interval_s``.
        """
        threshold = self.park_after_s
        if threshold is None:
            return None
        long_estimate = estimate_s is not None and estimate_s > threshold
        if waited_s < threshold and not long_estimate:
            return None
        expected = estimate_s if estimate_s is not None and estimate_s > 0 else threshold
        return max(self.min_interval_s, min(expected, self.max_wait_s - waited_s))

    def next_interval(self, previous: float | None, *, estimate_s: float | None = None) -> float:
        """The wait before the next look, from the previous wait and the service's estimate of time left."""
        if estimate_s is not None and estimate_s > 0:
            wanted = estimate_s
        elif previous is None:
            wanted = self.min_interval_s
        else:
            wanted = previous * self.growth
        return max(self.min_interval_s, min(self.max_interval_s, wanted))


@dataclass(frozen=True)
class Observation(Generic[S]):
    """What one look at a remote job showed.

    Attributes:
        status: the service's answer.
        done: the job reached its good end; polling stops and returns ``status``.
        estimate_s: the service's estimate of the seconds left, if it gives one.
        percent: progress for the progress display, if known.
        detail: a short text for the progress display and the time-out message.
    """

    status: S
    done: bool
    estimate_s: float | None = None
    percent: float | None = None
    detail: str = ""


class RemoteJobEnded(PostflowsError):
    """The remote job reached a failure state: it failed, or was cancelled. Waiting longer is pointless."""

    cancelled: bool = False


@dataclass(frozen=True)
class WaitParked:
    """How a parked wait ended: it is to be continued by a later run, the job being expected to take long.
    :func:`poll_until` returns it (an outcome its caller's type names, not an exception).

    Attributes:
        what: the job's name.
        waited_s: how long the job has been waited for, this run and earlier ones together.
        resume_in_s: seconds from now after which the job should be looked at again.
        last: the last look at the job.
    """

    what: str
    waited_s: float
    resume_in_s: float
    last: Observation[object]

    def __str__(self) -> str:
        state = f" ({self.last.detail})" if self.last.detail else ""
        return (
            f"{self.what} still running after {self.waited_s:.0f}s{state}; parked for {self.resume_in_s:.0f}s"
        )


class PollTimedOut(PostflowsError):
    """The job did not finish within ``max_wait_s``; it may still be running remotely."""

    def __init__(self, what: str, waited_s: float, last: Observation[object] | None) -> None:
        state = f" (last seen: {last.detail})" if last is not None and last.detail else ""
        super().__init__(f"{what} not finished after {waited_s:.0f}s{state}")
        self.what = what
        self.waited_s = waited_s
        self.last = last


Check = Callable[[], Awaitable[Observation[S]]]
StatusCallback = Callable[[S], Awaitable[None] | None]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class WaitClock:
    """The time a wait runs on: how it sleeps and its monotonic seconds (the real ones unless a test or a
    simulation passes its own)."""

    sleep: Sleep = asyncio.sleep
    now: Callable[[], float] = time.monotonic


@dataclass(frozen=True)
class PolledJob:
    """The job a wait is for.

    Attributes:
        what: its name in messages and the progress display.
        waited_s: how long earlier runs waited for it already; it counts towards the deadline and the
            parking threshold.
        progress: show a progress artifact / progress bar.
    """

    what: str = "remote job"
    waited_s: float = 0.0
    progress: bool = True


async def poll_until(
    check: Check[S],
    policy: PollPolicy,
    on_status: StatusCallback[S] | None = None,
    *,
    job: PolledJob = PolledJob(),
    clock: WaitClock = WaitClock(),
    transient: Callable[[ApiError], bool] | None = None,
) -> S | WaitParked:
    """Call ``check`` until it reports ``done``; return that status, or :class:`WaitParked` when the policy
    parks the wait (``policy.park_after_s``): not done, and to be continued by a later run.

    ``check`` raises a :class:`RemoteJobEnded` for a failure state (the job failed, was cancelled); that
    ends the wait. A transient :class:`~connectors.errors.ApiError` from ``check`` (the status endpoint is
    down for a while) is logged and looked past with the growing interval until the deadline; which errors
    are transient is ``transient``'s decision, by default the error's ``retryable``. The wait is the looks'
    one retry: a look is a plain call (the HTTP core retries a blip), never a retried task run whose own
    waits would run past the policy's intervals, its parking and its deadline.

    Args:
        check: one look at the job.
        policy: intervals and the deadline.
        on_status: told every status seen (may be a coroutine function).
        job: its name, how long earlier runs waited for it, whether progress is shown.
        clock: how the wait sleeps and tells the time (tests pass fakes).
        transient: which errors of a look are looked past (default: the retryable ones).

    Raises:
        PollTimedOut: still not done after ``policy.max_wait_s``.
    """
    started = clock.now() - job.waited_s
    tracker = await Progress.start(job.what) if job.progress else None
    interval: float | None = None
    last: Observation[S] | None = None
    while True:
        seen = await _look(check, transient)
        estimate: float | None = None
        if isinstance(seen, Observation):
            last, estimate = seen, seen.estimate_s
            if await _report(seen, on_status, tracker):
                return seen.status
        elapsed = clock.now() - started
        parked = _end_when_due(policy, job.what, elapsed, seen, last)
        if parked is not None:
            return parked
        interval = policy.next_interval(interval, estimate_s=estimate)
        pause = min(interval, policy.max_wait_s - elapsed)
        if isinstance(seen, ApiError):
            _run_logger().warning(
                "%s: its status could not be read (%s); looking again in %.0f s", job.what, seen, pause
            )
        await clock.sleep(pause)


def _run_logger() -> logging.Logger | logging.LoggerAdapter[logging.Logger]:
    """The run's logger inside a flow or task run (the UI shows what it says), else this module's."""
    from tasks.retrying import in_run  # loads Prefect: only once a look has failed

    if not in_run():
        return logger
    from prefect import get_run_logger

    return get_run_logger()


async def _look(check: Check[S], transient: Callable[[ApiError], bool] | None) -> Observation[S] | ApiError:
    """One look at the job: what it showed, or the transient error that hid it (any other is raised)."""
    try:
        return await check()
    except ApiError as error:
        if not (transient(error) if transient is not None else error.retryable):
            raise
        return error


async def _report(
    observation: Observation[S], on_status: StatusCallback[S] | None, tracker: Progress | None
) -> bool:
    """Tell ``on_status`` and the progress display what a look showed; whether the job is done."""
    if on_status is not None:
        outcome = on_status(observation.status)
        if outcome is not None:
            await outcome
    if tracker is not None:
        percent = 100.0 if observation.done else observation.percent or tracker.percent
        await tracker.update(percent, observation.detail or ("done" if observation.done else ""))
    return observation.done


def _end_when_due(
    policy: PollPolicy,
    what: str,
    elapsed: float,
    seen: Observation[S] | ApiError,
    last: Observation[S] | None,
) -> WaitParked | None:
    """End the wait when its time is up (the last error, when no look ever succeeded) or, with the parked
    wait returned, when the policy parks it after a successful look; otherwise None, and the wait goes on."""
    if elapsed >= policy.max_wait_s:
        if isinstance(seen, ApiError) and last is None:
            raise seen
        raise PollTimedOut(what, elapsed, last)  # type: ignore[arg-type]
    if isinstance(seen, Observation):
        resume_in = policy.park_in(elapsed, estimate_s=seen.estimate_s)
        if resume_in is not None:
            return WaitParked(what, elapsed, resume_in, seen)  # type: ignore[arg-type]
    return None
