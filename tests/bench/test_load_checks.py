"""The load test's judgements on known inputs: the busiest minute of a request log, the p95, which runs count
as ended well, which logged requests are submissions, and the mix's throughput against the empty flow's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.load_checks import (
    against_empty,
    all_completed,
    busiest_minute,
    figures,
    outcomes,
    percentile,
    rate_limits,
    read_request_log,
)
from bench.load_runs import PlannedRun, plan_empty_runs, plan_runs


def _run(number: int, state: str, message: str = "") -> PlannedRun:
    run = PlannedRun(number, "address-batch", {})
    run.run = {"name": f"run-{number}", "state_type": state, "state_name": state.title(), "message": message}
    return run


def test_the_busiest_minute_counts_requests_within_60_s_both_ends_included() -> None:
    assert busiest_minute([]) == (0, None)
    assert busiest_minute([5.0, 0.0, 60.0, 60.5, 121.0]) == (3, 0.0)
    assert busiest_minute([0.0, 30.0, 61.0, 62.0, 89.0]) == (4, 30.0)


def test_the_p95_is_the_nearest_rank() -> None:
    assert percentile([], 0.95) is None
    assert percentile([float(n) for n in range(1, 21)], 0.95) == 19.0
    assert percentile([3.0], 0.95) == 3.0


def test_a_run_ends_well_completed_or_failed_with_a_typed_postflows_error() -> None:
    runs = [
        _run(0, "COMPLETED"),
        _run(1, "FAILED", "Flow run encountered an exception: RemoteRejected: the service refused"),
        _run(2, "FAILED", "Flow run encountered an exception: KeyError: 'x'"),
        _run(3, "CRASHED", "Flow run infrastructure exited with non-zero status code -9."),
        _run(4, "RUNNING"),
    ]
    found = outcomes(runs)
    assert found["passed"] is False
    assert found["states"] == {"COMPLETED": 1, "FAILED": 2, "CRASHED": 1, "RUNNING": 1}
    assert found["typed_failures"] == {"RemoteRejected": 1}
    assert [offender["run"] for offender in found["not_final_or_untyped"]] == ["run-2", "run-3", "run-4"]
    assert outcomes(runs[:2])["passed"] is True


def test_rate_limits_are_judged_per_api_from_the_request_log(tmp_path: Any) -> None:
    log = tmp_path / "requests.jsonl"
    lines = [f'{{"time": {t}, "api": "address", "method": "GET", "endpoint": "ping"}}' for t in (0, 1, 2, 70)]
    lines.append('{"time": 3, "api": "commerce", "method": "POST", "endpoint": "addresses/validation"}')
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    judged = rate_limits(read_request_log(log), {"address": 2, "commerce": 5, "newspaper": 5})
    assert judged["passed"] is False
    assert judged["per_api"]["address-service"]["busiest_60s"] == 3
    assert judged["per_api"]["address-service"]["held"] is False
    assert judged["per_api"]["commerce-api"]["held"] is True
    assert judged["per_api"]["newspaper-api"] == {
        "limit_per_minute": 5, "requests": 0, "busiest_60s": 0, "held": True, "busiest_window_starts_s": None,
    }  # fmt: skip


def test_each_planned_run_is_distinct_work(tmp_path: Any) -> None:
    planned = plan_runs(8, tmp_path, "stamp")
    assert [run.flow for run in planned[:4]] == ["address-batch", "address-query", "address-validation",
                                                 "newspaper-order"]  # fmt: skip
    keys = [run.key for run in planned if run.key]
    assert keys == ["load-stamp-0000", "load-stamp-0004"]
    inputs = [
        run.parameters["request"].get("input_path") or run.parameters["request"]["order_path"]
        for run in planned
    ]
    assert len({Path(path).read_text(encoding="utf-8") for path in inputs}) == 8


def test_every_empty_run_must_complete() -> None:
    runs = plan_empty_runs(3)
    assert [(run.flow, run.parameters, run.key) for run in runs] == [("empty", {}, None)] * 3
    for run, state in zip(runs, ("COMPLETED", "COMPLETED", "CRASHED"), strict=True):
        run.run = {"state_type": state}
    assert all_completed(runs) == {"passed": False, "states": {"COMPLETED": 2, "CRASHED": 1}}
    assert all_completed(runs[:2])["passed"] is True
    assert all_completed(plan_empty_runs(1)) == {"passed": False, "states": {"NOT CREATED": 1}}


def _timed(flow: str, created: float, ends: list[float]) -> list[PlannedRun]:
    runs = []
    for number, end in enumerate(ends):
        run = PlannedRun(number, flow, {}, created_at=created)
        run.run = {"state_type": "COMPLETED", "start_time": created + 1, "expected_start_time": created,
                   "end_time": end}  # fmt: skip
        runs.append(run)
    return runs


def test_the_mix_is_judged_against_the_empty_flows_runs_per_minute() -> None:
    mixed = figures(_timed("address-batch", 0.0, [30.0, 60.0]))  # 2 runs in 60 s: 2 a minute
    empty = figures(_timed("empty", 100.0, [110.0, 115.0, 120.0]))  # 3 in 20 s: 9 a minute
    assert (mixed["runs_per_minute"], empty["runs_per_minute"]) == (2.0, 9.0)
    judged = against_empty(mixed, empty)
    assert judged == {
        "empty_runs_per_minute": 9.0, "throughput_vs_empty": 0.222, "throughput_target": 0.6,
        "throughput_met": False,
    }  # fmt: skip
    assert against_empty(empty, mixed)["throughput_met"] is True
    nothing = figures([])
    assert against_empty(mixed, nothing)["throughput_vs_empty"] is None
    assert against_empty(mixed, nothing)["throughput_met"] is False
