"""Counting the requests a fan-out sends, by outcome: a request-log hook that every per-row flow (address
queries, commerce validation and deliverability) shares, and that chunk tasks add up."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from connectors.http import RequestRecord


class SendCounter:
    """A request-log hook that counts every request sent, by outcome; a request may be sent more than once.

    Attributes:
        outcomes: requests sent, by outcome.
        resumed: answers taken from an interrupted run's checkpoint instead of sent again.
        held: rows not sent again because an earlier request's outcome is unknown (it may have been billed).
        resubmitted: such rows sent again, as ``--resubmit`` asked.
    """

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.resumed = 0
        self.held = 0
        self.resubmitted = 0

    def __call__(self, record: RequestRecord) -> None:
        self.outcomes[record.outcome] += 1

    def add(self, outcomes: Mapping[str, int]) -> None:
        """Count the sends another counter saw (a chunk task's, say)."""
        self.outcomes.update(outcomes)

    @property
    def total(self) -> int:
        return sum(self.outcomes.values())

    def describe(self) -> str:
        parts = ", ".join(f"{outcome} {count}" for outcome, count in sorted(self.outcomes.items()))
        resumed = f"; {self.resumed} answers from an interrupted run" if self.resumed else ""
        if self.held:
            resumed += f"; {self.held} uncertain rows not sent again (--resubmit sends them)"
        if self.resubmitted:
            resumed += f"; {self.resubmitted} uncertain rows sent again (--resubmit)"
        return f"{self.total} queries sent ({parts or 'none'}){resumed}"
