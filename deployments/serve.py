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


def serve_all() -> None:  # pragma: no cover - blocks until interrupted
    """Serve every deployment until interrupted; the caller sets up the per-API rate limits first (the
    composition root knows them: ``postflows serve``)."""
    from prefect import serve

    serve(*deployments())
