"""The one poller: ``poll_until`` asks a remote job for its status until it is done, failed or out of time.

Every wait (batch job, order status, purchase progress) runs through it with one :class:`PollPolicy`: the
service's own estimate of the time left guides the next look when it gives one, otherwise the interval grows
from ``min_interval_s`` to ``max_interval_s``. A status check that fails transiently is looked at again with
the same back-off until the deadline, never faster. A wait that may park (``park_after_s``) ends with
:class:`WaitParked` once it has lasted that long, or at once when the service expects the job to take longer:
the caller then lets a later run continue it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from connectors.errors import ApiError
from core.errors import PostflowsError
from tasks.progress import Progress

S = TypeVar("S")

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
        park_after_s: end the wait with :class:`WaitParked` once it has lasted this long, or when the
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


class WaitParked(PostflowsError):
    """The wait ends here and is to be continued by a later run: the job is expected to take long.

    Attributes:
        what: the job's name.
        waited_s: how long the job has been waited for, this run and earlier ones together.
        resume_in_s: seconds from now after which the job should be looked at again.
        last: the last look at the job.
    """

    def __init__(self, what: str, waited_s: float, resume_in_s: float, last: Observation[object]) -> None:
        state = f" ({last.detail})" if last.detail else ""
        super().__init__(f"{what} still running after {waited_s:.0f}s{state}; parked for {resume_in_s:.0f}s")
        self.what = what
        self.waited_s = waited_s
        self.resume_in_s = resume_in_s
        self.last = last


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


async def poll_until(
    check: Check[S],
    policy: PollPolicy,
    on_status: StatusCallback[S] | None = None,
    *,
    what: str = "remote job",
    progress: bool = True,
    waited_s: float = 0.0,
    sleep: Sleep = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    transient: Callable[[ApiError], bool] | None = None,
) -> S:
    """Call ``check`` until it reports ``done``; return that status.

    ``check`` raises a :class:`RemoteJobEnded` for a failure state (the job failed, was cancelled); that
    ends the wait. A transient :class:`~connectors.errors.ApiError` from ``check`` (the status endpoint is
    down for a while) is looked past with the growing interval until the deadline; which errors are
    transient is ``transient``'s decision, by default the error's ``retryable``.

    Args:
        check: one look at the job.
        policy: intervals and the deadline.
        on_status: told every status seen (may be a coroutine function).
        what: the job's name in messages and the progress display.
        progress: show a progress artifact / progress bar.
        waited_s: how long earlier runs waited for this job already; it counts towards the deadline and
            the parking threshold.
        sleep: the coroutine used to wait (tests pass a fake).
        clock: monotonic seconds (tests pass a fake).
        transient: which errors of a look are looked past (default: the retryable ones).

    Raises:
        PollTimedOut: still not done after ``policy.max_wait_s``.
        WaitParked: not done, and the policy parks the wait (``policy.park_after_s``).
    """
    started = clock() - waited_s
    tracker = await Progress.start(what) if progress else None
    interval: float | None = None
    last: Observation[S] | None = None
    while True:
        estimate: float | None = None
        try:
            observation = await check()
        except ApiError as error:
            if not (transient(error) if transient is not None else error.retryable):
                raise
            transient_error: ApiError | None = error
        else:
            transient_error = None
            last = observation
            estimate = observation.estimate_s
            if on_status is not None:
                outcome = on_status(observation.status)
                if outcome is not None:
                    await outcome
            if observation.done:
                if tracker is not None:
                    await tracker.update(100.0, observation.detail or "done")
                return observation.status
            if tracker is not None:
                await tracker.update(observation.percent or tracker.percent, observation.detail)
        elapsed = clock() - started
        if elapsed >= policy.max_wait_s:
            if transient_error is not None and last is None:
                raise transient_error
            raise PollTimedOut(what, elapsed, last)  # type: ignore[arg-type]
        if transient_error is None and last is not None:
            resume_in = policy.park_in(elapsed, estimate_s=estimate)
            if resume_in is not None:
                raise WaitParked(what, elapsed, resume_in, last)  # type: ignore[arg-type]
        interval = policy.next_interval(interval, estimate_s=estimate)
        await sleep(min(interval, policy.max_wait_s - elapsed))
