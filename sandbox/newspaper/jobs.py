"""Time in the newspaper sandbox: Zurich dates and date-times, and jobs (orders, purchases) that take a while.

The service is Swiss, so "today" and every date-time are taken in Europe/Zurich, date-times with offset.
A job's duration is ``config.job_seconds`` unless a ``job_seconds`` fault names another; a ``job_outcome``
fault names the status it ends in.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

from fastapi import Request

from sandbox.config import SandboxConfig
from sandbox.faults import active_fault

ZURICH = ZoneInfo("Europe/Zurich")


def local_datetime(epoch: float) -> datetime:
    """Epoch seconds as a Zurich date-time."""
    return datetime.fromtimestamp(epoch, ZURICH)


def iso_datetime(epoch: float) -> str:
    """ISO 8601 with offset, to the second (e.g. ``2025-03-04T10:15:00+01:00``)."""
    return local_datetime(epoch).isoformat(timespec="seconds")


def today(config: SandboxConfig) -> date:
    """The current date in Zurich by the sandbox clock."""
    return local_datetime(config.clock()).date()


@dataclass(frozen=True)
class Job:
    """When a job started, how long it runs and the outcome forced by a fault (``None``: normal end)."""

    started_at: float
    duration: float
    forced_outcome: str | None = None

    def fraction(self, now: float) -> float:
        """How far the job has come, 0.0 to 1.0."""
        if self.duration <= 0:
            return 1.0
        return min(1.0, max(0.0, (now - self.started_at) / self.duration))

    def at(self, fraction: float) -> float:
        """The epoch second at which the job reaches ``fraction``."""
        return self.started_at + self.duration * fraction


def start_job(request: Request, config: SandboxConfig) -> Job:
    """A job starting now, with the duration/outcome faults of this request applied."""
    rule = active_fault(request)
    duration = config.job_seconds
    outcome: str | None = None
    if rule is not None and rule.kind == "job_seconds":
        duration = float(rule.value or 0)
    elif rule is not None and rule.kind == "job_outcome":
        outcome = str(rule.value).upper()
    return Job(config.clock(), duration, outcome)
