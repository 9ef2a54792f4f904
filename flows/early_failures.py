"""Runs that fail before they open their history record (a missing input file, a parameter the flow does not
take, an order with nothing to submit) are recorded too: every flow has :func:`record_early_failure` as its
``on_failure`` hook, which records the run FAILED with the reason Prefect gives it, unless the run recorded
itself. ``postflows history`` then lists every run that reached a flow, however early it failed, and the hook
sends the run's ``postflows.<flow>.failed`` event (:mod:`flows.run_events`); a run that recorded itself has
sent its own, so none is sent twice.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from flows import run_events
from flows.runs import begin_run
from history.recorder import record_unrecorded_failure

if TYPE_CHECKING:
    from prefect import Flow
    from prefect.client.schemas.objects import FlowRun, State
    from prefect.flows import FlowStateHook

logger = logging.getLogger("postflows.history")


async def record_early_failure(flow: Flow[..., Any], flow_run: FlowRun, state: State) -> None:
    """Prefect's ``on_failure`` hook (``flow``, ``flow_run``, its final ``state``); never raises, since the
    run has failed already and its reason is in Prefect's log."""
    parameters = flow_run.parameters or {}
    error = state.message or state.name or "failed"
    try:
        run = begin_run(flow.name)
        recorded = await record_unrecorded_failure(
            run.settings.effective_database_url,
            flow=flow.name,
            flow_run_id=str(flow_run.id),
            parameters=parameters,
            error=error,
        )
    except Exception:  # the history may be the very thing that failed
        logger.warning("could not record the failed run %s in the history", flow_run.id, exc_info=True)
        return
    if recorded is None:
        return  # the run recorded itself, and sent its event as it ended
    ended = run_events.EndedRun(flow.name, recorded.run_id, recorded.history_id, None, run.sandbox)
    run_events.run_ended(ended, run_events.FAILED, summary={}, parameters=parameters, error=error)


ON_FAILURE: list[FlowStateHook[..., Any]] = [record_early_failure]
"""The ``on_failure`` hooks of every postflows flow."""
