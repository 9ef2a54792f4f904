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
    queries: int = 10_000
    query_concurrency: int = 32
    query_latency_s: float = 0.02
    job_seconds: float = 4.0
    jobs: int = 3
    openpyxl_reference: bool = True


FULL = BenchConfig()
QUICK = BenchConfig(
    repeats=3,
    result_rows=50_000,
    upload_rows=50_000,
    xlsx_rows=5_000,
    queries=200,
    job_seconds=1.0,
    jobs=3,
)
