"""What the history keeps about an order's reports: the status they reflect, the order's folder and kind, and
the status history a new status is added to."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from connectors.newspaper import OrderStatus
from history.jobs import JobSnapshot
from tasks.newspaper.report_sweep import (
    folder_data,
    order_folder,
    recorded_kind,
    reports_current,
    reports_data,
    status_mark,
    with_status,
)

NOW = dt.datetime(2030, 6, 15, 10, 0, tzinfo=dt.UTC)


def status(value: str, date: str = "2030-06-15T08:00:00+02:00") -> OrderStatus:
    return OrderStatus.model_validate({"statusValue": value, "statusDate": date})


def job(**data: object) -> JobSnapshot:
    return JobSnapshot(
        id=1, api="newspaper", kind="order", remote_id="7000001", status="COMPLETED", progress=None, data=data
    )


def test_reports_are_current_only_at_the_same_value_and_date() -> None:
    loaded = status("LOADED")
    data = reports_data(loaded, now=NOW).changes()
    assert data == {
        "reports_status": {"statusValue": "LOADED", "statusDate": "2030-06-15T08:00:00+02:00"},
        "reports_fetched_at": "2030-06-15T10:00:00+00:00",
    }
    assert reports_current(data, status("LOADED"))
    assert not reports_current(data, status("DONE"))
    assert not reports_current(data, status("LOADED", "2030-06-16T08:00:00+02:00"))
    assert not reports_current({}, loaded)
    with_history = reports_data(loaded, history=[status_mark(loaded)], now=NOW).changes()
    assert with_history == {**data, "status_history": [status_mark(loaded)]}


def test_a_status_is_added_to_the_history_when_it_changed() -> None:
    first = with_status([], status("LOADED"), now=NOW)
    assert first == [{**status_mark(status("LOADED")), "recordedAt": NOW.isoformat()}]
    assert with_status(first, status("LOADED")) == first
    later = with_status(first, status("DONE", "2030-06-16T08:00:00+02:00"))
    assert [entry["statusValue"] for entry in later] == ["LOADED", "DONE"] and first == later[:1]


def test_the_order_folder_is_the_recorded_one_else_below_the_data_dir(tmp_path: Path) -> None:
    recorded = job(**folder_data(tmp_path / "order").changes())
    assert order_folder(tmp_path / "data", 7000001, recorded) == (tmp_path / "order").resolve()
    fallback = tmp_path / "data" / "newspaper-orders" / "7000001"
    assert order_folder(tmp_path / "data", 7000001, job()) == fallback
    assert order_folder(tmp_path / "data", 7000001, None) == fallback


def test_the_kind_is_the_recorded_one() -> None:
    assert recorded_kind(job(order_kind="gratis")) == "gratis"
    assert recorded_kind(job(order_kind="standard")) == "standard"
    assert recorded_kind(job()) is None and recorded_kind(job(order_kind="other")) is None
