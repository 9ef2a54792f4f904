"""The automations a Prefect server runs for postflows, declared once (as :mod:`deployments.catalog` declares
the deployments) in the shape Prefect's automations API takes; ``postflows setup`` creates them.

* :data:`CRASH_SILENT_RUNS`: a run of a postflows flow whose heartbeats stop for :data:`HEARTBEAT_SILENCE_S`
  (``POSTFLOWS_CRASH_SILENCE_S``) is marked Crashed: Prefect's recommended detection of runs whose process
  died (a worker killed, a machine gone). Runs send heartbeats when ``PREFECT_RUNNER_HEARTBEAT_FREQUENCY``
  is set (:data:`HEARTBEAT_FREQUENCY_S`; ``postflows serve`` sets it, a worker's environment must).
* :data:`RETRY_CRASHED_RUNS`: a crashed run of a postflows deployment on its first attempt is scheduled again,
  once: the same flow run with the same parameters, which takes its work up from the run history (nothing
  is submitted twice).
* :data:`NOTIFY_FAILURES`: a Failed or Crashed run of a postflows flow is announced through the notification
  block ``POSTFLOWS_NOTIFY_BLOCK`` names (any Prefect notification block: e-mail, Slack, MS Teams, a custom
  webhook) with the flow, the one-line reason and the run's address.

Nothing here imports Prefect.
"""

from __future__ import annotations

from typing import Any

from deployments.catalog import CATALOG

HEARTBEAT_FREQUENCY_S = 30
"""Seconds between a run's heartbeats (Prefect sends none more often than every 30 s)."""
HEARTBEAT_SILENCE_S = 90
"""Seconds without a heartbeat after which a running run counts as crashed, by default
(``POSTFLOWS_CRASH_SILENCE_S``)."""
CRASH_SILENT_RUNS = "postflows-crash-silent-runs"
RETRY_CRASHED_RUNS = "postflows-retry-crashed-runs"
NOTIFY_FAILURES = "postflows-notify-failures"
FLOW_RUN_ENDS = ("Completed", "Failed", "Cancelled", "Crashed")
NOTIFY_SUBJECT = "postflows: {{ flow.name }} run {{ flow_run.name }} {{ flow_run.state.name }}"
NOTIFY_BODY = (
    "{{ flow.name }} run {{ flow_run.name }} is {{ flow_run.state.name }}: "
    "{{ flow_run.state.message or 'no reason given' }}\n{{ flow_run|ui_url }}"
)


def flow_names() -> list[str]:
    """The flows of every postflows deployment (a deployment is named as its flow)."""
    return [spec.name for spec in CATALOG]


def _of_postflows() -> dict[str, Any]:
    return {"prefect.resource.role": "flow", "prefect.resource.name": flow_names()}


def automations(notify_block_id: str | None, *, silence_s: int = HEARTBEAT_SILENCE_S) -> list[dict[str, Any]]:
    """Every automation as Prefect's API takes it; the notification only when a block is named
    (``notify_block_id``: its block document id); a run silent for ``silence_s`` counts as crashed."""
    found = [crash_silent_runs(silence_s), retry_crashed_runs()]
    if notify_block_id is not None:
        found.append(notify_failures(notify_block_id))
    return found


def crash_silent_runs(silence_s: int) -> dict[str, Any]:
    """:data:`CRASH_SILENT_RUNS`: a run of a postflows flow without a heartbeat for ``silence_s`` is marked
    Crashed."""
    return {
        "name": CRASH_SILENT_RUNS,
        "description": f"A postflows run without a heartbeat for {silence_s} s is marked Crashed.",
        "trigger": {
            "type": "event",
            "posture": "Proactive",
            "match": {"prefect.resource.id": "prefect.flow-run.*"},
            "match_related": _of_postflows(),
            "after": ["prefect.flow-run.heartbeat"],
            "expect": ["prefect.flow-run.heartbeat", *(f"prefect.flow-run.{end}" for end in FLOW_RUN_ENDS)],
            "for_each": ["prefect.resource.id"],
            "threshold": 1,
            "within": silence_s,
        },
        "actions": [
            {
                "type": "change-flow-run-state",
                "state": "CRASHED",
                "message": f"no heartbeat for {silence_s} s: the process running it is gone",
            }
        ],
    }


def retry_crashed_runs() -> dict[str, Any]:
    """:data:`RETRY_CRASHED_RUNS`: a crashed run of a postflows deployment on its first attempt is scheduled
    again, once."""
    return {
        "name": RETRY_CRASHED_RUNS,
        "description": "A crashed postflows run is run again once; it resumes from the run history.",
        "trigger": {
            "type": "event",
            "posture": "Reactive",
            "match": {"prefect.resource.id": "prefect.flow-run.*", "prefect.run-count": "1"},
            # A run of a deployment: a worker takes it up again (a command's run has nobody to).
            "match_related": [_of_postflows(), {"prefect.resource.role": "deployment"}],
            "expect": ["prefect.flow-run.Crashed"],
            "for_each": ["prefect.resource.id"],
            "threshold": 1,
            "within": 0,
        },
        "actions": [
            {
                "type": "change-flow-run-state",
                "state": "SCHEDULED",
                "name": "AwaitingRetry",
                "message": "crashed on its first attempt: run again once, resuming from the run history",
            }
        ],
    }


def notify_failures(notify_block_id: str) -> dict[str, Any]:
    """:data:`NOTIFY_FAILURES`: a Failed or Crashed run of a postflows flow is announced through the
    notification block whose document id is ``notify_block_id``."""
    return {
        "name": NOTIFY_FAILURES,
        "description": "Failed and crashed postflows runs are announced.",
        "trigger": {
            "type": "event",
            "posture": "Reactive",
            "match": {"prefect.resource.id": "prefect.flow-run.*"},
            "match_related": _of_postflows(),
            "expect": ["prefect.flow-run.Failed", "prefect.flow-run.Crashed"],
            "for_each": ["prefect.resource.id"],
            "threshold": 1,
            "within": 0,
        },
        "actions": [
            {
                "type": "send-notification",
                "block_document_id": notify_block_id,
                "subject": NOTIFY_SUBJECT,
                "body": NOTIFY_BODY,
            }
        ],
    }
