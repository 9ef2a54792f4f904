"""Serve every flow of the catalog as a deployment of a Prefect server: ``postflows serve``."""

from __future__ import annotations

from typing import Any

from deployments.catalog import CATALOG, TIMEZONE, DeploymentSpec


def build(spec: DeploymentSpec) -> Any:
    """The runner deployment of ``spec``: its flow with the catalog's description, tags, schedules,
    concurrency limit and triggers; the UI builds the parameter form from the flow's signature."""
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


def deployments() -> list[Any]:
    """One runner deployment per catalog entry, in catalog order."""
    return [build(spec) for spec in CATALOG]


def serve_all() -> None:  # pragma: no cover - blocks until interrupted
    """Serve every deployment until interrupted; the caller sets up the per-API rate limits first (the
    composition root knows them: ``postflows serve``)."""
    from prefect import serve

    serve(*deployments())
