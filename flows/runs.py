"""The run lifecycle every flow shares: open a history record, close it with the right state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from postflows.settings import Settings
from tasks.run_history import RunRecorder


class RunSummary(dict[str, Any]):
    """What a flow reports at its end; stored with the run."""


@asynccontextmanager
async def recorded_run(
    settings: Settings, *, flow: str, idempotency_key: str | None, parameters: Mapping[str, Any]
) -> AsyncIterator[tuple[RunRecorder, RunSummary]]:
    """Record a run; it ends COMPLETED, FAILED (with the error) or CANCELLED."""
    recorder = RunRecorder.start(
        settings.effective_database_url, flow=flow, idempotency_key=idempotency_key, parameters=parameters
    )
    summary = RunSummary(run_id=recorder.run_id)
    try:
        yield recorder, summary
    except (asyncio.CancelledError, KeyboardInterrupt):
        recorder.finish("CANCELLED", error="cancelled", summary=summary)
        raise
    except BaseException as error:
        recorder.finish("FAILED", error=f"{type(error).__name__}: {error}", summary=summary)
        raise
    recorder.finish("COMPLETED", summary=summary)
