"""Benchmark: files over the limits on a table file's shape, refused before anything is allocated for them.
``read_table`` refusing a CSV of 5,000 columns is timed against ``pandas.read_csv`` merely parsing it (target:
at most 0.1× its time); besides, a fresh process (:mod:`bench.table_limits_worker`) refuses that CSV, a
workbook of a few kilobytes with one cell at XFD2000 and a file of one 200 MB line, each in at most 2 s and
with a peak RSS of at most 500 MB.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd

from bench.config import BenchConfig
from bench.measure import BenchResult, alternate, ratio_result
from fileio.errors import InputError
from fileio.tables import read_table

NAME = "table_limits"
TARGET = 0.1
REFUSAL_LIMIT_S = 2.0
PEAK_RSS_LIMIT_MIB = 500.0
HEADER = ["Name", "Prename", "Streetname", "HouseNo", "ZIPCode", "TownName"]


def write_wide_csv(path: Path, columns: int, rows: int = 3) -> Path:
    """An address CSV of ``columns`` columns (the address ones and empty ones after them)."""
    header = HEADER + [f"c{number}" for number in range(columns - len(HEADER))]
    row = ["Muster", "Hans", "Weg", "1", "3000", "Bern"] + [""] * (columns - len(HEADER))
    path.write_text("\n".join([",".join(header), *[",".join(row)] * rows]) + "\n", encoding="utf-8")
    return path


def write_far_cell_workbook(path: Path, row: int = 2000) -> Path:
    """An address workbook of a few kilobytes whose one far cell, at XFD``row``, spans a grid of millions."""
    book = openpyxl.Workbook()
    book.active.append(HEADER)
    book.active.append(["Muster", "Hans", "Weg", "1", "3000", "Bern"])
    book.active.cell(row=row, column=16384, value="x")
    book.save(path)
    return path


def write_long_line(path: Path, mib: int) -> Path:
    """An address CSV whose first data line is ``mib`` MiB long."""
    with path.open("wb") as handle:
        handle.write(",".join(HEADER).encode() + b"\n")
        block = b"x" * (1 << 20)
        for _ in range(mib):
            handle.write(block)
        handle.write(b"\n")
    return path


def _refused(path: Path) -> None:
    try:
        read_table(path)
    except InputError:
        return
    raise RuntimeError(f"{path} was read, not refused")


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Time the refusal of the wide CSV against pandas parsing it; refuse every file in a fresh process."""
    wide = write_wide_csv(workdir / "wide.csv", config.limits_columns)
    files = [
        wide,
        write_far_cell_workbook(workdir / "far-cell.xlsx"),
        write_long_line(workdir / "long-line.csv", config.long_line_mib),
    ]
    shapes: dict[str, list[int]] = {}

    def baseline() -> None:
        shapes["baseline"] = list(pd.read_csv(wide, dtype=str).shape)

    timings = alternate(lambda: _refused(wide), baseline, config.repeats)
    fresh = _fresh_process(files)
    result = ratio_result(
        NAME,
        f"read_table refusing a CSV of {config.limits_columns:,} columns (POSTFLOWS_TABLE_MAX_COLUMNS) vs "
        "pandas.read_csv(dtype=str) parsing it",
        timings,
        size={"columns": config.limits_columns, "long_line_mib": config.long_line_mib},
        target=TARGET,
        comparison="at_most",
        info={
            "baseline_shape": shapes["baseline"],
            "memory_method": "VmHWM of a fresh process, reset after its imports (bench.table_limits_worker)",
            "refusals (fresh process)": fresh,
            "refusal_limit_s": REFUSAL_LIMIT_S,
            "peak_rss_limit_mib": PEAK_RSS_LIMIT_MIB,
        },
    )
    for name, found in fresh.items():
        result.require(found["seconds"] <= REFUSAL_LIMIT_S, f"{name} refused in at most {REFUSAL_LIMIT_S} s")
        result.require(
            found["peak_rss_mib"] <= PEAK_RSS_LIMIT_MIB, f"{name} refused within {PEAK_RSS_LIMIT_MIB:.0f} MiB"
        )
    return result


def _fresh_process(files: list[Path]) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-m", "bench.table_limits_worker", *map(str, files)],
        check=True,
        capture_output=True,
        text=True,
    )
    found: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return found
