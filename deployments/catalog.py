"""Every deployment of the postflows flows, in one place: name, flow, description, tags, schedules
(Europe/Zurich), concurrency limit, triggers and work pool. ``postflows serve``, ``postflows deploy`` and
``prefect.yaml`` are built from it.

Work pools: a deployment goes to the pool of the API it talks to (:data:`API_POOLS`, by its first tag that
names an API): ``address-service``, ``newspaper`` or ``commerce``, so each API's workers can be placed, sized
and stopped on their own. ``cleanup`` deletes address-service files and goes to ``address-service``; the
``file-arrived`` dispatcher talks to no API (it only starts the deployment an event names, which then runs on
that deployment's own pool) and goes to :data:`DISPATCH_POOL` (``address-service``, the pool every
installation has), as does ``history-report``, which reads the run history only. ``postflows deploy --pool
NAME`` puts every deployment on one pool instead.

Nothing here imports a flow: the catalog is read by the YAML generator and by tests without loading
Prefect's engine; :meth:`DeploymentSpec.load_flow` imports the flow when a deployment is built. Which flows
a file arriving can start is the flows' own word (:mod:`flows.arrivals`, Prefect-free), read here.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from flows.arrivals import FILE_ARRIVED_EVENT as FILE_ARRIVED_EVENT
from flows.arrivals import FILE_ARRIVED_FLOW, FILE_FLOWS
from flows.arrivals import arrival_kinds as file_arrival_kinds

TIMEZONE = "Europe/Zurich"
API_POOLS: Mapping[str, str] = MappingProxyType(
    {"address-service": "address-service", "newspaper": "newspaper", "commerce": "commerce"}
)
"""The work pool of each API, by the tag that names the API."""
DISPATCH_POOL = "address-service"
"""The pool of a deployment that talks to no API itself (the file-arrived dispatcher)."""
FILE_ARRIVED_DEPLOYMENT = FILE_ARRIVED_FLOW  # named as its flow, like every deployment here


@dataclass(frozen=True)
class CronSpec:
    """A cron schedule in :data:`TIMEZONE`, with the parameters its runs get.

    Attributes:
        slug: names the schedule within its deployment (shown in the UI; stable across re-deploys).
        cron: minute hour day-of-month month day-of-week.
        parameters: parameters of the scheduled runs, on top of the deployment's defaults.
    """

    slug: str
    cron: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def as_dict(self) -> dict[str, Any]:
        """The schedule as ``prefect.yaml`` spells it: no ``active`` (``prefect deploy`` would switch a
        schedule paused in the UI back on) and ``parameters`` only when it has some (an absent key leaves
        the server's as they are; a new schedule is active)."""
        schedule: dict[str, Any] = {"cron": self.cron, "timezone": TIMEZONE, "slug": self.slug}
        if self.parameters:
            schedule["parameters"] = dict(self.parameters)
        return schedule


@dataclass(frozen=True)
class DeploymentSpec:
    """One deployment of one flow.

    Attributes:
        name: the deployment's name (the flow's name too): ``<name>/<name>`` in ``prefect deployment run``.
        flow: ``module:attribute`` of the flow object.
        description: one line for the deployment list.
        tags: what the UI filters by (the API the flow talks to).
        command: the ``postflows`` sub-command that runs the same flow (accepted as an event's ``kind``).
        schedules: when it runs by itself; none = on demand only.
        concurrency_limit: runs of this deployment at once (further runs wait for a slot).
        triggers: deployment triggers as ``prefect.yaml`` spells them.
    """

    name: str
    flow: str
    description: str
    tags: tuple[str, ...]
    command: str
    schedules: tuple[CronSpec, ...] = ()
    concurrency_limit: int = 1
    triggers: tuple[Mapping[str, Any], ...] = ()

    @property
    def entrypoint(self) -> str:
        """``path/to/module.py:flow`` relative to the repository root, as ``prefect deploy`` wants it."""
        module, _, attribute = self.flow.partition(":")
        return f"{module.replace('.', '/')}.py:{attribute}"

    @property
    def full_name(self) -> str:
        """``<flow name>/<deployment name>``: how ``run_deployment`` and the CLI name the deployment."""
        return f"{self.name}/{self.name}"

    @property
    def arrival_parameter(self) -> str | None:
        """The parameter a ``postflows.file.arrived`` event fills with the file's path (see
        :mod:`flows.arrivals`); None when a file arriving cannot start this flow."""
        file_flow = FILE_FLOWS.get(self.name)
        return None if file_flow is None else file_flow.parameter

    @property
    def api(self) -> str | None:
        """The API the flow talks to: its first tag naming one (a key of :data:`API_POOLS`), else None."""
        return next((tag for tag in self.tags if tag in API_POOLS), None)

    @property
    def work_pool(self) -> str:
        """The work pool of the API the flow talks to (its first tag naming one); :data:`DISPATCH_POOL` for
        a flow that talks to none."""
        return DISPATCH_POOL if self.api is None else API_POOLS[self.api]

    def load_flow(self) -> Any:
        """Import and return the flow object."""
        module, _, attribute = self.flow.partition(":")
        return getattr(importlib.import_module(module), attribute)


def _monthly(slug: str, at: str, **parameters: Any) -> CronSpec:
    """On the first day of every month at ``at``."""
    hour, minute = at.split(":")
    return CronSpec(slug, f"{int(minute)} {int(hour)} 1 * *", MappingProxyType(parameters))


def _daily(slug: str, at: str, **parameters: Any) -> CronSpec:
    hour, minute = at.split(":")
    return CronSpec(slug, f"{int(minute)} {int(hour)} * * *", MappingProxyType(parameters))


# The dispatcher runs on every postflows.file.arrived event, whatever its resource id; the event's payload
# becomes its parameters (Prefect renders these templates when the event arrives). Deployment triggers cannot
# filter on the payload, so the dispatcher checks the kind and the path and starts the deployment named.
# A missing payload field renders as "" (the dispatcher run then fails saying so, instead of no run at all);
# the event id is a UUID, which Prefect's rendering cannot turn into JSON unless it is made a string first.
FILE_ARRIVED_TRIGGER: Mapping[str, Any] = MappingProxyType(
    {
        "type": "event",
        "name": "postflows-file-arrived",
        "description": "Start the deployment the event's kind names on the file at its path.",
        "enabled": True,
        "match": {"prefect.resource.id": "*"},
        "expect": [FILE_ARRIVED_EVENT],
        "posture": "Reactive",
        "threshold": 1,
        "within": 0,
        "parameters": {
            "path": '{{ event.payload.path | default("") }}',
            "kind": '{{ event.payload.kind | default("") }}',
            "event_id": "{{ event.id | string }}",
        },
    }
)

CATALOG: tuple[DeploymentSpec, ...] = (
    DeploymentSpec(
        name="address-batch",
        flow="flows.address_batch:address_batch",
        description="Align an address file with the address web service's batch alignment.",
        tags=("address-service",),
        command="address-batch",
        concurrency_limit=4,
    ),
    DeploymentSpec(
        name="address-query",
        flow="flows.address_query:address_query",
        description="Check every address of a file with an individual query (runquery2).",
        tags=("address-service",),
        command="address-query",
        concurrency_limit=2,
    ),
    DeploymentSpec(
        name="newspaper-order",
        flow="flows.newspaper_order:newspaper_order",
        description="Submit a newspaper order and collect its delivery note and reports.",
        tags=("newspaper",),
        command="newspaper-order",
        concurrency_limit=4,
    ),
    DeploymentSpec(
        name="newspaper-reports",
        flow="flows.newspaper_reports:newspaper_reports",
        description="Fetch status, summary, sendings and orders of an existing newspaper order (daily: "
        "every order of the last 30 days whose reports are missing or older than its status).",
        tags=("newspaper", "scheduled"),
        command="newspaper-reports",
        schedules=(_daily("daily", "06:15"),),
        concurrency_limit=4,
    ),
    DeploymentSpec(
        name="newspaper-master-data",
        flow="flows.newspaper_master_data:newspaper_master_data",
        description="Sync newspaper summary, distribution list and black list into SQL (daily: every "
        "newspaper synced before).",
        tags=("newspaper", "scheduled"),
        command="newspaper-sync",
        schedules=(_daily("daily", "05:30"),),
    ),
    DeploymentSpec(
        name="newspaper-statistics",
        flow="flows.newspaper_statistics:newspaper_statistics",
        description="Validate and upload newspaper statistics (scheduled: the files of the statistics inbox "
        "at the end of each AZ quarter, AZA semester and AZB year).",
        tags=("newspaper", "scheduled"),
        command="newspaper-statistics",
        schedules=(
            # 07:00 on the first day after each period: the inbox of that interval holds the statistics of
            # the period's last submission.
            CronSpec("az-quarterly", "0 7 1 1,4,7,10 *", MappingProxyType({"request": {"interval": "AZ"}})),
            CronSpec("aza-semi-annually", "0 7 1 1,7 *", MappingProxyType({"request": {"interval": "AZA"}})),
            CronSpec("azb-yearly", "0 7 1 1 *", MappingProxyType({"request": {"interval": "AZB"}})),
        ),
    ),
    DeploymentSpec(
        name="address-purchase",
        flow="flows.address_purchase:address_purchase",
        description="Address validation and sorting purchase with every document.",
        tags=("newspaper",),
        command="address-purchase",
        concurrency_limit=2,
    ),
    DeploymentSpec(
        name="structure-files",
        flow="flows.structure_files:structure_files",
        description="Download structure files; record new versions (weekly: both file codes).",
        tags=("newspaper", "scheduled"),
        command="structure-files",
        schedules=(CronSpec("weekly", "0 6 * * 1", MappingProxyType({"request": {"file_code": 9}})),),
    ),
    DeploymentSpec(
        name="cleanup",
        flow="flows.cleanup:cleanup",
        description="Delete the remote files that runs left behind, past an age (nightly).",
        tags=("address-service", "scheduled"),
        command="cleanup",
        schedules=(_daily("nightly", "02:30"),),
    ),
    DeploymentSpec(
        name="address-validation",
        flow="flows.address_validation:address_validation",
        description="Validate every address of a file with the commerce API; changed fields highlighted.",
        tags=("commerce",),
        command="address-validation",
        concurrency_limit=2,
    ),
    DeploymentSpec(
        name="deliverability-check",
        flow="flows.deliverability_check:deliverability_check",
        description="Deliverable days and product codes per address of a file, as an address x date "
        "workbook.",
        tags=("commerce",),
        command="deliverability",
        concurrency_limit=2,
    ),
    DeploymentSpec(
        name="logistic-product",
        flow="flows.logistic_product:logistic_product",
        description="How a logistic product is delivered: barcode, delivery instructions, additional "
        "services (mandatory ones marked).",
        tags=("commerce",),
        command="commerce product",
        concurrency_limit=4,
    ),
    DeploymentSpec(
        name="same-day-acceptance",
        flow="flows.same_day_acceptance:same_day_acceptance",
        description="Where and until when a shipment for a same-day delivery to an address can be handed in.",
        tags=("commerce",),
        command="commerce same-day",
        concurrency_limit=4,
    ),
    DeploymentSpec(
        name="delivery-reference-sync",
        flow="flows.delivery_reference_sync:delivery_reference_sync",
        description="Sync the commerce API's holidays, additional services and delivery instructions into "
        "SQL (daily).",
        tags=("commerce", "scheduled"),
        command="delivery-sync",
        schedules=(_daily("daily", "05:45"),),
    ),
    DeploymentSpec(
        name="pickup-registration",
        flow="flows.pickup_registration:pickup_registration",
        description="Register the pickup users of a file once each and record their pickup ids.",
        tags=("commerce",),
        command="pickup-register",
    ),
    DeploymentSpec(
        name="pickup-points",
        flow="flows.pickup_points:pickup_points",
        description="Pickup points near every location of a file, one row per point with today's hours.",
        tags=("commerce",),
        command="pickup-points",
        concurrency_limit=2,
    ),
    DeploymentSpec(
        name="address-labels",
        flow="flows.address_labels:address_labels",
        description="Create the address labels of a file of label requests once each; save them as PDF.",
        tags=("commerce",),
        command="address-labels",
    ),
    DeploymentSpec(
        name="return-order",
        flow="flows.return_order:return_order",
        description="Create the return orders of a JSON file once each and record their ids.",
        tags=("commerce",),
        command="return-order",
    ),
    DeploymentSpec(
        name="history-report",
        flow="flows.history_report:history_report",
        description="Trends over the run history by month: unknown addresses, moves, corrections, and "
        "submissions and rows per API, as report.xlsx with charts, report.png and report.md (monthly: up to "
        "the month just over).",
        tags=("reports", "scheduled"),
        command="report",
        schedules=(_monthly("monthly", "06:00", request={"whole_months": True}),),
    ),
    DeploymentSpec(
        name=FILE_ARRIVED_DEPLOYMENT,
        flow="flows.file_arrived:file_arrived",
        description=f"On a {FILE_ARRIVED_EVENT} event: start the run its kind names on the file at its path.",
        tags=("events",),
        command=FILE_ARRIVED_DEPLOYMENT,
        concurrency_limit=8,
        triggers=(FILE_ARRIVED_TRIGGER,),
    ),
)


def spec_named(name: str) -> DeploymentSpec:
    """The spec of deployment ``name``; KeyError when there is none."""
    for spec in CATALOG:
        if spec.name == name:
            return spec
    raise KeyError(name)


def flow_apis() -> dict[str, str]:
    """The API each flow talks to (flow name → the tag its work pool is chosen by), for the flows that talk
    to one: the history report counts their runs per API."""
    return {spec.name: spec.api for spec in CATALOG if spec.api is not None}


def arrival_kinds() -> dict[str, DeploymentSpec]:
    """Every ``kind`` a ``postflows.file.arrived`` event may name (deployment and command names) → spec."""
    return {kind: spec_named(file_flow.name) for kind, file_flow in file_arrival_kinds().items()}
