"""What a cell's observation says: the table's outcome, submissions and files-left columns, and the problems
that fail the test.
"""

from __future__ import annotations

from typing import Any

from core.errors import PostflowsError
from tests.reliability.faults import Fault
from tests.reliability.matrix import Observation
from tests.reliability.steps import Step


def submissions(observation: Observation, steps: list[Step]) -> int:
    """Requests of the flow's submitting steps the service accepted."""
    keys = {step.key for step in steps if step.submits}
    return sum(count for key, count in observation.accepted.items() if key in keys)


def cause_named(text: str, fault: Fault) -> str | None:
    """The first of the fault's causes ``text`` names, or None."""
    return next((cause for cause in fault.causes if cause in text), None)


def rows_with_error(summary: dict[str, Any] | None) -> int:
    """Rows a completed fan-out kept with their error (address queries, validations, deliverabilities)."""
    if not summary:
        return 0
    return int(summary.get("failed_queries") or summary.get("failed") or 0)


def outcome(observation: Observation) -> str:
    """The outcome column: completed (with the order's final status, or the rows kept with an error) or failed
    with the error's type and the cause it names."""
    fault = observation.fault
    if observation.error is None:
        failed_rows = rows_with_error(observation.summary)
        status = (observation.summary or {}).get("status")
        if not failed_rows:
            return "completed" + (f", status {status}" if status else "")
        named = cause_named(" ".join(observation.messages), fault) if fault else None
        return f"completed, {failed_rows} row(s) kept with the error" + (f" ({named})" if named else "")
    error = observation.error
    named = cause_named(str(error), fault) if fault else None
    return f"failed: {type(error).__name__}" + (f" ({named})" if named else "")


def unrecorded_files(observation: Observation) -> int:
    """Files the service holds that the history names by no token."""
    return sum(token not in observation.files_recorded for token in observation.files_left)


def files_left_text(observation: Observation) -> str:
    """The files-left column: how many, and how the history records them."""
    left, unknown = len(observation.files_left), unrecorded_files(observation)
    if not left:
        return "0"
    covered = min(unknown, observation.files_uncertain)
    parts = {
        "recorded for clean-up": left - unknown,
        "recorded as uncertain (its token never arrived)": covered,
        "not recorded": unknown - covered,
    }
    present = {text: count for text, count in parts.items() if count}
    if len(present) == 1:
        return f"{left}, {next(iter(present))}"
    return f"{left}: " + ", ".join(f"{count} {text}" for text, count in present.items())


def problems(observation: Observation, steps: list[Step], clean: Observation) -> list[str]:
    """What a cell shows that must not happen; empty when it behaved."""
    found: list[str] = []
    error, fault = observation.error, observation.fault
    if fault is not None and observation.fired < 1:
        found.append("the fault never fired")
    if error is not None and not isinstance(error, PostflowsError):
        found.append(f"untyped error {type(error).__name__}: {error}")
    if error is not None and fault is not None and cause_named(str(error), fault) is None:
        found.append(f"the error does not name the cause ({', '.join(fault.causes)}): {error}")
    kept = error is None and fault is not None and rows_with_error(observation.summary)
    if kept and fault is not None and cause_named(" ".join(observation.messages), fault) is None:
        found.append("rows kept with an error, but no run message names the cause")
    if observation.runs != 1:
        found.append(f"{observation.runs} history runs of the flow instead of 1")
    expected = "COMPLETED" if error is None else "FAILED"
    if observation.run_state != expected:
        found.append(f"the history says {observation.run_state}, the run {expected}")
    if error is not None and observation.run_error != f"{type(error).__name__}: {error}":
        found.append(f"the history's error is {observation.run_error!r}")
    for step in steps:
        if step.submits and observation.accepted.get(step.key, 0) > clean.accepted.get(step.key, 0):
            found.append(
                f"{step.label} accepted {observation.accepted.get(step.key)} times, "
                f"{clean.accepted.get(step.key, 0)} in the clean run"
            )
    unrecorded = unrecorded_files(observation) - observation.files_uncertain
    if unrecorded > 0:
        found.append(f"remote files left without a record in the history: {unrecorded}")
    return found
