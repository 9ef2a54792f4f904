"""The run lifecycle every flow shares: open a history record, hold the work's key, close the record with
the right state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from postflows.settings import Settings
from tasks.retrying import StepRetries, use_step_retries
from tasks.run_history import RunRecorder
from tasks.submission import JobParked


class RunSummary(dict[str, Any]):
    """What a flow reports at its end; stored with the run."""


@asynccontextmanager
async def recorded_run(
    settings: Settings,
    *,
    flow: str,
    idempotency_key: str | None,
    parameters: Mapping[str, Any],
    notify: Callable[[str], None] | None = None,
) -> AsyncIterator[tuple[RunRecorder, RunSummary]]:
    """Record a run that holds its idempotency key; it ends COMPLETED, FAILED (with the error), CANCELLED,
    or PARKED.

    A second run with the same key waits here (bounded by ``lease_wait_s``) while a live run holds it. A
    wait parked inside the block (:class:`~tasks.submission.JobParked`, deployment runs only) schedules the
    follow-up run (:mod:`flows.parking`), records the run PARKED and ends the block without an error: the
    flow then returns its summary, which says when the follow-up comes.
    """
    use_step_retries(
        StepRetries(settings.task_retries, settings.task_retry_delay_s, settings.task_retry_jitter)
    )
    recorder = await RunRecorder.start(
        settings.effective_database_url, flow=flow, idempotency_key=idempotency_key, parameters=parameters
    )
    summary = RunSummary(run_id=recorder.run_id)
    try:
        await recorder.hold_key(ttl_s=settings.lease_ttl_s, wait_s=settings.lease_wait_s, notify=notify)
        yield recorder, summary
    except JobParked as parked:
        await _park(recorder, summary, parked)
        return
    except (asyncio.CancelledError, KeyboardInterrupt):
        await recorder.finish("CANCELLED", error="cancelled", summary=summary)
        raise
    except BaseException as error:
        await recorder.finish("FAILED", error=f"{type(error).__name__}: {error}", summary=summary)
        raise
    await recorder.finish("COMPLETED", summary=summary)


async def _park(recorder: RunRecorder, summary: RunSummary, parked: JobParked) -> None:
    """Schedule the follow-up of a parked wait and record the run PARKED; a follow-up that cannot be
    scheduled fails the run (the job stays WAITING: the same command picks it up)."""
    from prefect import get_run_logger

    from flows.parking import schedule_follow_up

    try:
        follow_up, at = await schedule_follow_up(parked)
    except BaseException as error:
        await recorder.finish("FAILED", error=f"{type(error).__name__}: {error}", summary=summary)
        raise
    job = parked.job
    summary.update(
        parked=f"follow-up at {at.isoformat(timespec='seconds')}",
        parked_job=job.remote_id,
        follow_up_run=str(follow_up),
    )
    await recorder.finish("PARKED", summary=summary)
    get_run_logger().info(
        "%s; follow-up run %s scheduled for %s", parked, follow_up, at.isoformat(timespec="seconds")
    )
