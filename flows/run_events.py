"""Events out: every recorded run ends with a Prefect event, so other systems and automations learn that the
work is done without polling.

* ``postflows.<flow>.finished``: the run completed; the payload holds its input files (``inputs``, by
  parameter name, e.g. ``input_path``) and its summary (counts, output files, remote ids, what was resumed or
  reused);
* ``postflows.<flow>.failed``: the run failed, at whatever step (a run that failed before it opened its own
  record, e.g. on a missing input file, sends it from the flow's ``on_failure`` hook,
  :mod:`flows.early_failures`); the payload holds the one-line reason and the summary so far.

Every payload says ``sandbox`` (true when an API the run calls answers from the embedded sandbox: nothing it
wrote may be imported), ``history`` (the id of the history the run is recorded in) and ``history_run_id``.
The event's resource is the run as the history knows it (``postflows.run.<history id>.<history run id>``:
runs of two histories never share it); its related
resources are the flow run (``prefect.flow-run.<id>``, inside a flow run), each input file
(``postflows.file.<absolute path>``, role ``input-file``) and the idempotency key (``postflows.key.<key>``,
role ``idempotency-key``), so an automation can match on any of them. A payload larger than
:data:`MAX_PAYLOAD_BYTES` keeps its short values and says how long the others were. Secrets are scrubbed
from the payload as from every artifact. An event that cannot be sent is logged and never fails the run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.json_text import json_text
from core.redaction import redact

FINISHED = "finished"
FAILED = "failed"
EVENT_PREFIX = "postflows"
MAX_PAYLOAD_BYTES = 64 * 1024
"""The most a payload may take as JSON; Prefect refuses events over its own limit (1.5 MB by default)."""
_SHORT_VALUE_BYTES = 1024

logger = logging.getLogger("postflows.events")


def event_name(flow: str, outcome: str) -> str:
    """``postflows.<flow>.<outcome>``."""
    return f"{EVENT_PREFIX}.{flow}.{outcome}"


@dataclass(frozen=True)
class EndedRun:
    """A run that ended, as its events name it: its flow, its record (``run_id`` in the history
    ``history_id``), the key its work was held under, and whether its answers came from the sandbox."""

    flow: str
    run_id: int | str
    history_id: str
    idempotency_key: str | None
    sandbox: bool


def run_ended(
    run: EndedRun,
    outcome: str,
    *,
    summary: Mapping[str, Any],
    parameters: Mapping[str, Any],
    error: str | None = None,
) -> None:
    """Emit ``postflows.<flow>.<outcome>`` for a ``run`` that ended (``outcome``: :data:`FINISHED` or
    :data:`FAILED`)."""
    try:
        from prefect.events import emit_event

        payload: dict[str, Any] = {
            "flow": run.flow,
            "history": run.history_id,
            "history_run_id": run.run_id,
            "sandbox": run.sandbox,
            "inputs": input_files(parameters),
            "summary": bounded(summary),
        }
        if error is not None:
            payload["error"] = redact(error)
        emit_event(
            event_name(run.flow, outcome),
            resource={
                "prefect.resource.id": run_resource_id(run.history_id, run.run_id),
                "prefect.resource.name": f"{run.flow} run {run.run_id}",
                "postflows.flow": run.flow,
            },
            related=related_resources(parameters, run.idempotency_key),
            payload=payload,
        )
    except Exception:  # an event is news, not the work: the run keeps its outcome
        logger.warning(
            "could not send the %s event of run %s", event_name(run.flow, outcome), run.run_id, exc_info=True
        )


def run_resource_id(history_id: str, run_id: int | str) -> str:
    """``postflows.run.<history id>.<history run id>``: the run's name outside, unique across histories."""
    return f"{EVENT_PREFIX}.run.{history_id}.{run_id}"


def related_resources(parameters: Mapping[str, Any], idempotency_key: str | None) -> list[dict[str, str]]:
    """The flow run, the input files (parameters named ``*_path``) and the key, as related resources."""
    related = []
    flow_run_id = _flow_run_id()
    if flow_run_id is not None:
        related.append(
            {"prefect.resource.id": f"prefect.flow-run.{flow_run_id}", "prefect.resource.role": "flow-run"}
        )
    for path in map(Path, input_files(parameters).values()):
        related.append(
            {
                "prefect.resource.id": f"{EVENT_PREFIX}.file.{path}",
                "prefect.resource.role": "input-file",
                "prefect.resource.name": path.name,
            }
        )
    if idempotency_key:
        related.append(
            {
                "prefect.resource.id": f"{EVENT_PREFIX}.key.{idempotency_key}",
                "prefect.resource.role": "idempotency-key",
            }
        )
    return related


def input_files(parameters: Mapping[str, Any]) -> dict[str, str]:
    """The run's input files (its parameters named ``*_path``) as absolute paths, by parameter name."""
    return {
        name: str(Path(str(value)).absolute())
        for name, value in parameters.items()
        if name.endswith("_path") and value not in (None, "")
    }


def bounded(summary: Mapping[str, Any]) -> dict[str, Any]:
    """``summary`` as JSON values, secrets scrubbed; over :data:`MAX_PAYLOAD_BYTES`, the values longer than
    1 KiB are replaced by a note of their size."""
    safe: dict[str, Any] = json.loads(redact(json_text(dict(summary), ascii_only=True, default=str)))
    if len(json_text(safe, ascii_only=True)) <= MAX_PAYLOAD_BYTES:
        return safe
    kept: dict[str, Any] = {}
    for key, value in safe.items():
        size = len(json_text(value, ascii_only=True))
        kept[key] = (
            value if size <= _SHORT_VALUE_BYTES else f"… {size} bytes left out (see the run's summary)"
        )
    kept["truncated"] = True
    return kept


def _flow_run_id() -> str | None:
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    run = context.flow_run if context is not None else None
    return str(run.id) if run is not None else None
