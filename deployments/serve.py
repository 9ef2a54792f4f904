"""Serve every flow of the catalog as a deployment of a Prefect server: ``postflows serve``."""

from __future__ import annotations

import functools
from typing import Any

from deployments.catalog import CATALOG, TIMEZONE, DeploymentSpec


def build(spec: DeploymentSpec) -> Any:
    """The runner deployment of ``spec``: its flow with the catalog's description, tags, schedules,
    concurrency limit and triggers; the UI builds the parameter form from the flow's signature, and the
    server refuses a run with a parameter the flow does not take (:func:`closed_schema`)."""
    from prefect.events import DeploymentTriggerTypes
    from prefect.schedules import Cron
    from pydantic import TypeAdapter

    triggers = TypeAdapter(list[DeploymentTriggerTypes]).validate_python(
        [dict(trigger) for trigger in spec.triggers]
    )
    deployment = spec.load_flow().to_deployment(
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
    deployment._parameter_openapi_schema = closed_schema(deployment._parameter_openapi_schema)
    return deployment


def closed_schema(schema: Any) -> Any:
    """``schema`` (Prefect's parameter schema of a flow) refusing parameters the flow does not take: the
    server checks a run's parameters against it when the run is created (``enforce_parameter_schema``), so a
    misspelt parameter is refused at submission, naming it, instead of failing the run. The request parts
    refuse unknown fields already (their models forbid extra fields)."""
    return _closed_schema_type()(**schema.model_dump(), additionalProperties=False)


@functools.cache
def _closed_schema_type() -> Any:
    """Prefect's parameter schema with the ``additionalProperties`` keyword (made once, when first used:
    this module imports Prefect only where a deployment is built)."""
    from prefect.utilities.callables import ParameterSchema

    class ClosedParameterSchema(ParameterSchema):
        additionalProperties: bool = False  # noqa: N815 - the JSON schema keyword

    return ClosedParameterSchema


def deployments() -> list[Any]:
    """One runner deployment per catalog entry, in catalog order."""
    return [build(spec) for spec in CATALOG]


def served_deployments() -> tuple[list[Any], list[str]]:
    """:func:`deployments`, each one already on the server keeping what its operator owns there (whether
    each schedule is active, the parameter defaults, whether it is paused:
    :func:`deployments.deploy.keep_operators_choices`), so that starting ``serve`` again never undoes a
    change made in the UI; and one line for each thing kept."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    from deployments.deploy import keep_operators_choices

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
    limits first (the composition root knows them: ``postflows serve``). Stopping leaves every deployment
    as it is: its schedules are not paused (runs due meanwhile wait until a runner is back)."""
    from prefect import serve

    serve(*served, pause_on_shutdown=False)
