"""Runs triggered the four ways other systems start them, against ``postflows serve`` on a real Prefect
server: ``prefect deployment run``, the REST API with an idempotency key, ``run_deployment`` from Python and
a ``postflows.file.arrived`` event. Each run completes and is in the run history (``postflows history``
with the served data dir); the schedules of the catalog are on the server.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from deployments.catalog import CATALOG, FILE_ARRIVED_EVENT, TIMEZONE
from tests.e2e.conftest import (
    EXAMPLE,
    POSTFLOWS,
    PREFECT,
    REPO,
    TRIGGER_TIMINGS,
    ServedDeployments,
    sandbox_cli_environment,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

CHAINED = "deliverability after each address batch"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
EMIT_EVENT = """
import json, sys
from prefect.events import emit_event

event = emit_event(
    event="postflows.file.arrived",
    resource={"prefect.resource.id": "sftp.inbox"},
    payload=json.loads(sys.argv[1]),
)
print(event.id)
"""
RUN_DEPLOYMENT = """
import json, sys
from prefect.deployments import run_deployment

run = run_deployment("address-query/address-query", parameters=json.loads(sys.argv[1]), timeout=240)
print(json.dumps({"id": str(run.id), "state": run.state.type.value}))
"""


def query(out: Path, file: Path = EXAMPLE) -> dict[str, Any]:
    return {"request": {"input_path": str(file)}, "output": {"output_dir": str(out)}}


def assert_completed_and_recorded(served: ServedDeployments, run: dict[str, Any], out: Path) -> None:
    assert run["state_type"] == "COMPLETED", served.explain(run)
    assert (out / "results.csv").is_file() and (out / "summary.md").is_file()
    rows = served.history("--flow", "address-query", "--limit", "200").splitlines()
    recorded = [line for line in rows if run["id"] in line]
    assert len(recorded) == 1 and "COMPLETED" in recorded[0], rows


def wait_for(find: Any, what: str, served: ServedDeployments, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while (found := find()) is None:
        assert time.monotonic() < deadline, f"{what} did not appear:\n{served.log_text()}"
        time.sleep(0.25)
    return found


def emit(served: ServedDeployments, payload: dict[str, Any]) -> str:
    """POST one postflows.file.arrived event to the server's events API, under a resource id of its own."""
    event_id = str(uuid.uuid4())
    event = {
        "id": event_id,
        "occurred": dt.datetime.now(dt.UTC).isoformat(),
        "event": FILE_ARRIVED_EVENT,
        "resource": {"prefect.resource.id": f"sftp.inbox.{uuid.uuid4().hex[:8]}"},
        "payload": payload,
    }
    served.api("POST", "/events", json=[event])
    return event_id


def dispatcher_run(served: ServedDeployments, event_id: str) -> dict[str, Any]:
    def find() -> dict[str, Any] | None:
        runs = served.flow_runs("file-arrived")
        return next((run for run in runs if run["parameters"].get("event_id") == event_id), None)

    found = wait_for(find, f"the file-arrived run of event {event_id}", served)
    return served.wait_for_flow_run(found["id"])


def test_the_schedules_limits_and_the_event_trigger_are_on_the_server(served: ServedDeployments) -> None:
    for spec in CATALOG:
        deployment = served.deployment(spec.name)
        schedules = sorted(
            (s["schedule"]["cron"], s["schedule"]["timezone"], s["parameters"], s["slug"], s["active"])
            for s in deployment["schedules"]
        )
        assert schedules == sorted(
            (c.cron, TIMEZONE, dict(c.parameters), c.slug, True) for c in spec.schedules
        ), spec.name
        assert deployment["tags"] == list(spec.tags)
        assert deployment["global_concurrency_limit"]["limit"] == spec.concurrency_limit, spec.name

    listed = subprocess.run(
        [PREFECT, "deployment", "schedule", "ls", "newspaper-statistics/newspaper-statistics"],
        env=served.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    for cron in ("0 7 1 1,4,7,10 *", "0 7 1 1,7 *", "0 7 1 1 *"):
        assert cron in listed.stdout
    inspected = subprocess.run(
        [PREFECT, "deployment", "inspect", "newspaper-statistics/newspaper-statistics"],
        env=served.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert inspected.returncode == 0, inspected.stderr
    assert inspected.stdout.count("Europe/Zurich") == 3

    # The runs its schedule makes (the server's scheduler is off in the suite: asked for here, from tomorrow
    # on, so that none is due while the tests run).
    tomorrow = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    served.api(
        "POST",
        f"/deployments/{served.deployment('cleanup')['id']}/schedule",
        json={"start_time": tomorrow.isoformat(), "min_runs": 3, "max_runs": 3},
    )
    upcoming = served.flow_runs("cleanup", state={"type": {"any_": ["SCHEDULED"]}})
    zurich = ZoneInfo(TIMEZONE)
    starts = {dt.datetime.fromisoformat(run["expected_start_time"]).astimezone(zurich) for run in upcoming}
    assert starts and {(start.hour, start.minute) for start in starts} == {(2, 30)}

    automations = served.api("POST", "/automations/filter", json={})
    names = {automation["name"] for automation in automations}
    assert {"postflows-crash-silent-runs", "postflows-retry-crashed-runs"} <= names  # made by serve
    (trigger,) = [a for a in automations if a["trigger"].get("expect") == [FILE_ARRIVED_EVENT]]
    assert trigger["enabled"] and trigger["trigger"]["match"] == {"prefect.resource.id": "*"}
    assert trigger["actions"][0]["deployment_id"] == served.deployment("file-arrived")["id"]


def test_prefect_deployment_run(served: ServedDeployments, tmp_path: Path) -> None:
    started = time.monotonic()
    done = served.run_deployment("address-query", query(tmp_path / "cli"))
    TRIGGER_TIMINGS["prefect deployment run --watch"] = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Completed" in done.stdout
    created = re.search(rf"UUID:\s*({UUID})", done.stdout)
    assert created is not None, done.stdout
    flow_run_id = created.group(1)
    run = served.api("GET", f"/flow_runs/{flow_run_id}")
    assert run["name"].startswith("address-query-address-batch.csv-")
    assert_completed_and_recorded(served, run, tmp_path / "cli")


def test_rest_trigger_with_an_idempotency_key_runs_once(served: ServedDeployments, tmp_path: Path) -> None:
    deployment_id = served.deployment("address-query")["id"]
    body = {"parameters": query(tmp_path / "rest"), "idempotency_key": f"crm-export-{uuid.uuid4()}"}
    before = {run["id"] for run in served.flow_runs("address-query")}
    started = time.monotonic()
    first = served.api("POST", f"/deployments/{deployment_id}/create_flow_run", json=body)
    second = served.api("POST", f"/deployments/{deployment_id}/create_flow_run", json=body)
    assert second["id"] == first["id"]
    run = served.wait_for_flow_run(first["id"])
    TRIGGER_TIMINGS["REST create_flow_run"] = time.monotonic() - started
    assert_completed_and_recorded(served, run, tmp_path / "rest")

    again = served.api("POST", f"/deployments/{deployment_id}/create_flow_run", json=body)
    assert again["id"] == first["id"] and again["state_type"] == "COMPLETED"
    assert {run["id"] for run in served.flow_runs("address-query")} - before == {first["id"]}


def test_run_deployment_from_python(served: ServedDeployments, tmp_path: Path) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", RUN_DEPLOYMENT, json.dumps(query(tmp_path / "python"))],
        env=served.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    TRIGGER_TIMINGS["run_deployment"] = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["state"] == "COMPLETED"
    assert_completed_and_recorded(
        served, served.api("GET", f"/flow_runs/{result['id']}"), tmp_path / "python"
    )


def test_a_file_arrived_event_runs_its_kind_on_the_file(served: ServedDeployments, tmp_path: Path) -> None:
    file = tmp_path / "sftp" / "kunden-maerz.csv"
    file.parent.mkdir()
    shutil.copy(EXAMPLE, file)
    started = time.monotonic()
    event_id = emit(served, {"path": str(file), "kind": "address-query"})
    dispatcher = dispatcher_run(served, event_id)
    assert dispatcher["state_type"] == "COMPLETED", dispatcher["state"]
    key = f"{FILE_ARRIVED_EVENT}:{event_id}:address-query"

    def started_run() -> dict[str, Any] | None:
        return next((run for run in served.flow_runs("address-query") if run["idempotency_key"] == key), None)

    run = served.wait_for_flow_run(wait_for(started_run, "the address-query run of the event", served)["id"])
    TRIGGER_TIMINGS["postflows.file.arrived event"] = time.monotonic() - started
    out = Path(run["parameters"]["output"]["output_dir"])
    assert run["parameters"]["request"]["input_path"] == str(file)
    assert out.parent == served.data_dir / "arrivals" and out.name.startswith("kunden-maerz-")
    assert run["name"].startswith("address-query-kunden-maerz.csv-")
    assert_completed_and_recorded(served, run, out)


def test_an_event_naming_an_unknown_kind_or_no_file_starts_nothing(
    served: ServedDeployments, tmp_path: Path
) -> None:
    # Through the Prefect CLI and from Python this time; the event gets its id there.
    emitted = subprocess.run(
        [
            PREFECT, "event", "emit", FILE_ARRIVED_EVENT, "--resource-id", "sftp.inbox.test",
            "--payload", json.dumps({"path": str(EXAMPLE), "kind": "adress-query"}),
        ],
        env=served.env,
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert emitted.returncode == 0, emitted.stderr
    (unknown_id,) = re.findall(UUID, " ".join(emitted.stdout.split()))
    from_python = subprocess.run(
        [
            sys.executable,
            "-c",
            EMIT_EVENT,
            json.dumps({"path": str(tmp_path / "not-there.csv"), "kind": "address-batch"}),
        ],
        env=served.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert from_python.returncode == 0, from_python.stderr
    missing_id = from_python.stdout.strip().splitlines()[-1]

    unknown, missing = dispatcher_run(served, unknown_id), dispatcher_run(served, missing_id)
    assert unknown["state_type"] == missing["state_type"] == "FAILED"
    assert "unknown kind 'adress-query'" in unknown["state"]["message"]
    assert f"no file at {tmp_path / 'not-there.csv'}; nothing was started" in missing["state"]["message"]
    keys = {
        run["idempotency_key"]
        for name in ("address-query", "address-batch")
        for run in served.flow_runs(name)
    }
    assert not any(unknown_id in str(key) or missing_id in str(key) for key in keys)


def test_the_readmes_automation_runs_the_next_flow_on_a_finished_batchs_file(
    served: ServedDeployments, tmp_path: Path
) -> None:
    """The README's "One flow after another", as written but for its output folder: a command's address
    batch ends with ``postflows.address-batch.finished``, and the automation runs the served
    ``deliverability-check`` deployment on the batch's input file."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## One flow after another") :].split("\n## ", 1)[0]
    (script,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    out = tmp_path / "deliverability"
    assert '"/data/deliverability"' in script
    created = subprocess.run(
        [sys.executable, "-c", script.replace('"/data/deliverability"', json.dumps(str(out)))],
        env=served.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert created.returncode == 0, created.stdout + created.stderr
    (automation,) = served.api(
        "POST", "/automations/filter", json={"automations": {"name": {"any_": [CHAINED]}}}
    )
    try:
        before = {run["id"] for run in served.flow_runs("deliverability-check")}
        batch = subprocess.run(
            [POSTFLOWS, "address-batch", str(EXAMPLE), "--out", str(tmp_path / "batch")],
            env=sandbox_cli_environment(tmp_path, served.api_url, job_seconds="0.5"),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert batch.returncode == 0, batch.stderr

        def chained() -> dict[str, Any] | None:
            # The server may still be evaluating an earlier test's batch event; its run names another file.
            runs = [
                run
                for run in served.flow_runs("deliverability-check")
                if run["id"] not in before and run["parameters"]["request"]["input_path"] == str(EXAMPLE)
            ]
            return runs[0] if runs else None

        run = served.wait_for_flow_run(
            wait_for(chained, "the deliverability run after the batch", served)["id"]
        )
        assert run["state_type"] == "COMPLETED", served.explain(run)
        assert {"deliverability.csv", "summary.md"} <= {path.name for path in out.iterdir()}
    finally:
        served.api("DELETE", f"/automations/{automation['id']}")
