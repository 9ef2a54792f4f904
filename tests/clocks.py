"""A sandbox clock the test moves by hand."""

from __future__ import annotations

import time


class Clock:
    """Epoch seconds from now on, moved only by the test (``now += …`` or :meth:`advance`)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
