"""The task runner of the row fan-outs (address queries, validations), as ``POSTFLOWS_TASK_RUNNER`` names it:
``default`` (Prefect's thread pool runner, in the flow's process), ``dask`` (a local Dask cluster started
for the flow run) or ``dask:<scheduler address>`` (an existing cluster, e.g. ``dask:tcp://10.0.0.5:8786``).

The flows name :func:`fan_out_task_runner` as their task runner; the setting is read when a flow run starts.
On a Dask cluster of several processes every worker process waits out the address service's per-minute limit
at its own window gate; the global rate limits on the Prefect server bound all of them together.
"""

from __future__ import annotations

from typing import Any

from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from runtime.settings import Settings
from tasks.fanout import FanOutTaskRunner

DASK_PREFIX = "dask:"


def task_runner_for(setting: str) -> TaskRunner[Any]:
    """The runner a value of ``POSTFLOWS_TASK_RUNNER`` names (not started).

    Raises:
        ValueError: the value names no runner.
    """
    if setting == "default":
        return ThreadPoolTaskRunner()
    if setting == "dask" or setting.startswith(DASK_PREFIX):
        from prefect_dask.task_runners import (
            DaskTaskRunner,
        )  # imported only when asked for: Dask takes a while to load

        address = setting.removeprefix(DASK_PREFIX) if setting != "dask" else ""
        if setting != "dask" and not address.strip():
            raise ValueError("POSTFLOWS_TASK_RUNNER=dask: needs a scheduler address after the colon")
        runner: TaskRunner[Any] = DaskTaskRunner(address=address) if address else DaskTaskRunner()
        return runner
    raise ValueError(
        f"POSTFLOWS_TASK_RUNNER={setting!r} names no task runner: "
        "use default, dask or dask:<scheduler address>"
    )


def configured_task_runner() -> TaskRunner[Any]:
    """The runner the settings name now (the environment and ``.env``)."""
    return task_runner_for(Settings().task_runner)


def fan_out_task_runner() -> FanOutTaskRunner:
    """The task runner of the flows with row fan-outs: the configured one, chosen as each flow run starts."""
    return FanOutTaskRunner(configured_task_runner)
