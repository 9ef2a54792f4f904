"""Per-window limits ("so many queries per minute"): one gate that every concurrent call of a client waits at.

When the service says a window's allowance is used up, the gate closes until the next window begins; every
request then waits there instead of burning its retries in seconds, and a run's workers share one gate. A
gate may serve clients on several threads' event loops: it holds no loop-bound state.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]

WINDOW_MARGIN_S = 0.05


class WindowGate:
    """Closed until a point in time; opened by the clock alone.

    Args:
        clock: wall-clock seconds (windows are aligned to it, as a service's minutes are).
        sleep: the coroutine used to wait.
    """

    def __init__(self, *, clock: Clock = time.time, sleep: Sleep = asyncio.sleep) -> None:
        self._clock = clock
        self._sleep = sleep
        self._open_at = 0.0
        self.closures = 0
        self._guard = threading.Lock()

    @property
    def open_at(self) -> float:
        return self._open_at

    def close_for_window(self, window_s: float) -> float:
        """Close the gate until the next window of ``window_s`` begins; returns the seconds until then."""
        now = self._clock()
        boundary = (math.floor(now / window_s) + 1) * window_s + WINDOW_MARGIN_S
        with self._guard:  # threads closing it at once must not move the opening back
            if boundary > self._open_at:
                self._open_at = boundary
                self.closures += 1
            return self._open_at - now

    async def wait(self) -> float:
        """Wait until the gate opens (one sleep for the time left); returns the seconds waited."""
        remaining = self._open_at - self._clock()
        if remaining <= 0:
            return 0.0
        await self._sleep(remaining)
        return remaining


PACE_MARGIN = 0.02
"""How far below the service's limit a :class:`Pacer` keeps: the slack for requests that reach the service
later than they were let go (a busy event loop, the network), so that none of them is answered as over it."""


class Pacer:
    """Lets requests go evenly spaced, so that no minute sees more than the service allows, for a service
    that counts its limit over any 60 seconds. A request's slot is taken before it waits, so concurrent
    callers queue up in turn; like :class:`WindowGate` it serves clients on several threads' event loops.

    Requests that fell behind their slots (a busy event loop) may catch up by up to half the margin's
    requests at once, never more: any 60 seconds then see at most ``per_minute × (1 - margin / 2)``.

    Args:
        per_minute: the service's limit; requests go at most ``per_minute × (1 - margin)`` a minute.
        margin: the share of the limit kept free (:data:`PACE_MARGIN`).
        clock: monotonic seconds.
        sleep: the coroutine used to wait.
    """

    def __init__(
        self,
        per_minute: int,
        *,
        margin: float = PACE_MARGIN,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if per_minute <= 0 or not 0 <= margin < 1:
            raise ValueError("a pacer needs a positive limit per minute and a margin in [0, 1)")
        self.per_minute = per_minute
        self.interval_s = 60.0 / (per_minute * (1.0 - margin))
        self.catch_up_s = math.floor(per_minute * margin / 2) * self.interval_s
        self._clock = clock
        self._sleep = sleep
        self._next = -math.inf
        self._guard = threading.Lock()

    def take(self) -> float:
        """Take the next free slot; returns the seconds until it comes (0 when it is now)."""
        with self._guard:
            now = self._clock()
            slot = max(now - self.catch_up_s, self._next)
            self._next = slot + self.interval_s
        return max(0.0, slot - now)

    async def wait(self) -> float:
        """Wait for the next free slot; returns the seconds waited."""
        delay = self.take()
        if delay > 0:
            await self._sleep(delay)
        return delay
