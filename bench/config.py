"""Sizes and repeat counts of a benchmark run: the targets' full sizes, or small ones for ``--quick``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchConfig:
    """What one run measures; every benchmark reads its own sizes from here."""

    repeats: int = 3
    result_rows: int = 1_000_000
    upload_rows: int = 1_000_000
    xlsx_rows: int = 100_000
    xlsx_columns: int = 40
    xlsx_read_rows: int = 100_000
    review_rows: int = 100_000
    queries: int = 10_000
    serial_queries: int = 1_000
    query_concurrency: int = 32
    query_latency_s: float = 0.02
    limited_queries: int = 10_000
    queries_per_minute: int = 6000
    job_seconds: float = 3600.0  # simulated clock: an hour passes at once
    jobs: int = 3
    small_batch_rows: int = 40
    overhead_rows: int = 10_000
    batch_job_seconds: float = 1.0
    # The sandbox takes about a second to answer runbatch for 10,000 rows, so a job of a second or two ends
    # about when a status check arrives, found done or not by chance: the overhead is timed on a job done
    # at the first check, without waits between checks.
    overhead_job_seconds: float = 0.0
    # The flow benchmarks' shortest wait between status checks, both sides (bench/flow_runs.py).
    flow_poll_interval_s: float = 1.25
    # Deployment runs per side of the worker benchmarks (bench/worker_run.py): the address batch's and the
    # empty flow's, alternately, on one process worker.
    worker_runs: int = 5
    # Whether the worker benchmarks' deployments (both sides) start Prefect's engine directly, as an operator
    # sets with the job variable ``command`` (docs/performance.md), rather than through the process worker's
    # workspace supervisor, a process of its own before the engine's.
    worker_direct_engine: bool = False
    # The Prefect API the flow benchmarks run on; None starts a server of their own for the run.
    prefect_api_url: str | None = None
    openpyxl_reference: bool = True
    cli_repeats: int = 15  # the command-start benchmarks: short processes, so more rounds
    flow_import_repeats: int = (
        3  # rounds of importing every flow module in a fresh process (bench/flow_import.py)
    )
    flow_import_modules: int | None = None  # None: every flow module of the catalog; else the first N
    history_runs: int = 100_000
    report_runs: int = 1_000  # postflows report: runs over 24 months (bench/report.py)
    limits_columns: int = 5_000  # a CSV this wide is refused (POSTFLOWS_TABLE_MAX_COLUMNS, 1,000)
    long_line_mib: int = 200  # a file of one line this long is refused (POSTFLOWS_TABLE_MAX_LINE_BYTES)


FULL = BenchConfig()
QUICK = BenchConfig(
    repeats=3,
    result_rows=50_000,
    upload_rows=50_000,
    xlsx_rows=5_000,
    xlsx_read_rows=5_000,
    review_rows=5_000,
    queries=200,
    serial_queries=100,
    limited_queries=500,
    overhead_rows=1_000,
    jobs=3,
    cli_repeats=3,
    flow_import_repeats=1,
    history_runs=2_000,
    long_line_mib=20,
)
