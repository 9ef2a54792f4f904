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
    """Record a run that holds its idempotency key; it ends COMPLETED, FAILED (with the error) or CANCELLED.

    A second run with the same key waits here (bounded by ``lease_wait_s``) while a live run holds it.
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
    except (asyncio.CancelledError, KeyboardInterrupt):
        await recorder.finish("CANCELLED", error="cancelled", summary=summary)
        raise
    except BaseException as error:
        await recorder.finish("FAILED", error=f"{type(error).__name__}: {error}", summary=summary)
        raise
    await recorder.finish("COMPLETED", summary=summary)
