"""Waiting for a submitted job, with the run history told how the wait ended (:func:`recorded_wait`): a
job that failed ends FAILED or CANCELLED, one still running stays WAITING for the same command to pick up,
and a parked wait records when a later run looks again and is returned as :class:`JobParked`, an outcome the
caller's type says it must handle (see ``flows.parking``), never an exception a loop could take for a
failure.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from history.jobs import JobData, JobSnapshot, Parking
from history.models import JobState
from history.recorder import RunRecorder, record_shielded
from tasks.polling import PollTimedOut, RemoteJobEnded, WaitParked

logger = logging.getLogger("postflows.submission")
T = TypeVar("T")


@dataclass(frozen=True)
class JobParked:
    """The wait for a recorded job was parked: the job is recorded WAITING with its parking, and a later run
    with the same key continues it (see ``flows.parking``). ``reason`` says why the wait was parked."""

    job: JobSnapshot
    reason: str

    def __str__(self) -> str:
        return self.reason

    @property
    def parking(self) -> Parking:
        """The parking recorded with the job."""
        parking = self.job.facts(JobData).parked
        if parking is None:  # pragma: no cover - a JobParked is made from the job as its parking was recorded
            raise LookupError(f"job {self.job.remote_id} has no parking recorded")
        return parking

    @property
    def count(self) -> int:
        """How often this job's wait has been parked, this time included."""
        return self.parking.count

    @property
    def resume_at(self) -> datetime:
        return self.parking.resume_at


def waited_before(job: JobSnapshot, *, now: datetime | None = None) -> float:
    """Seconds the job has been waited for by the runs that parked its wait; 0 when it was not parked."""
    parked = job.facts(JobData).parked
    if job.state is not JobState.WAITING or parked is None:
        return 0.0
    return max(0.0, ((now or datetime.now(UTC)) - parked.waiting_since).total_seconds())


async def recorded_wait(
    recorder: RunRecorder, job: JobSnapshot, wait: Callable[[], Awaitable[T | WaitParked]], *, what: str
) -> T | JobParked:
    """``wait()`` for a submitted job and return what it returns, or :class:`JobParked` when the wait was
    parked: its parking recorded with the job. An ending that is neither is recorded by
    :func:`recording_wait`; a wait that ended with its job forgets an earlier parking."""
    async with recording_wait(recorder, job, what=what):
        outcome = await wait()
    if isinstance(outcome, WaitParked):
        return JobParked(await _record_parking(recorder, job, outcome), str(outcome))
    if job.facts(JobData).parked is not None:
        await recorder.update_job(job, data=JobData(parked=None))
    return outcome


@asynccontextmanager
async def recording_wait(recorder: RunRecorder, job: JobSnapshot, *, what: str) -> AsyncIterator[None]:
    """Wait for a submitted job inside this block; a wait that raises leaves the job's row saying so.

    A failure state of the job (:class:`~tasks.polling.RemoteJobEnded`) ends it FAILED or CANCELLED, so the
    next run with the key submits anew. A time-out leaves it WAITING: it may still run, its remote files
    stay, and the same command picks it up. Any other interruption (Ctrl-C, a cancelled flow, a status
    endpoint that stayed down) leaves it WAITING too, recorded even while the run is being cancelled. Each
    forgets an earlier parking, so the next wait starts afresh.
    """
    try:
        yield
    except RemoteJobEnded as ended:
        state = JobState.CANCELLED if ended.cancelled else JobState.FAILED
        await record_shielded(
            recorder.update_job(
                job, status=state, finished=True, detail=str(ended)[:500], data=_unparked(job)
            )
        )
        raise
    except PollTimedOut as timed_out:
        await recorder.update_job(
            job, status=JobState.WAITING, detail=str(timed_out)[:500], data=_unparked(job)
        )
        logger.warning("%s is still running; the same command picks it up later", what)
        raise
    except BaseException as error:
        detail = f"interrupted while waiting: {type(error).__name__}"
        await record_shielded(
            recorder.update_job(job, status=JobState.WAITING, detail=detail, data=_unparked(job))
        )
        raise


async def _record_parking(recorder: RunRecorder, job: JobSnapshot, parked: WaitParked) -> JobSnapshot:
    now = datetime.now(UTC)
    earlier = job.facts(JobData).parked
    parking = Parking(
        waiting_since=earlier.waiting_since
        if earlier is not None
        else now - timedelta(seconds=parked.waited_s),
        count=(earlier.count if earlier is not None else 0) + 1,
        resume_at=now + timedelta(seconds=parked.resume_in_s),
    )
    return await record_shielded(
        recorder.update_job(
            job, status=JobState.WAITING, detail=str(parked)[:500], data=JobData(parked=parking)
        )
    )


def _unparked(job: JobSnapshot) -> JobData | None:
    return JobData(parked=None) if job.facts(JobData).parked is not None else None
