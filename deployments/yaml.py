"""``prefect.yaml`` generated from the catalog: ``python -m deployments.yaml > prefect.yaml``.

The file is for ``prefect deploy --all`` after ``postflows setup`` (which makes the process work pools of
:mod:`deployments.catalog`, one per API, the rate limits and the automations); it has no pull steps, so
``prefect deploy`` records the directory it runs in (the repository) as where workers load the flows from.

It keeps what an operator chose in the UI when deployed again: it has no schedule ``active`` (Prefect 3.8.8
patches the server's schedules by slug and leaves out what the file leaves out), and each deployment's
``parameters`` are the server's defaults, read by the build step
:func:`deployments.prefect_steps.server_choices` (every parameter of the flow as ``{{ on-server.<name> }}``;
one without a default on the server is not sent, so the flow's own default applies). ``prefect deploy``
still sends ``paused: false`` when the file says nothing, so it resumes a deployment paused in the UI:
docs/deployments.md names that and what else the file cannot express. The flows' parameter names are read
from their source (:func:`parameter_names`), without importing them.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

import yaml

from deployments.catalog import CATALOG, DeploymentSpec
from deployments.deploy import CODE_ROOT
from deployments.prefect_steps import STEP_ID, placeholder, server_choices

HEADER = (
    "# Generated from deployments/catalog.py by `python -m deployments.yaml > prefect.yaml`: edit the\n"
    "# catalog, not this file (tests/deployments checks that they agree). Run `postflows setup` first (the\n"
    "# work pools address-service, newspaper, commerce, the rate limits and the automations), then\n"
    "# `prefect deploy --all` deploys every flow to the pool of its API, keeping the schedules paused and\n"
    "# the parameter defaults set in the UI (each deployment's build step reads them from the server).\n"
    "# It resumes a deployment paused in the UI: pause its schedules or its work pool instead, or use\n"
    "# `postflows deploy`, which does both steps and keeps that too.\n"
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
        "build": [
            {
                f"{server_choices.__module__}.{server_choices.__name__}": {
                    "id": STEP_ID,
                    "deployment": spec.full_name,
                }
            }
        ],
        "parameters": {name: placeholder(name) for name in parameter_names(spec)},
    }


def parameter_names(spec: DeploymentSpec) -> list[str]:
    """The names of the parameters of ``spec``'s flow, in order, read from the source of its entrypoint
    (importing the flows would load pandas and the rest: this module runs as a script)."""
    path, _, function = spec.entrypoint.partition(":")
    tree = ast.parse((CODE_ROOT / path).read_text(encoding="utf-8"), filename=path)
    (found,) = (
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function
    )
    arguments = found.args
    return [argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


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
