"""The load test's checks and figures, read from the Prefect API's last reading of each run, the run history
database and the sandbox's request log:

* ``outcomes``: every run Completed, or Failed with a typed postflows error (a subclass of
  ``PostflowsError`` named in its state message); none Crashed, Cancelled or still going;
* ``exactly_once``: no idempotency key submitted twice: per key at most one recorded submission (remote
  jobs ``batch`` / ``order`` in the history), and as many submitting requests in the request log (POST
  runbatch, POST orders/standard, answered 2xx and not refused by an injected fault before processing) as
  distinct keys;
* ``rate_limits``: per API, the most requests in any sliding 60 s window of the request log at most its
  per-minute limit;
* ``empty_runs``: every run of the empty flow (as many, after the mix, through the same workers) Completed;
* figures: runs per minute (completed runs over the wall time from the first creation to the last end),
  start latency (start time − expected start time) median, p95 and max, and the mix's runs per minute
  against the empty flow's (:func:`against_empty`: at least :data:`THROUGHPUT_TARGET` of it).
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from bench.load_runs import FINAL_STATES, PlannedRun

SUBMISSION_KINDS = ("batch", "order")
SUBMITTING = {("address", "POST", "runbatch"), ("newspaper", "POST", "orders/standard")}
# Faults answered before the request reached the API: such a request was not processed.
NOT_PROCESSED_FAULTS = frozenset({"http_status", "drop", "hold"})
LOG_APIS = {"address": "address-service", "newspaper": "newspaper-api", "commerce": "commerce-api"}
EXCEPTION_IN_MESSAGE = re.compile(r"exception: (?:[\w.]+\.)?(\w+)")
THROUGHPUT_TARGET = 0.6
"""The mix's runs per minute as a share of the empty flow's that the load test aims at."""


def typed_errors() -> frozenset[str]:
    """The names of postflows' error classes (every subclass of ``PostflowsError`` the flows can raise)."""
    import flows.address_batch
    import flows.address_query
    import flows.address_validation
    import flows.newspaper_order  # noqa: F401 - importing them defines every error they raise
    from core.errors import PostflowsError

    names, pending = set(), [PostflowsError]
    while pending:
        kind = pending.pop()
        names.add(kind.__name__)
        pending.extend(kind.__subclasses__())
    return frozenset(names)


def outcomes(planned: list[PlannedRun]) -> dict[str, Any]:
    """Check 1: how the runs ended, by state and flow; the runs that are neither Completed nor Failed with
    a typed error."""
    typed = typed_errors()
    states: Counter[str] = Counter()
    by_flow: dict[str, Counter[str]] = {}
    failures: Counter[str] = Counter()
    offenders = []
    for run in planned:
        state = run.run.get("state_type") or "NOT CREATED"
        states[state] += 1
        by_flow.setdefault(run.flow, Counter())[state] += 1
        if state == "COMPLETED":
            continue
        found = EXCEPTION_IN_MESSAGE.search(run.run.get("message", ""))
        error = found.group(1) if found else None
        if state == "FAILED" and error in typed:
            failures[error or ""] += 1
            continue
        offenders.append(
            {"run": run.run.get("name"), "flow": run.flow, "state": run.run.get("state_name") or state,
             "message": run.run.get("message", "")[:300]}
        )  # fmt: skip
    return {
        "passed": not offenders and states["COMPLETED"] + sum(failures.values()) == len(planned),
        "states": dict(states),
        "by_flow": {flow: dict(counts) for flow, counts in sorted(by_flow.items())},
        "typed_failures": dict(failures),
        "not_final_or_untyped": offenders,
    }


def all_completed(planned: list[PlannedRun]) -> dict[str, Any]:
    """Check of the empty flow's runs: every one Completed (it does nothing that could fail)."""
    states = Counter(run.run.get("state_type") or "NOT CREATED" for run in planned)
    return {"passed": states["COMPLETED"] == len(planned), "states": dict(states)}


def read_request_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _submitting(entry: dict[str, Any]) -> bool:
    endpoint = str(entry["endpoint"])
    return (
        any(
            entry["api"] == api
            and entry["method"] == method
            and (endpoint == path or endpoint.endswith("/" + path))
            for api, method, path in SUBMITTING
        )
        and entry.get("fault") not in NOT_PROCESSED_FAULTS
        and 200 <= int(entry.get("status") or 0) < 300
    )


def exactly_once(history_url: str, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Check 2: submissions per idempotency key in the run history, against the request log."""
    from sqlalchemy import select

    import history
    from history.models import RemoteJob

    try:
        with history.session_factory(history_url)() as session:
            jobs = session.execute(
                select(RemoteJob.api, RemoteJob.kind, RemoteJob.idempotency_key).where(
                    RemoteJob.kind.in_(SUBMISSION_KINDS)
                )
            ).all()
    finally:
        history.dispose_engines(history_url)
    per_key = Counter((api, kind, key) for api, kind, key in jobs)
    twice = sorted(f"{api}/{kind}/{key}: {count}" for (api, kind, key), count in per_key.items() if count > 1)
    unkeyed = sum(1 for _, _, key in jobs if key is None)
    sent = sum(1 for entry in requests if _submitting(entry))
    keys = len(per_key)
    return {
        "passed": not twice and unkeyed == 0 and sent == keys,
        "distinct_keys": keys,
        "recorded_submissions": len(jobs),
        "submitting_requests_in_log": sent,
        "keys_submitted_twice": twice,
        "submissions_without_key": unkeyed,
        "by_kind": dict(Counter(kind for _, kind, _ in jobs)),
    }


def busiest_minute(times: list[float], window_s: float = 60.0) -> tuple[int, float | None]:
    """The most of ``times`` within any window of ``window_s`` seconds (closed at both ends), and where
    that window starts."""
    ordered = sorted(times)
    most, start, low = 0, None, 0
    for high, moment in enumerate(ordered):
        while moment - ordered[low] > window_s:
            low += 1
        if high - low + 1 > most:
            most, start = high - low + 1, ordered[low]
    return most, start


def rate_limits(requests: list[dict[str, Any]], limits: dict[str, int]) -> dict[str, Any]:
    """Check 3: per API (``limits`` by request-log API name), the busiest 60 s window against its limit."""
    per_api: dict[str, Any] = {}
    for api, limit in limits.items():
        times = [float(entry["time"]) for entry in requests if entry["api"] == api]
        most, start = busiest_minute(times)
        per_api[LOG_APIS[api]] = {
            "limit_per_minute": limit,
            "requests": len(times),
            "busiest_60s": most,
            "held": limit <= 0 or most <= limit,
            "busiest_window_starts_s": None if start is None or not times else round(start - min(times), 1),
        }
    return {"passed": all(api["held"] for api in per_api.values()), "per_api": per_api}


def percentile(values: list[float], fraction: float) -> float | None:
    """The nearest-rank percentile (``fraction`` 0.95 = p95); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def figures(planned: list[PlannedRun]) -> dict[str, Any]:
    """Throughput and start latency of the runs."""
    created = [run.created_at for run in planned if run.created_at is not None]
    ends = [run.run["end_time"] for run in planned if run.run.get("end_time") is not None]
    completed = sum(1 for run in planned if run.run.get("state_type") == "COMPLETED")
    final = sum(1 for run in planned if run.run.get("state_type") in FINAL_STATES)
    wall = (max(ends) - min(created)) if created and ends else None
    latencies = [
        run.run["start_time"] - run.run["expected_start_time"]
        for run in planned
        if run.run.get("start_time") is not None and run.run.get("expected_start_time") is not None
    ]
    durations: dict[str, list[float]] = {}
    for run in planned:
        if run.run.get("start_time") is not None and run.run.get("end_time") is not None:
            durations.setdefault(run.flow, []).append(run.run["end_time"] - run.run["start_time"])
    return {
        "wall_s": None if wall is None else round(wall, 1),
        "completed_runs": completed,
        "final_runs": final,
        "runs_per_minute": None if not wall else round(completed / wall * 60, 1),
        "start_latency_s": {
            "median": _rounded(statistics.median(latencies) if latencies else None),
            "p95": _rounded(percentile(latencies, 0.95)),
            "max": _rounded(max(latencies) if latencies else None),
            "runs": len(latencies),
        },
        "median_run_s": {
            flow: _rounded(statistics.median(times)) for flow, times in sorted(durations.items())
        },
    }


def against_empty(
    mixed: dict[str, Any], empty: dict[str, Any], target: float = THROUGHPUT_TARGET
) -> dict[str, Any]:
    """The mix's runs per minute against the empty flow's (both :func:`figures`), and whether the mix
    reaches ``target`` of it."""
    ratio = None
    if mixed["runs_per_minute"] and empty["runs_per_minute"]:
        ratio = round(mixed["runs_per_minute"] / empty["runs_per_minute"], 3)
    return {
        "empty_runs_per_minute": empty["runs_per_minute"],
        "throughput_vs_empty": ratio,
        "throughput_target": target,
        "throughput_met": ratio is not None and ratio >= target,
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def run_rows(planned: list[PlannedRun]) -> list[dict[str, Any]]:
    """One short line of each run for the results file: flow, name, state, start latency, run time."""
    rows = []
    for run in planned:
        seen = run.run
        start, expected, end = seen.get("start_time"), seen.get("expected_start_time"), seen.get("end_time")
        rows.append(
            {
                "number": run.number,
                "flow": run.flow,
                "name": seen.get("name"),
                "state": seen.get("state_name"),
                "start_latency_s": None if start is None or expected is None else round(start - expected, 2),
                "run_s": None if start is None or end is None else round(end - start, 2),
            }
        )
    return rows
