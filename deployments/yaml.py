"""``prefect.yaml`` generated from the catalog: ``python -m deployments.yaml > prefect.yaml``.

The file is for ``prefect deploy`` with the process work pools of :mod:`deployments.catalog` (one per API, as
``postflows deploy`` makes them; create them first); it has no pull steps, so
``prefect deploy`` records the directory it runs in (the repository) as where workers load the flows from.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml

from deployments.catalog import CATALOG, DeploymentSpec

HEADER = (
    "# Generated from deployments/catalog.py by `python -m deployments.yaml > prefect.yaml`: edit the\n"
    "# catalog, not this file (tests/deployments checks that they agree). `prefect deploy --all` deploys\n"
    "# every flow to the process work pool of its API (address-service, newspaper, commerce); `postflows\n"
    "# deploy` makes the pools and the same deployments, `postflows serve` serves them without a pool.\n"
)
PREFECT_VERSION = "3.8.8"


def deployment_entry(spec: DeploymentSpec) -> dict[str, Any]:
    """One deployment of ``prefect.yaml``."""
    return {
        "name": spec.name,
        "entrypoint": spec.entrypoint,
        "description": spec.description,
        "tags": list(spec.tags),
        "concurrency_limit": spec.concurrency_limit,
        "schedules": [schedule.as_dict() for schedule in spec.schedules],
        "triggers": [dict(trigger) for trigger in spec.triggers],
        "work_pool": {"name": spec.work_pool},
    }


def project() -> dict[str, Any]:
    """The whole ``prefect.yaml`` document."""
    return {
        "name": "postflows",
        "prefect-version": PREFECT_VERSION,
        "deployments": [deployment_entry(spec) for spec in CATALOG],
    }


def render() -> str:
    """``prefect.yaml`` as text: the header comment, then the document."""
    return HEADER + yaml.safe_dump(project(), sort_keys=False, allow_unicode=True, width=110)


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(render())
