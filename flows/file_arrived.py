"""What a ``postflows.file.arrived`` event starts: the deployment its ``kind`` names, on the file at its
``path``, with the results under ``<data dir>/arrivals/<file stem>-<time>``.

Prefect's deployment triggers match events but cannot look into their payload, so one dispatcher deployment
(``file-arrived``) runs on every such event with the payload as parameters, checks it, and starts the run
the kind names (idempotent per event: a re-delivered event starts nothing new).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger
from prefect.deployments import arun_deployment
from pydantic import BaseModel, ConfigDict

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from core.errors import PostflowsError
from flows.arrivals import FILE_ARRIVED_EVENT, FILE_ARRIVED_FLOW, FileFlow, arrival_kinds
from flows.early_failures import ON_FAILURE
from flows.forms import Blank, form
from flows.naming import run_name
from runtime.settings import get_settings

KINDS = ", ".join(sorted(arrival_kinds()))


class ArrivalRefused(PostflowsError):
    """The event names no kind that takes a file, or no file is at its path; nothing was started."""


class FileArrivedResult(BaseModel):
    """The run a file's arrival started: its deployment, its flow run's id and name, and the parameters it
    got (the request and output parts of the deployment's flow, as JSON)."""

    model_config = ConfigDict(extra="forbid")

    deployment: str
    flow_run_id: str
    flow_run_name: str
    parameters: dict[str, Any]


def arrival_flow(kind: str) -> FileFlow:
    """The flow a file of ``kind`` starts (flow, deployment or command name)."""
    file_flow = arrival_kinds().get(kind.strip())
    if file_flow is None:
        raise ArrivalRefused(f"unknown kind {kind!r}: a file arriving can start {KINDS}; nothing was started")
    return file_flow


def arrived_file(path: str) -> Path:
    """The file the event names: an absolute path to a file that exists."""
    if not path.strip():
        raise ArrivalRefused("the event's payload has no path; nothing was started")
    file = Path(path.strip())
    if not file.is_absolute():
        raise ArrivalRefused(f"the path {path!r} is not absolute; nothing was started")
    if not file.is_file():
        raise ArrivalRefused(f"no file at {file}; nothing was started")
    return file


def arrival_dir(data_dir: Path, file: Path, *, now: dt.datetime | None = None) -> Path:
    """``<data dir>/arrivals/<file stem>-<time>``, with ``-2``, ``-3`` … when that folder exists already."""
    base = data_dir / "arrivals" / f"{file.stem}-{(now or dt.datetime.now()).strftime('%Y%m%d-%H%M%S')}"
    candidate, number = base, 1
    while candidate.exists():
        number += 1
        candidate = base.with_name(f"{base.name}-{number}")
    return candidate


@flow(
    on_failure=ON_FAILURE,
    name=FILE_ARRIVED_FLOW,
    log_prints=False,
    flow_run_name=run_name(FILE_ARRIVED_FLOW, "kind", "path"),
)
async def file_arrived(
    path: Annotated[str, form("File", "Absolute path of the file that arrived, on the worker.")],
    kind: Annotated[
        str,
        form(
            "Kind",
            f"What to do with it: the command or deployment name, one of {KINDS}.",
            examples=["address-batch"],
        ),
    ],
    event_id: Annotated[
        Blank[str],
        form(
            "Event id",
            f"The {FILE_ARRIVED_EVENT} event this run answers: the run it starts is started once per event.",
            blank="",
        ),
    ] = None,
) -> FileArrivedResult:
    """Start the run a ``postflows.file.arrived`` event asks for.

    Args:
        path: the file that arrived (absolute, on the worker).
        kind: the deployment or command to run on it (``address-batch``, ``newspaper-statistics`` …).
        event_id: the event's id; the run started gets an idempotency key from it.

    Returns:
        The deployment started, its flow run's id and name, and the parameters it got.

    Raises:
        ArrivalRefused: an unknown kind, or no file at the path: nothing is started.
    """
    file_flow = arrival_flow(kind)
    file = arrived_file(path)
    parameters = file_flow.parameters(str(file), str(arrival_dir(get_settings().data_dir, file)))
    started = await arun_deployment(
        file_flow.deployment,
        parameters=parameters,
        idempotency_key=f"{FILE_ARRIVED_EVENT}:{event_id}:{file_flow.name}" if event_id else None,
        timeout=0,
    )
    get_run_logger().info(
        "%s: started %s run %s on %s", FILE_ARRIVED_EVENT, file_flow.deployment, started.name, file
    )
    return FileArrivedResult(
        deployment=file_flow.deployment,
        flow_run_id=str(started.id),
        flow_run_name=started.name,
        parameters=parameters,
    )
