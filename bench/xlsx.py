"""Benchmark 3: a 100,000-row results workbook through ``fileio.reports.write_xlsx`` (rustpy-xlsxwriter)
against a plain xlsxwriter constant-memory loop (target: at most 0.5× its time); pandas' ``to_excel``
(openpyxl) is timed once for information. Every write runs in its own process so its peak memory can be
reported. ``python -m bench.xlsx_writers`` compares the other writers the same way.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.config import BenchConfig
from bench.data import results_frame
from bench.measure import BenchResult, alternate_reported, ratio_result

NAME = "xlsx"
TARGET = 0.5
MEMORY_METHOD = (
    "RSS of a fresh process per write (/proc/self/status VmHWM, reset via /proc/self/clear_refs after "
    "loading the frame): peak during the write, and peak minus RSS at its start"
)


def _run_worker(variant: str, frame_path: Path, out: Path) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-m", "bench.xlsx_worker", variant, str(frame_path), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    out.unlink(missing_ok=True)
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def _memory_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    peaks = [run["peak_rss_bytes"] for run in runs]
    added = [run["write_rss_bytes"] for run in runs if run["write_rss_bytes"] is not None]
    return {
        "peak_rss_mib": round(statistics.median(peaks) / 2**20, 1),
        "write_rss_mib": round(statistics.median(added) / 2**20, 1) if added else None,
        "file_mib": round(runs[-1]["file_bytes"] / 2**20, 2),
    }


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Time ``write_xlsx`` against :func:`bench.xlsx_worker.write_plain_xlsxwriter`, alternately."""
    frame = results_frame(config.xlsx_rows, config.xlsx_columns)
    frame_path = workdir / "results-frame.pkl"
    frame.to_pickle(frame_path)
    runs: dict[str, list[dict[str, Any]]] = {"report": [], "xlsxwriter": []}

    def measured(variant: str) -> float:
        result = _run_worker(variant, frame_path, workdir / f"{variant}.xlsx")
        runs[variant].append(result)
        return float(result["seconds"])

    timings = alternate_reported(lambda: measured("report"), lambda: measured("xlsxwriter"), config.repeats)
    info: dict[str, Any] = {
        "memory_method": MEMORY_METHOD,
        "candidate_memory": _memory_summary(runs["report"]),
        "baseline_memory": _memory_summary(runs["xlsxwriter"]),
    }
    if config.openpyxl_reference:
        reference = _run_worker("openpyxl", frame_path, workdir / "openpyxl.xlsx")
        info["pandas_to_excel_openpyxl (one run, information)"] = {
            "seconds": round(reference["seconds"], 3),
            **_memory_summary([reference]),
        }
    return ratio_result(
        NAME,
        "fileio.reports.write_xlsx (rustpy-xlsxwriter) vs xlsxwriter constant_memory write_row loop",
        timings,
        size={"rows": config.xlsx_rows, "columns": frame.shape[1]},
        target=TARGET,
        comparison="at_most",
        info=info,
    )
