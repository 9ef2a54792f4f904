"""Benchmark 1: reading and decoding a result file of the service's output layout, against a plain
``pandas.read_csv`` of the same file (target: at most 3× its time).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from bench.config import BenchConfig
from bench.data import write_result_file
from bench.measure import BenchResult, alternate, ratio_result
from tasks.address_service.results import decode_results, read_result_file

NAME = "result_file"
TARGET = 3.0


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Time ``read_result_file`` + ``decode_results`` against ``pd.read_csv(sep="\\t", dtype=str)``."""
    path = write_result_file(workdir / "result.txt", config.result_rows)
    shapes: dict[str, tuple[int, int]] = {}

    def candidate() -> None:
        shapes["candidate"] = decode_results(read_result_file(path)).shape

    def baseline() -> None:
        shapes["baseline"] = pd.read_csv(path, sep="\t", dtype=str, encoding="cp1252").shape

    timings = alternate(candidate, baseline, config.repeats)
    # The same parse with object strings and no NA detection, as the candidate's reader does it: shows how
    # much of the baseline is pandas' str dtype rather than parsing.
    started = time.perf_counter()
    pd.read_csv(path, sep="\t", dtype=object, encoding="cp1252", keep_default_na=False, na_values=[])
    object_read_s = time.perf_counter() - started
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
        },
    )
