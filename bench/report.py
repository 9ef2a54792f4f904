"""Benchmark: ``postflows report`` on a history of ``report_runs`` runs (SQLite) spread over 24 months, with
the summaries and remote jobs the flows record, timed end to end as a user waits for it: a fresh process
reading the history and writing report.xlsx, report.png and report.md. The target is absolute (at most 5 s),
so the value is the median time over it (≤ 1); the function the command calls
(:func:`flows.history_trends.build_history_report`), timed in this process, is reported beside it and must
meet the same bound.
"""

from __future__ import annotations

import datetime as dt
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.cli import _timed, postflows_command
from bench.config import BenchConfig
from bench.data import SEED
from bench.measure import BenchResult

NAME = "history_report"
TARGET_S = 5.0
MONTHS = 24
FIRST_DAY = dt.date(2025, 1, 1)
LAST_DAY = dt.date(2026, 12, 31)
# Flows in the proportions of a busy installation: mostly address batches, the rest spread over the APIs.
FLOWS = (
    ("address-batch", 0.4),
    ("address-query", 0.15),
    ("address-validation", 0.1),
    ("newspaper-order", 0.1),
    ("pickup-points", 0.1),
    ("cleanup", 0.15),
)
QSTAT = ("1", "2", "3", "4", "25", "26", "27", "50", "51", "K", "F")
QSTAT_WEIGHTS = (0.55, 0.1, 0.05, 0.06, 0.01, 0.01, 0.02, 0.04, 0.14, 0.01, 0.01)
JOBS = {"address-batch": ("upload-file", "output-file", "batch"), "newspaper-order": ("order",)}
API = {"address-batch": "address-service", "newspaper-order": "newspaper"}


def _summary(flow: str, rng: np.random.Generator, *, corrections_counted: bool) -> dict[str, Any]:
    """A summary as the flow records it: result rows with QSTAT counts and moves, accepted rows, …"""
    rows = int(rng.integers(50, 20_000))
    if flow in ("address-batch", "address-query"):
        counts = rng.multinomial(rows, QSTAT_WEIGHTS)
        summary: dict[str, Any] = {
            "accepted_rows": rows,
            "result_rows": rows,
            "qstat": {code: int(n) for code, n in zip(QSTAT, counts, strict=True) if n},
        }
        if flow == "address-batch":
            summary["moves"] = int(counts[QSTAT.index("4")])
        if corrections_counted:
            summary["corrected_rows"] = int(rows * rng.uniform(0.05, 0.2))
        return summary
    if flow == "address-validation":
        return {"input_rows": rows, "accepted_rows": rows, "validated": rows, "refused": 0}
    if flow == "newspaper-order":
        return {"order_id": int(rng.integers(10_000, 99_999)), "status": "DONE"}
    if flow == "pickup-points":
        return {"accepted_rows": rows, "locations": {"answered": rows}}
    return {"deleted": [], "already_gone": [], "not_deleted": {}, "kept": {}}


def record_history(url: str, count: int) -> dict[str, int]:
    """``count`` runs over :data:`MONTHS` months in the history at ``url`` (migrated by the history store,
    filled by bulk inserts), with the remote jobs their flows record; the corrected rows counted from the
    second year on only. Returns how many runs and jobs were written."""
    from sqlalchemy import insert

    import history

    rng = np.random.default_rng(SEED + 11)
    names = [name for name, _ in FLOWS]
    flows = rng.choice(names, size=count, p=[share for _, share in FLOWS])
    span = (LAST_DAY - FIRST_DAY).total_seconds() + 86_400
    offsets = np.sort(rng.uniform(0, span, size=count))
    start = dt.datetime.combine(FIRST_DAY, dt.time(), tzinfo=dt.UTC)
    counted_from = start + dt.timedelta(days=365)
    runs: list[dict[str, Any]] = []
    jobs: list[dict[str, Any]] = []
    for number, (flow, offset) in enumerate(zip(flows.tolist(), offsets.tolist(), strict=True), start=1):
        started = start + dt.timedelta(seconds=offset)
        failed = rng.random() < 0.05
        summary = None if failed else _summary(flow, rng, corrections_counted=started >= counted_from)
        runs.append(
            {
                "id": number,
                "flow": flow,
                "idempotency_key": f"key-{number}",
                "parameters": {"input_path": f"/data/in/{number}.csv"},
                "state": "FAILED" if failed else "COMPLETED",
                "started_at": started,
                "finished_at": started + dt.timedelta(minutes=3),
                "summary": summary,
            }
        )
        for kind in JOBS.get(flow, ()):
            jobs.append(
                {
                    "run_id": number,
                    "api": API[flow],
                    "kind": kind,
                    "remote_id": f"{kind}-{number}",
                    "status": "COMPLETED",
                    "data": {},
                    "created_at": started,
                    "updated_at": started,
                }
            )
    factory = history.session_factory(url)
    with factory.begin() as session:
        session.execute(insert(history.Run), runs)
        session.execute(insert(history.RemoteJob), jobs)
    history.dispose_engines(url)
    return {"runs": len(runs), "remote_jobs": len(jobs)}


def _build(url: str, out: Path) -> dict[str, Any]:
    """The report as ``postflows report`` builds it; its summary."""
    from deployments.catalog import flow_apis
    from flows.history_trends import build_history_report
    from flows.requests import HistoryReportRequest

    request = HistoryReportRequest(since=FIRST_DAY, until=LAST_DAY)
    return build_history_report(url, out, request, flow_apis=flow_apis(), today=LAST_DAY).summary()


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Time ``postflows report`` as a process, then the function it calls in this process."""
    database = workdir / "data" / "history.db"
    url = f"sqlite:///{database}"
    started = time.perf_counter()
    written = record_history(url, config.report_runs)
    build_s = time.perf_counter() - started
    command = [
        *postflows_command(), "report", "--since", FIRST_DAY.isoformat(), "--until", LAST_DAY.isoformat(),
        "--out", str(workdir / "report"),
    ]  # fmt: skip
    # bench.cli's processes have their data dir, and so the default history, in workdir.
    process_s = [_timed(command, workdir, 0) for _ in range(config.repeats)]
    function_s = []
    summary: dict[str, Any] = {}
    for _ in range(config.repeats):
        began = time.perf_counter()
        summary = _build(url, workdir / "report-function")
        function_s.append(time.perf_counter() - began)
    median = statistics.median(process_s)
    result = BenchResult(
        name=NAME,
        description="postflows report (a fresh process: read the history, write report.xlsx with charts, "
        f"report.png, report.md) over {MONTHS} months: median time ÷ {TARGET_S:g} s",
        size={"runs": written["runs"], "remote_jobs": written["remote_jobs"], "months": MONTHS},
        repeats=config.repeats,
        target=1.0,
        comparison="at_most",
        value=median / TARGET_S,
        value_label=f"median time / {TARGET_S:g} s target",
        candidate_s=process_s,
        info={
            "target_s": TARGET_S,
            "command_median_s": round(median, 3),
            "function_median_s (build_history_report, in this process)": round(
                statistics.median(function_s), 3
            ),
            "function_s": [round(s, 3) for s in function_s],
            "months": len(summary.get("months", [])),
            "address_runs": summary.get("address_runs"),
            "submissions": summary.get("submissions"),
            "database_mib": round(database.stat().st_size / 2**20, 2),
            "build_s (untimed)": round(build_s, 2),
        },
    )
    result.require(
        statistics.median(function_s) <= TARGET_S, f"build_history_report in at most {TARGET_S:g} s"
    )
    return result
