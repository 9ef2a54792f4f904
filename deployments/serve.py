"""Serve every flow of the catalog as a deployment of a Prefect server: ``postflows serve``."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from deployments.catalog import CATALOG, TIMEZONE, DeploymentSpec, spec_named
from deployments.operators import keep_operators_choices


def build(spec: DeploymentSpec) -> Any:
    """The runner deployment of ``spec``: its flow with the catalog's description, tags, schedules,
    concurrency limit and triggers; the UI builds the parameter form from the flow's signature. Applying it
    writes Prefect's parameter schema of the flow; :func:`close_parameter_schema` follows every apply."""
    from prefect.events import DeploymentTriggerTypes
    from prefect.schedules import Cron
    from pydantic import TypeAdapter

    triggers = TypeAdapter(list[DeploymentTriggerTypes]).validate_python(
        [dict(trigger) for trigger in spec.triggers]
    )
    return spec.load_flow().to_deployment(
        name=spec.name,
        description=spec.description,
        tags=list(spec.tags),
        schedules=[
            Cron(schedule.cron, timezone=TIMEZONE, slug=schedule.slug, parameters=dict(schedule.parameters))
            for schedule in spec.schedules
        ],
        concurrency_limit=spec.concurrency_limit,
        triggers=triggers,
    )


def parameter_schema_of(spec: DeploymentSpec) -> dict[str, Any]:
    """The parameter schema ``spec``'s deployment has on the server: Prefect's schema of the flow's
    signature (what the UI turns into the form) refusing parameters the flow does not take. The server
    checks a run's parameters against it when the run is created (``enforce_parameter_schema``), so a
    misspelt parameter is refused at submission, naming it, instead of failing the run. The request parts
    refuse unknown fields already (their models forbid extra fields)."""
    from prefect.utilities.callables import parameter_schema

    return {**parameter_schema(spec.load_flow()).model_dump(), "additionalProperties": False}


async def close_parameter_schema(client: Any, deployment_id: Any, spec: DeploymentSpec) -> None:
    """Give the deployment ``deployment_id`` on the server (``client``'s) :func:`parameter_schema_of`
    ``spec``: applying a runner deployment writes the flow's open schema (Prefect's runner deployment takes
    no schema of ours), so this follows every apply."""
    from prefect.client.schemas.actions import DeploymentUpdate

    await client.update_deployment(
        deployment_id, DeploymentUpdate(parameter_openapi_schema=parameter_schema_of(spec))
    )


def deployments() -> list[Any]:
    """One runner deployment per catalog entry, in catalog order."""
    return [build(spec) for spec in CATALOG]


def served_deployments() -> tuple[list[Any], list[str]]:
    """:func:`deployments`, each one already on the server keeping what its operator owns there (whether
    each schedule is active, the parameter defaults, whether it is paused:
    :func:`deployments.operators.keep_operators_choices`), so that starting ``serve`` again never undoes a
    change made in the UI; and one line for each thing kept."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    built = deployments()
    notes = []
    with get_client(sync_client=True) as client:
        for spec, deployment in zip(CATALOG, built, strict=True):
            try:
                current = client.read_deployment_by_name(spec.full_name)
            except ObjectNotFound:
                continue
            notes += [
                f"deployment {spec.full_name}: left alone: {kept}"
                for kept in keep_operators_choices(deployment, current)
            ]
    return built, notes


def serve_all(served: list[Any]) -> None:
    """Serve ``served`` (:func:`served_deployments`) until interrupted; the caller sets up the per-API rate
    limits first (the composition root knows them: ``postflows serve``). Each deployment is applied and its
    parameter schema closed (:func:`close_parameter_schema`) before the runner starts. Stopping leaves every
    deployment as it is: its schedules are not paused (runs due meanwhile wait until a runner is back)."""
    from prefect.exceptions import TerminationSignal

    with contextlib.suppress(KeyboardInterrupt, TerminationSignal):
        asyncio.run(_serve(served))


async def _serve(served: list[Any]) -> None:
    from prefect.client.orchestration import get_client
    from prefect.runner import Runner

    runner = Runner(pause_on_shutdown=False)
    async with get_client() as client:
        for deployment in served:
            deployment_id = await runner.aadd_deployment(deployment)
            await close_parameter_schema(client, deployment_id, spec_named(deployment.name))
    await runner.start()
