"""The one retry decision for transient failures: which errors, how often, how long to wait.

A connector call is retried only when the raised :class:`~connectors.errors.ApiError` says ``retryable``;
waits grow exponentially, are capped, carry full jitter and honour ``Retry-After``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from connectors.errors import ApiError, HttpStatusError


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures are retried.

    Attributes:
        max_attempts: total attempts including the first one (1 disables retries).
        base_delay: seconds before the first retry, doubled on each further one.
        max_delay: cap of one wait, in seconds.
        jitter: fraction of each wait that is randomised (0 = none, 1 = full jitter).
        max_window_waits: how many windows a request waits out under a per-window limit before failing.
        rate_limited_not_processed: whether HTTP 429 certainly means "not processed" (a rate limiter
            answered before the service did any work), so that even a submission may be sent again.
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 1.0
    max_window_waits: int = 10
    rate_limited_not_processed: bool = True
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def should_retry(self, error: BaseException, attempt: int) -> bool:
        """Whether a failed ``attempt`` (1-based) is followed by another."""
        return attempt < self.max_attempts and isinstance(error, ApiError) and error.retryable

    def delay(self, error: BaseException, attempt: int) -> float:
        """Seconds to wait after the failed ``attempt`` (1-based)."""
        backoff = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        wait: float = backoff * (1 - self.jitter) + backoff * self.jitter * self.rng.random()
        if isinstance(error, HttpStatusError) and error.retry_after is not None:
            wait = max(wait, min(error.retry_after, self.max_delay))
        return wait


NO_RETRY = RetryPolicy(max_attempts=1)
