"""Every deployment of the catalog on work pools of a Prefect server, for workers: ``postflows deploy``.

A deployment goes to the work pool of the API it talks to (``DeploymentSpec.work_pool`` of the catalog)
unless one pool is named for all; a missing pool is made (type ``process``), an existing one is left as it is.
The deployments are :func:`deployments.serve.build`'s (description, tags, schedules, concurrency limit,
triggers; the parameter schema closed after each apply: :func:`deployments.serve.close_parameter_schema`),
run by a worker from the directory this code is in: their one pull step sets the working directory there, as
``prefect deploy`` of ``prefect.yaml`` (no pull steps) does.

The code's definition of a deployment, brought to the server on every run: its flow (entrypoint) and where it
runs from, its work pool, description, tags, concurrency limit, parameter schema, schedules (cron, time zone,
slug, the schedule's parameters) and triggers. What an operator changes in the UI stays as the server has it:
whether each schedule is active, the deployment's parameter defaults, whether the deployment is paused and
the job variables the operator set or changed (each ``env`` variable by itself: :data:`WRITTEN` remembers
what deploy wrote, so a variable whose value is no longer that is the operator's); ``reset`` brings those
back to the code's too (every schedule active, no parameter defaults but the flow's, not paused, the job
variables deploy writes). The job variables (``env``: the settings the runs need, built by
:mod:`postflows.deploy_settings`) are part of the definition, so a change of settings updates the
deployments. Nothing on the server changes when it already is as wanted.

Nothing here imports ``postflows``; Prefect is imported where it is used.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.json_text import json_text
from deployments.catalog import CATALOG, DeploymentSpec
from deployments.operators import job_variables, keep_operators_choices
from deployments.serve import build, close_parameter_schema, parameter_schema_of

POOL_TYPE = "process"
CODE_ROOT = Path(__file__).resolve().parents[1]
"""The directory the flows' entrypoints are relative to (the repository): where workers run them from."""
"""The job variable in which deploy notes a digest of each ``env`` variable it wrote (no value: nothing
secret is in ``env``, but a digest keeps the UI short); the process worker's job template ignores it."""


@dataclass(frozen=True)
class Applied:
    """What became of one work pool or deployment.

    Attributes:
        what: ``work pool`` or ``deployment``.
        name: the pool's name, or the deployment's ``flow/deployment`` name.
        outcome: ``created``, ``updated`` or ``unchanged``.
        detail: where it is (a deployment's pool) or what it is (a pool's type).
        left_alone: what the operator changed that stayed as the server has it.
    """

    what: str
    name: str
    outcome: str
    detail: str = ""
    left_alone: tuple[str, ...] = ()

    def line(self) -> str:
        """One line for the operator."""
        text = f"{self.what} {self.name}: {self.outcome}"
        if self.detail:
            text += f" ({self.detail})"
        for kept in self.left_alone:
            text += f"; left alone: {kept}"
        return text


def pools_by_deployment(pool: str | None = None) -> dict[str, str]:
    """The work pool of every catalog deployment: ``pool`` for all when named, else each one's API's."""
    return {spec.name: pool or spec.work_pool for spec in CATALOG}


def pool_names(pools: dict[str, str]) -> list[str]:
    """The pools of ``pools_by_deployment``, each once, in catalog order."""
    return list(dict.fromkeys(pools.values()))


async def ensure_work_pools(names: list[str]) -> list[Applied]:
    """Create the ``process`` work pools missing on the server; existing ones stay as they are."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound
    from prefect.workers.process import ProcessWorker

    applied = []
    async with get_client() as client:
        for name in names:
            try:
                existing = await client.read_work_pool(name)
            except ObjectNotFound:
                template = ProcessWorker.get_default_base_job_template()
                await client.create_work_pool(
                    WorkPoolCreate(name=name, type=POOL_TYPE, base_job_template=template)
                )
                applied.append(Applied("work pool", name, "created", f"type {POOL_TYPE}"))
                continue
            applied.append(Applied("work pool", name, "unchanged", f"type {existing.type}: left as it is"))
    return applied


def runner_deployment(
    spec: DeploymentSpec, env: dict[str, str] | None = None, *, command: str | None = None
) -> Any:
    """:func:`build`'s deployment of ``spec``, run from :data:`CODE_ROOT` by a worker with ``env`` in its
    run's environment, and started with ``command`` when given (:func:`engine_command`; call it outside an
    event loop: Prefect builds it synchronously there)."""
    from prefect.runner.storage import LocalStorage

    deployment = build(spec)
    deployment.storage = LocalStorage(str(CODE_ROOT))
    deployment.entrypoint = spec.entrypoint
    deployment.job_variables = job_variables(env or {}, command=command)
    return deployment


def engine_command(python: str) -> str:
    """The job variable ``command`` that has a process worker start Prefect's engine with ``python``
    itself, rather than through its workspace supervisor, a process of its own before the engine's."""
    return shlex.join([python, "-m", "prefect.engine"])


async def ensure_deployments(
    pools: dict[str, str],
    *,
    reset: bool = False,
    env: dict[str, str] | None = None,
    command: str | None = None,
) -> list[Applied]:
    """Create or update every catalog deployment on its pool (``pools``: deployment name → pool), its runs
    getting ``env`` (the job variables' ``env``) and started with ``command`` when given."""
    return [
        await ensure_deployment(spec, pools[spec.name], reset=reset, env=env, command=command)
        for spec in CATALOG
    ]


async def ensure_deployment(
    spec: DeploymentSpec,
    pool: str,
    *,
    reset: bool = False,
    env: dict[str, str] | None = None,
    command: str | None = None,
) -> Applied:
    """Create ``spec``'s deployment on ``pool``, or bring it to the code's definition; what the operator
    owns stays as the server has it unless ``reset``."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    deployment = await asyncio.to_thread(runner_deployment, spec, env, command=command)
    async with get_client() as client:
        try:
            current = await client.read_deployment_by_name(spec.full_name)
        except ObjectNotFound:
            current = None
        if current is None:
            await close_parameter_schema(client, await deployment.aapply(work_pool_name=pool), spec)
            return Applied("deployment", spec.full_name, "created", f"pool {pool}")
        left_alone = () if reset else keep_operators_choices(deployment, current)
        deployment.work_pool_name = pool
        same = _view(deployment, parameter_schema_of(spec)) == _current_view(
            current
        ) and await _same_triggers(client, deployment, current.id)
        if same:
            return Applied("deployment", spec.full_name, "unchanged", f"pool {pool}", left_alone)
        await close_parameter_schema(client, await deployment.aapply(work_pool_name=pool), spec)
    return Applied("deployment", spec.full_name, "updated", f"pool {pool}", left_alone)


def _json(value: Any) -> Any:
    """``value`` as JSON reads it back (tuples become lists, keys strings), to compare like with like."""
    return json.loads(json_text(value, sort_keys=True, default=str))


def _schedule_view(cron: Any, slug: Any, parameters: Any, active: Any) -> dict[str, Any]:
    return {
        "cron": cron.cron,
        "timezone": cron.timezone,
        "day_or": cron.day_or,
        "slug": slug,
        "parameters": parameters or {},
        "active": bool(active),
    }


def _view(deployment: Any, parameter_schema: dict[str, Any]) -> Any:
    """What the server would hold of ``deployment`` (a runner deployment) with ``parameter_schema``
    (:func:`deployments.serve.close_parameter_schema`), field by field."""
    return _json(
        {
            "description": deployment.description,
            "tags": list(deployment.tags),
            "concurrency_limit": deployment.concurrency_limit,
            "work_pool_name": deployment.work_pool_name,
            "entrypoint": deployment.entrypoint,
            "pull_steps": [deployment.storage.to_pull_step()],
            "parameter_openapi_schema": parameter_schema,
            "enforce_parameter_schema": deployment.enforce_parameter_schema,
            "parameters": deployment.model_dump(mode="json", include={"parameters"})["parameters"],
            "paused": bool(deployment.paused),
            "job_variables": deployment.job_variables or {},
            "schedules": sorted(
                (
                    _schedule_view(s.schedule, s.slug, s.parameters, s.active)
                    for s in deployment.schedules or []
                ),
                key=lambda schedule: str(schedule["slug"]),
            ),
        }
    )


def _current_view(current: Any) -> Any:
    """What the server holds of a deployment, as :func:`_view` spells it."""
    limit = current.global_concurrency_limit
    return _json(
        {
            "description": current.description,
            "tags": list(current.tags),
            "concurrency_limit": None if limit is None else limit.limit,
            "work_pool_name": current.work_pool_name,
            "entrypoint": current.entrypoint,
            "pull_steps": current.pull_steps,
            "parameter_openapi_schema": current.parameter_openapi_schema,
            "enforce_parameter_schema": current.enforce_parameter_schema,
            "parameters": current.parameters,
            "paused": current.paused,
            "job_variables": current.job_variables or {},
            "schedules": sorted(
                (_schedule_view(s.schedule, s.slug, s.parameters, s.active) for s in current.schedules),
                key=lambda schedule: str(schedule["slug"]),
            ),
        }
    )


async def _same_triggers(client: Any, deployment: Any, deployment_id: Any) -> bool:
    """Whether the automations the server keeps for the deployment's triggers are the code's: those named as
    one of its triggers that act on the deployment (the server does not say which ones it owns)."""
    fields = {
        "name",
        "description",
        "enabled",
        "trigger",
        "actions",
        "actions_on_trigger",
        "actions_on_resolve",
    }
    wanted = []
    for trigger in deployment.triggers:
        trigger.set_deployment_id(deployment_id)
        wanted.append(trigger.as_automation().model_dump(include=fields))
    have = []
    for name in sorted({automation["name"] for automation in wanted}):
        for automation in await client.read_automations_by_name(name):
            found = automation.model_dump(include=fields)
            if any(action.get("deployment_id") == deployment_id for action in found["actions"]):
                have.append(found)
    # Compared as Python values, not JSON: a trigger's expected events are a set, whose JSON order varies.
    return len(have) == len(wanted) and all(found in wanted for found in have)
