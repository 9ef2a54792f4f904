"""The run history as a flow run records it: a :class:`~history.recorder.RunRecorder` given the process's
secret scrubber (:mod:`core.redaction`) and the Prefect flow run it records.

The recorder itself (runs, the key lease, steps, remote jobs, documents) lives in :mod:`history.recorder`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from history.recorder import RunRecorder


def current_flow_run_id() -> str | None:
    """The id of the Prefect flow run this code runs in, or None outside one."""
    try:
        from prefect.runtime import flow_run

        run_id = flow_run.get_id()
    except Exception:  # noqa: BLE001 - outside a flow run there is simply no id
        return None
    return str(run_id) if run_id else None


async def start_recording(
    database_url: str, *, flow: str, idempotency_key: str | None, parameters: Mapping[str, Any]
) -> RunRecorder:
    """Record a new run of ``flow`` in the history at ``database_url``, tied to the current flow run; its
    texts are scrubbed of the registered secrets."""
    return await RunRecorder.start(
        database_url,
        flow=flow,
        idempotency_key=idempotency_key,
        parameters=parameters,
        flow_run_id=current_flow_run_id(),
    )
