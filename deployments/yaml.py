"""``prefect.yaml`` generated from the catalog: ``python -m deployments.yaml > prefect.yaml``.

The file is for ``prefect deploy --all`` after ``postflows setup`` (which makes the process work pools of
:mod:`deployments.catalog`, one per API, the rate limits and the automations); it has no pull steps, so
``prefect deploy`` records the directory it runs in (the repository) as where workers load the flows from.

It leaves out what would undo an operator's choice in the UI when deployed again: a schedule's ``active``
(Prefect 3.8.8 patches the server's schedules by slug and leaves out what the file leaves out) and the
deployment's ``parameters`` (the flows' own defaults apply). ``prefect deploy`` still sends the deployment's
parameter defaults (``{}`` when the file has none) and ``paused`` (false) on every run, whatever the file
says: docs/deployments.md names that and what else the file cannot express.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml

from deployments.catalog import CATALOG, DeploymentSpec

HEADER = (
    "# Generated from deployments/catalog.py by `python -m deployments.yaml > prefect.yaml`: edit the\n"
    "# catalog, not this file (tests/deployments checks that they agree). Run `postflows setup` first (the\n"
    "# work pools address-service, newspaper, commerce, the rate limits and the automations), then\n"
    "# `prefect deploy --all` deploys every flow to the pool of its API. `postflows deploy` does both and\n"
    "# keeps parameter defaults set and deployments paused in the UI, which `prefect deploy` resets.\n"
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
