"""The catalog is the one source of the deployments: ``prefect.yaml`` is generated from it and
``postflows serve`` builds from it; both agree field by field, and the schedules are the issue's."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml
from prefect.cli.deploy._schedules import _schedule_config_to_deployment_schedule
from prefect.cli.deploy._triggers import _initialize_deployment_triggers
from prefect.server.schemas.schedules import CronSchedule
from prefect.utilities.callables import parameter_schema
from prefect.utilities.schema_tools import validate

from deployments import yaml as prefect_yaml
from deployments.catalog import (
    API_POOLS,
    CATALOG,
    DISPATCH_POOL,
    FILE_ARRIVED_DEPLOYMENT,
    TIMEZONE,
    DeploymentSpec,
    flow_apis,
    spec_named,
)
from deployments.deploy import pool_names, pools_by_deployment
from deployments.serve import deployments
from flows import runs
from flows.arrivals import FILE_FLOWS

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "run `python -m deployments.yaml > prefect.yaml`"
ZURICH = ZoneInfo(TIMEZONE)


@pytest.fixture(scope="module")
def listed() -> dict[str, dict[str, Any]]:
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    return {entry["name"]: entry for entry in config["deployments"]}


@pytest.fixture(scope="module")
def served() -> dict[str, Any]:
    return {deployment.name: deployment for deployment in deployments()}


def test_prefect_yaml_is_generated_from_the_catalog() -> None:
    text = (ROOT / "prefect.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(text) == prefect_yaml.project(), REGENERATE
    assert text == prefect_yaml.render(), REGENERATE


def test_prefect_yaml_deploys_to_the_pool_of_each_api_without_pull_steps() -> None:
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    assert "pull" not in config and "build" not in config and "push" not in config
    assert all("pull" not in entry and "push" not in entry for entry in config["deployments"])
    pools = {entry["name"]: entry["work_pool"] for entry in config["deployments"]}
    assert pools == {spec.name: {"name": spec.work_pool} for spec in CATALOG}
    assert pools == {name: {"name": pool} for name, pool in pools_by_deployment().items()}


def test_every_deployment_goes_to_the_pool_of_the_api_it_talks_to() -> None:
    assert set(API_POOLS.values()) == {"address-service", "newspaper", "commerce"}
    for spec in CATALOG:
        apis = [tag for tag in spec.tags if tag in API_POOLS]
        assert len(apis) <= 1, f"{spec.name} talks to more than one API: {apis}"
        assert spec.work_pool == (API_POOLS[apis[0]] if apis else DISPATCH_POOL)
    by_pool = {pool: {spec.name for spec in CATALOG if spec.work_pool == pool} for pool in API_POOLS.values()}
    # history-report reads the run history only: the pool of a flow that talks to no API.
    assert {"address-batch", "address-query", "cleanup", "file-arrived", "history-report"} == by_pool[
        "address-service"
    ]
    assert {"newspaper-order", "newspaper-statistics", "address-purchase", "structure-files"} <= by_pool[
        "newspaper"
    ]
    assert {"pickup-registration", "delivery-reference-sync", "return-order"} <= by_pool["commerce"]
    assert set().union(*by_pool.values()) == {spec.name for spec in CATALOG}


def test_each_flow_talking_to_an_api_is_counted_for_that_api() -> None:
    apis = flow_apis()
    assert apis == {spec.name: spec.api for spec in CATALOG if spec.api is not None}
    assert apis == runs.flow_apis()  # what the history-report flow counts by
    assert set(apis.values()) == set(API_POOLS)
    assert apis["address-batch"] == apis["address-query"] == "address-service"
    assert apis["address-validation"] == "commerce" and apis["address-purchase"] == "newspaper"
    assert "history-report" not in apis and FILE_ARRIVED_DEPLOYMENT not in apis


def test_one_pool_named_takes_every_deployment() -> None:
    assert set(pools_by_deployment("shared").values()) == {"shared"}
    assert pool_names(pools_by_deployment()) == ["address-service", "newspaper", "commerce"]


def test_every_flow_module_is_in_the_catalog_once() -> None:
    names = [spec.name for spec in CATALOG]
    assert len(names) == len(set(names))
    flow_modules = {
        f"{path.parent.name}.{path.stem}"
        for folder in ("flows", "deployments")
        for path in (ROOT / folder).glob("*.py")
        if "@flow(" in path.read_text(encoding="utf-8")
    }
    assert {spec.flow.partition(":")[0] for spec in CATALOG} == flow_modules


@pytest.mark.parametrize("spec", CATALOG, ids=lambda spec: spec.name)
def test_served_and_listed_deployments_agree(
    spec: DeploymentSpec, listed: dict[str, dict[str, Any]], served: dict[str, Any]
) -> None:
    entry, deployment = listed[spec.name], served[spec.name]
    assert deployment.flow_name == spec.name, "the flow's name is the deployment's name"
    assert deployment.entrypoint == entry["entrypoint"] == spec.entrypoint
    module, _, function = entry["entrypoint"].partition(":")
    assert f"def {function}(" in (ROOT / module).read_text(encoding="utf-8")
    assert deployment.description == entry["description"] == spec.description
    assert deployment.tags == entry["tags"] == list(spec.tags)
    assert deployment.concurrency_limit == entry["concurrency_limit"] == spec.concurrency_limit

    from_yaml = [_schedule_config_to_deployment_schedule(dict(config)) for config in entry["schedules"]]
    assert [_schedule_fields(s["schedule"], s["slug"], s.get("parameters", {})) for s in from_yaml] == [
        _schedule_fields(s.schedule, s.slug, s.parameters) for s in deployment.schedules
    ]
    # No `active` in the file: `prefect deploy` would switch a schedule paused in the UI back on.
    assert all(s.active for s in deployment.schedules) and all("active" not in c for c in entry["schedules"])
    # Every parameter of the flow is the server's default, when it has one (deployments.prefect_steps).
    flow_parameters = list(parameter_schema(spec.load_flow()).properties)
    assert prefect_yaml.parameter_names(spec) == flow_parameters
    assert entry["parameters"] == {name: f"{{{{ on-server.{name} }}}}" for name in flow_parameters}
    assert entry["build"] == [
        {"deployments.prefect_steps.server_choices": {"id": "on-server", "deployment": spec.full_name}}
    ]
    assert "paused" not in entry

    yaml_triggers = _initialize_deployment_triggers(spec.name, [dict(t) for t in entry["triggers"]])
    assert [_trigger_fields(t) for t in yaml_triggers] == [_trigger_fields(t) for t in deployment.triggers]


@pytest.mark.parametrize("spec", CATALOG, ids=lambda spec: spec.name)
def test_scheduled_runs_get_every_parameter_they_need(spec: DeploymentSpec) -> None:
    schema = parameter_schema(spec.load_flow()).model_dump()
    for schedule in spec.schedules:
        errors = validate(dict(schedule.parameters), schema, raise_on_error=False)
        assert not errors, f"{spec.name} schedule {schedule.slug}: {[e.message for e in errors]}"
        spec.load_flow().validate_parameters(dict(schedule.parameters))


def test_the_schedules_are_the_issues() -> None:
    scheduled = {spec.name for spec in CATALOG if spec.schedules}
    assert scheduled == {
        "newspaper-master-data",
        "newspaper-reports",
        "delivery-reference-sync",
        "structure-files",
        "newspaper-statistics",
        "cleanup",
        "history-report",
    }
    assert all(s.cron and TIMEZONE == "Europe/Zurich" for spec in CATALOG for s in spec.schedules)
    start = dt.datetime(2026, 1, 1, 12, tzinfo=ZURICH)

    def runs(name: str, slug: str, count: int) -> list[dt.datetime]:
        (schedule,) = [s for s in spec_named(name).schedules if s.slug == slug]
        return _next_runs(schedule.cron, start, count)

    daily = runs("newspaper-master-data", "daily", 3)
    assert [d.date() for d in daily] == [dt.date(2026, 1, 2), dt.date(2026, 1, 3), dt.date(2026, 1, 4)]
    assert {d.hour for d in runs("delivery-reference-sync", "daily", 3)} == {5}
    assert {d.hour for d in runs("cleanup", "nightly", 3)} == {2}
    # The reports sweep runs daily at 06:15 with the flow's defaults: no order id, the last 30 days.
    reports = runs("newspaper-reports", "daily", 2)
    assert [(d.hour, d.minute) for d in reports] == [(6, 15)] * 2 and reports[1] - reports[0] == dt.timedelta(
        1
    )
    assert spec_named("newspaper-reports").schedules[0].parameters == {}
    weekly = runs("structure-files", "weekly", 3)
    assert [b - a for a, b in zip(weekly, weekly[1:], strict=False)] == [dt.timedelta(days=7)] * 2
    assert spec_named("structure-files").schedules[0].parameters == {"request": {"file_code": 9}}

    assert [d.month for d in runs("newspaper-statistics", "az-quarterly", 4)] == [4, 7, 10, 1]
    assert [d.month for d in runs("newspaper-statistics", "aza-semi-annually", 2)] == [7, 1]
    assert [(d.year, d.month) for d in runs("newspaper-statistics", "azb-yearly", 2)] == [
        (2027, 1),
        (2028, 1),
    ]
    intervals = {
        s.slug: s.parameters["request"]["interval"] for s in spec_named("newspaper-statistics").schedules
    }
    assert intervals == {"az-quarterly": "AZ", "aza-semi-annually": "AZA", "azb-yearly": "AZB"}
    # The history report: at 06:00 on the first of every month, up to the month just over.
    monthly = runs("history-report", "monthly", 3)
    assert [(d.month, d.day, d.hour, d.minute) for d in monthly] == [(2, 1, 6, 0), (3, 1, 6, 0), (4, 1, 6, 0)]
    assert spec_named("history-report").schedules[0].parameters == {"request": {"whole_months": True}}
    # Local time: 07:00 in Zurich in winter and in summer alike.
    assert {(d.hour, d.utcoffset()) for d in runs("newspaper-statistics", "az-quarterly", 2)} == {
        (7, dt.timedelta(hours=2))
    }


def test_every_other_flow_runs_on_demand_only() -> None:
    for spec in CATALOG:
        if spec.name not in {"newspaper-master-data", "delivery-reference-sync", "structure-files"} | {
            "newspaper-statistics",
            "newspaper-reports",
            "cleanup",
            "history-report",
        }:
            assert spec.schedules == (), spec.name


def _schedule_fields(schedule: Any, slug: str | None, parameters: Any) -> dict[str, Any]:
    return {
        "cron": schedule.cron,
        "timezone": schedule.timezone,
        "day_or": schedule.day_or,
        "slug": slug,
        "parameters": dict(parameters or {}),
    }


def _trigger_fields(trigger: Any) -> dict[str, Any]:
    return {
        "type": type(trigger).__name__,
        "name": trigger.name,
        "enabled": trigger.enabled,
        "expect": trigger.expect,
        "match": trigger.match.model_dump(),
        "posture": trigger.posture,
        "threshold": trigger.threshold,
        "parameters": trigger.parameters,
    }


def _next_runs(cron: str, start: dt.datetime, count: int) -> list[dt.datetime]:
    schedule = CronSchedule(cron=cron, timezone=TIMEZONE)
    dates = schedule._get_dates_generator(n=count, start=start)
    return [date.astimezone(ZURICH) for date in dates]


def test_every_flow_a_file_can_start_is_a_deployment_of_the_same_command_that_takes_the_path() -> None:
    for file_flow in FILE_FLOWS.values():
        spec = spec_named(file_flow.name)
        assert spec.command == file_flow.command and spec.arrival_parameter == file_flow.parameter
        assert file_flow.deployment == spec.full_name
        part, _, field = file_flow.parameter.partition(".")
        assert part in parameter_schema(spec.load_flow()).properties
        parameters = file_flow.parameters("/in/kunden.csv", "/data/arrivals/kunden-1")
        validated = spec.load_flow().validate_parameters(parameters)
        assert str(getattr(validated[part], field)) == "/in/kunden.csv"
