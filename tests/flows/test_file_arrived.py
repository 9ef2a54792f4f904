"""The postflows.file.arrived dispatcher: every event starts it (whatever its resource id), it checks the
kind and the file, and starts the deployment named with the file and an arrival folder, once per event."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any

import pytest

from deployments.catalog import FILE_ARRIVED_EVENT, arrival_kinds, spec_named
from deployments.serve import build
from flows import file_arrived as dispatcher
from flows.file_arrived import ArrivalRefused, arrival_dir, file_arrived


class Started:
    id = "6f1c0f4e-0000-0000-0000-000000000001"
    name = "address-query-in.csv-20260302-081500"


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    async def fake_run_deployment(name: str, **kwargs: Any) -> Started:
        calls.append({"name": name, **kwargs})
        return Started()

    monkeypatch.setattr(dispatcher, "arun_deployment", fake_run_deployment)
    monkeypatch.setattr(dispatcher, "get_run_logger", lambda: logging.getLogger("file-arrived"))
    return calls


def test_every_file_arrived_event_triggers_the_dispatcher_with_its_payload() -> None:
    (trigger,) = build(spec_named("file-arrived")).triggers
    assert trigger.expect == {FILE_ARRIVED_EVENT}
    assert trigger.match.model_dump() == {"prefect.resource.id": "*"}
    assert trigger.parameters == {
        "path": '{{ event.payload.path | default("") }}',
        "kind": '{{ event.payload.kind | default("") }}',
        "event_id": "{{ event.id | string }}",
    }
    assert trigger.posture == "Reactive" and trigger.threshold == 1


def test_kinds_are_the_file_flows_by_command_and_deployment_name() -> None:
    kinds = arrival_kinds()
    assert kinds["address-batch"].name == "address-batch"
    assert kinds["deliverability"].name == kinds["deliverability-check"].name == "deliverability-check"
    assert kinds["pickup-register"].name == "pickup-registration"
    assert "newspaper-statistics" in kinds and "address-validation" in kinds
    assert "newspaper-order" not in kinds and "cleanup" not in kinds and "file-arrived" not in kinds


async def test_a_file_starts_its_deployment_once_per_event(
    started: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_DATA_DIR", str(tmp_path / "data"))
    file = tmp_path / "in" / "kunden mai.csv"
    file.parent.mkdir()
    file.write_text("x\n")
    result = await file_arrived.fn(path=str(file), kind="address-query", event_id="e-1")
    (call,) = started
    assert call["name"] == "address-query/address-query" and call["timeout"] == 0
    assert call["idempotency_key"] == f"{FILE_ARRIVED_EVENT}:e-1:address-query"
    assert call["parameters"]["request"]["input_path"] == str(file)
    output = Path(call["parameters"]["output"]["output_dir"])
    assert output.parent == tmp_path / "data" / "arrivals" and output.name.startswith("kunden mai-")
    assert result.flow_run_name == Started.name and result.deployment == "address-query/address-query"


@pytest.mark.parametrize(
    ("path", "kind", "message"),
    [
        ("{file}", "address-bach", "unknown kind 'address-bach': a file arriving can start address-batch, "),
        ("{file}", "", "unknown kind ''"),
        ("{file}", "cleanup", "unknown kind 'cleanup'"),
        ("{missing}", "address-batch", "no file at {missing}; nothing was started"),
        ("", "address-batch", "the event's payload has no path; nothing was started"),
        ("in.csv", "address-batch", "the path 'in.csv' is not absolute"),
        ("{folder}", "address-batch", "no file at {folder}"),
    ],
)
async def test_an_unknown_kind_or_a_missing_file_starts_nothing(
    started: list[dict[str, Any]], tmp_path: Path, path: str, kind: str, message: str
) -> None:
    file = tmp_path / "in.csv"
    file.write_text("x\n")
    names = {"file": str(file), "missing": str(tmp_path / "gone.csv"), "folder": str(tmp_path)}
    with pytest.raises(ArrivalRefused) as refused:
        await file_arrived.fn(path=path.format(**names), kind=kind, event_id="e-2")
    assert message.format(**names) in str(refused.value)
    assert started == []


def test_two_arrivals_of_one_name_in_one_second_get_two_folders(tmp_path: Path) -> None:
    now = dt.datetime(2026, 3, 2, 8, 15)
    first = arrival_dir(tmp_path, Path("/in/a.csv"), now=now)
    assert first == tmp_path / "arrivals" / "a-20260302-081500"
    first.mkdir(parents=True)
    assert arrival_dir(tmp_path, Path("/in/a.csv"), now=now).name == "a-20260302-081500-2"
