"""Benchmark 1: reading and decoding a result file of the service's output layout, against a plain
``pandas.read_csv`` of the same file (target: at most 0.3× its time, and a peak RSS of at most 1 GB, measured
once per side in a fresh process by :mod:`bench.result_file_worker`). Both sides run once untimed first, so
that neither side's imports are timed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from bench.config import BenchConfig
from bench.data import write_result_file
from bench.measure import BenchResult, alternate, ratio_result
from fileio.address_service.result_codes import decode_results
from fileio.address_service.result_file import read_result_file

NAME = "result_file"
TARGET = 0.3
PEAK_RSS_LIMIT_BYTES = 10**9


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Time ``read_result_file`` + ``decode_results`` against ``pd.read_csv(sep="\\t", dtype=str)``."""
    path = write_result_file(workdir / "result.txt", config.result_rows)
    shapes: dict[str, tuple[int, int]] = {}

    def candidate() -> None:
        shapes["candidate"] = decode_results(read_result_file(path)).shape

    def baseline() -> None:
        shapes["baseline"] = pd.read_csv(path, sep="\t", dtype=str, encoding="cp1252").shape

    # Each side once, untimed: the candidate's reader loads pyarrow when first used (fileio.lazy), while
    # pandas came with this module, so a first timed call would count one side's imports and not the other's.
    candidate()
    baseline()
    timings = alternate(candidate, baseline, config.repeats)
    # The same parse with object strings and no NA detection, as the candidate's reader does it: shows how
    # much of the baseline is pandas' str dtype rather than parsing.
    started = time.perf_counter()
    pd.read_csv(path, sep="\t", dtype=object, encoding="cp1252", keep_default_na=False, na_values=[])
    object_read_s = time.perf_counter() - started
    memory = {variant: _fresh_process(variant, path) for variant in ("candidate", "baseline")}
    return ratio_result(
        NAME,
        "read_result_file + decode_results vs pandas.read_csv(sep='\\t', dtype=str, encoding='cp1252')",
        timings,
        size={"rows": config.result_rows, "bytes": path.stat().st_size},
        target=TARGET,
        comparison="at_most",
        info={
            "candidate_shape": list(shapes["candidate"]),
            "baseline_shape": list(shapes["baseline"]),
            "read_csv_object_no_na_s (one run, information)": round(object_read_s, 4),
            "memory_method": "VmHWM of a fresh process, reset after its imports (bench.result_file_worker)",
            "candidate_peak_rss_mib": _mib(memory["candidate"]["peak_rss_bytes"]),
            "baseline_peak_rss_mib": _mib(memory["baseline"]["peak_rss_bytes"]),
            "peak_rss_limit_mib": _mib(PEAK_RSS_LIMIT_BYTES),
            "candidate_peak_rss_ok": memory["candidate"]["peak_rss_bytes"] <= PEAK_RSS_LIMIT_BYTES,
        },
    )


def _fresh_process(variant: str, path: Path) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-m", "bench.result_file_worker", variant, str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def _mib(value: int) -> float:
    return round(value / 2**20, 1)
