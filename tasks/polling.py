"""The one poller: ``poll_until`` asks a remote job for its status until it is done, failed or out of time.

Every wait (batch job, order status, purchase progress) runs through it with one :class:`PollPolicy`: the
service's own estimate of the time left guides the next look when it gives one, otherwise the interval grows
from ``min_interval_s`` to ``max_interval_s``. A status check that fails transiently is looked at again with
the same back-off until the deadline, never faster.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from connectors.errors import ApiError, PostflowsError
from tasks.progress import Progress

S = TypeVar("S")


@dataclass(frozen=True)
class PollPolicy:
    """How a remote job is polled.

    Attributes:
        max_wait_s: give up (:class:`PollTimedOut`) after this many seconds.
        min_interval_s: the first wait, and the shortest.
        max_interval_s: the longest wait.
        growth: factor by which the wait grows when the service gives no estimate.
    """

    max_wait_s: float = 3600.0
    min_interval_s: float = 1.0
    max_interval_s: float = 60.0
    growth: float = 1.5

    def __post_init__(self) -> None:
        if self.min_interval_s <= 0 or self.max_interval_s < self.min_interval_s:
            raise ValueError("poll intervals need 0 < min_interval_s <= max_interval_s")
        if self.max_wait_s < 0 or self.growth < 1:
            raise ValueError("max_wait_s must not be negative and growth must be at least 1")

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
    sleep: Sleep = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> S:
    """Call ``check`` until it reports ``done``; return that status.

    ``check`` raises a :class:`RemoteJobEnded` for a failure state (the job failed, was cancelled); that
    ends the wait. A retryable :class:`~connectors.errors.ApiError` from ``check`` (the status endpoint is
    down for a while) is looked past with the growing interval until the deadline.

    Args:
        check: one look at the job.
        policy: intervals and the deadline.
        on_status: told every status seen (may be a coroutine function).
        what: the job's name in messages and the progress display.
        progress: show a progress artifact / progress bar.
        sleep: the coroutine used to wait (tests pass a fake).
        clock: monotonic seconds (tests pass a fake).

    Raises:
        PollTimedOut: still not done after ``policy.max_wait_s``.
    """
    started = clock()
    tracker = await Progress.start(what) if progress else None
    interval: float | None = None
    last: Observation[S] | None = None
    while True:
        estimate: float | None = None
        try:
            observation = await check()
        except ApiError as error:
            if not error.retryable:
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
        interval = policy.next_interval(interval, estimate_s=estimate)
        await sleep(min(interval, policy.max_wait_s - elapsed))
