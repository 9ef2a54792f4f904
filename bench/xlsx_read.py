"""Benchmark: reading a customer's 100,000-row .xlsx address workbook as the flows do
(``fileio.tables.read_table``: every cell as text, rows numbered, checked) against openpyxl's read-only
mode iterating the same sheet's values (target: at most 0.25× its time). The reader before, pandas'
``read_excel`` with openpyxl, is timed once for information.
"""

from __future__ import annotations

import time
from pathlib import Path

import openpyxl
import pandas as pd

from bench.config import BenchConfig
from bench.data import write_address_workbook
from bench.measure import BenchResult, alternate, ratio_result
from fileio.tables import read_table

NAME = "xlsx_read"
TARGET = 0.25


def read_plain_openpyxl(path: Path) -> list[tuple[object, ...]]:
    """The baseline: every row of the first sheet as values, openpyxl in read-only mode."""
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        return list(workbook.worksheets[0].iter_rows(values_only=True))
    finally:
        workbook.close()


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Time ``read_table`` against :func:`read_plain_openpyxl`, alternately."""
    path = write_address_workbook(workdir / "addresses.xlsx", config.xlsx_read_rows)
    shapes: dict[str, list[int]] = {}

    def candidate() -> None:
        shapes["candidate"] = list(read_table(path).frame.shape)

    def baseline() -> None:
        rows = read_plain_openpyxl(path)
        shapes["baseline"] = [len(rows) - 1, len(rows[0])]  # the header is a row of the sheet

    timings = alternate(candidate, baseline, config.repeats)
    info: dict[str, object] = {
        "candidate_shape": shapes["candidate"],
        "baseline_shape": shapes["baseline"],
        "file_mib": round(path.stat().st_size / 2**20, 2),
    }
    if config.openpyxl_reference:
        started = time.perf_counter()
        pd.read_excel(path, header=None, dtype=str, keep_default_na=False, na_values=[], engine="openpyxl")
        info["pandas_read_excel_openpyxl_s (the reader before, one run, information)"] = round(
            time.perf_counter() - started, 3
        )
    return ratio_result(
        NAME,
        "fileio.tables.read_table (python-calamine) vs openpyxl read_only iter_rows(values_only=True)",
        timings,
        size={"rows": config.xlsx_read_rows, "columns": shapes["candidate"][1]},
        target=TARGET,
        comparison="at_most",
        info=info,
    )
