"""The build step of ``prefect.yaml`` that keeps the parameter defaults an operator set in the UI when
``prefect deploy --all`` runs again: it reads them from the server, and the file's ``parameters`` name them.

Each deployment of ``prefect.yaml`` (:mod:`deployments.yaml`) runs :func:`server_choices` as its build step
with the id :data:`STEP_ID` and lists every parameter of its flow as ``"{{ on-server.<parameter> }}"``.
Prefect 3.8.8 fills each placeholder from the step's output and drops a parameter the output lacks, so the
deployment is sent with the defaults the server has and no others. Prefect warns about every placeholder it
drops; :class:`UnsetDefaultsFilter` keeps those warnings (for this step's placeholders only) out of the
output, since an unset default is the usual case. This module imports no flow: ``prefect deploy`` imports it
before it loads any.
"""

from __future__ import annotations

import logging
import re
from typing import Any

STEP_ID = "on-server"
"""The ``id`` of the step in ``prefect.yaml``: its output is ``{{ on-server.<parameter> }}``."""
TEMPLATING_LOGGER = "prefect.utilities.templating"
"""The logger of Prefect's placeholder filling, which warns about every placeholder left unfilled."""
_UNSET = re.compile(
    r"^Value for placeholder '(\{\{ *)?" + re.escape(STEP_ID) + r"\.[^']*' not found in provided values\."
)


class UnsetDefaultsFilter(logging.Filter):
    """Drops Prefect's "not found in provided values" warning for a placeholder of this step (a parameter
    without a default on the server, which the deployment then does not send); every other record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        return _UNSET.match(record.getMessage()) is None


def placeholder(parameter: str) -> str:
    """What ``prefect.yaml`` gives as ``parameter``'s default: the server's, when it has one."""
    return "{{ " + f"{STEP_ID}.{parameter}" + " }}"


def install_filter() -> None:
    """Put :class:`UnsetDefaultsFilter` on Prefect's templating logger, unless one is there already."""
    logger = logging.getLogger(TEMPLATING_LOGGER)
    if not any(isinstance(installed, UnsetDefaultsFilter) for installed in logger.filters):
        logger.addFilter(UnsetDefaultsFilter())


async def server_choices(deployment: str) -> dict[str, Any]:
    """The parameter defaults of ``deployment`` (``flow/name``) on the Prefect server in effect
    (``PREFECT_API_URL``): ``{}`` when the server has no such deployment yet or it has no defaults.

    Args:
        deployment: the deployment's full name, ``<flow name>/<deployment name>``.
    """
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    install_filter()
    async with get_client() as client:
        try:
            current = await client.read_deployment_by_name(deployment)
        except ObjectNotFound:
            return {}
    return dict(current.parameters or {})
