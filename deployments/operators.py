"""What an operator owns of a deployment on the server, and keeps when ``deploy`` or ``serve`` brings the
code's definition there again: whether each schedule is active, the parameter defaults, whether the deployment
is paused, and the job variables the operator set or changed (each ``env`` variable by itself: :data:`WRITTEN`
remembers what deploy wrote, so a variable whose value is no longer that is the operator's).
"""

from __future__ import annotations

import hashlib
from typing import Any

WRITTEN = "postflows_written_env"
WRITTEN_VARIABLES = "postflows_written_variables"
"""The note of the job variables other than ``env`` that deploy wrote (``command``), as :data:`WRITTEN`."""
NOTES = frozenset({"env", WRITTEN, WRITTEN_VARIABLES})


def job_variables(env: dict[str, str], *, command: str | None = None) -> dict[str, Any]:
    """The job variables of a deployment whose runs get ``env`` and, when given, are started with
    ``command`` (a process worker's), with the note of what deploy wrote."""
    variables: dict[str, Any] = {}
    if env:
        variables.update(env=dict(env), **{WRITTEN: {name: _digest(text) for name, text in env.items()}})
    if command:
        variables.update(command=command, **{WRITTEN_VARIABLES: {"command": _digest(command)}})
    return variables


def _digest(text: Any) -> str:
    return hashlib.sha256(str(text).encode()).hexdigest()[:12]


def keep_operators_choices(deployment: Any, current: Any) -> tuple[str, ...]:
    """Give ``deployment`` what the operator owns from ``current`` (the server's); what differs from the
    code's definition, one phrase each."""
    kept = []
    active = {schedule.slug: schedule.active for schedule in current.schedules}
    for schedule in deployment.schedules or []:
        if active.get(schedule.slug, schedule.active) != schedule.active:
            schedule.active = active[schedule.slug]
            state = "active" if schedule.active else "paused"
            kept.append(f"schedule {schedule.slug} {state} on the server")
    if current.parameters and current.parameters != deployment.parameters:
        deployment.parameters = dict(current.parameters)
        kept.append(f"parameter defaults set on the server ({', '.join(sorted(current.parameters))})")
    if current.paused and not deployment.paused:
        deployment.paused = True
        kept.append("deployment paused on the server")
    changed = keep_operators_job_variables(deployment, current.job_variables or {})
    if changed:
        kept.append(f"job variables set on the server ({', '.join(changed)})")
    return tuple(kept)


def keep_operators_job_variables(deployment: Any, current: dict[str, Any]) -> list[str]:
    """Give ``deployment`` the job variables the operator set on the server (``current``): each ``env``
    variable whose value (or absence) is not what deploy last wrote (:data:`WRITTEN`), and every other job
    variable but one whose value is what deploy last wrote (:data:`WRITTEN_VARIABLES`); the names kept."""
    wanted = dict(deployment.job_variables or {})
    ours_noted = dict(wanted.get(WRITTEN_VARIABLES) or {})
    written: dict[str, str] = dict(current.get(WRITTEN) or {})
    have: dict[str, Any] = dict(current.get("env") or {})
    env: dict[str, Any] = dict(wanted.get("env") or {})
    changed = []
    for name in sorted(set(have) | set(written)):
        if name in have and written.get(name) == _digest(have[name]):
            continue  # as deploy wrote it: the code's value now
        changed.append(f"env {name}")
        if name in have:
            env[name] = have[name]
        else:
            env.pop(name, None)  # the operator took it away
    written_variables: dict[str, str] = dict(current.get(WRITTEN_VARIABLES) or {})
    for name in sorted((set(current) | set(written_variables)) - NOTES):
        if name not in current:  # deploy wrote it; the operator took it away
            if name in wanted:
                del wanted[name]
                changed.append(name)
        elif written_variables.get(name) != _digest(current[name]) and wanted.get(name) != current[name]:
            wanted[name] = current[name]
            changed.append(name)
    wanted.pop("env", None)
    if env:
        wanted["env"] = env
    ours = (deployment.job_variables or {}).get("env") or {}
    if ours:
        wanted[WRITTEN] = {name: _digest(text) for name, text in ours.items()}
    if ours_noted:
        wanted[WRITTEN_VARIABLES] = ours_noted
    deployment.job_variables = wanted
    return changed
