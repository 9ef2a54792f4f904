"""Benchmark: a review workbook of 100,000 rows × 25 columns, three rows in ten annotated (corrected cells
filled and noted, rows that need a human filled with a note on their reason), and a chart sheet, written by
``fileio.annotated_workbooks.write_annotated_xlsx`` (rustpy-xlsxwriter, its package completed) against
xlsxwriter writing the same workbook cell by cell (``write_annotated_xlsx_plain``: constant-memory mode,
which keeps comments). Target: at most 0.5× xlsxwriter's time, and under 10 s.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from bench.config import BenchConfig
from bench.data import NAMES, PRENAMES, SEED, STREETS, TOWNS
from bench.measure import BenchResult, alternate, ratio_result
from fileio.address_service.corrections import classify
from fileio.address_service.result_codes import qstat_summary
from fileio.address_service.review import review_sheet as build_review
from fileio.address_service.review import write_review
from fileio.annotated_workbooks import AnnotatedSheet, write_annotated_xlsx, write_annotated_xlsx_plain
from fileio.workbook_charts import Chart

NAME = "review_xlsx"
TARGET = 0.5
SECONDS_TARGET = 10.0  # the absolute bound at the full size (100,000 rows)
FULL_ROWS = 100_000
FIELDS = ("Streetname", "HouseNo", "HouseNoAddition", "ZIPCode", "ZIPAddition", "TownName", "PoBoxTerm",
          "PoBoxNo", "PoBoxZIP")  # fmt: skip
REASONS = (
    "moved (QSTAT 4)",
    "moved abroad (QSTAT 26)",
    "person unknown (QSTAT 50)",
    "address unknown (QSTAT 51)",
)
MARKS = ("2 spelling standardized", "3 changed", "4 supplemented")
FILLS = {"changed": "#FFEB9C", "human": "#FFC7CE"}
CORRECTED_SHARE, HUMAN_SHARE = 0.2, 0.1


def review_sheet(rows: int, *, seed: int = SEED) -> AnnotatedSheet:
    """A review sheet like the address batch's: ids, names, nine address fields as given and as corrected,
    QSTAT and its designation, the reason a human is needed; a fifth of the rows with one to three corrected
    cells (filled, noted), a tenth needing a human (row filled, reason noted)."""
    rng = np.random.default_rng(seed)

    def pick(values: tuple[str, ...]) -> np.ndarray:
        return np.asarray(values, dtype=object)[rng.integers(0, len(values), rows)]

    columns: dict[str, object] = {
        "RecordId": np.arange(1, rows + 1),
        "KundenNr": np.char.add("K", np.arange(rows).astype(str)).astype(object),
        "Prename": pick(PRENAMES),
        "Name": pick(NAMES),
    }
    values = {"Streetname": STREETS, "TownName": tuple(town for _, town in TOWNS)}
    for field in FIELDS:
        given = pick(values.get(field, ("1", "12a", "", "3300", "Postfach")))
        columns[f"{field} given"] = given
        columns[f"{field} corrected"] = given.copy()
    kind = rng.random(rows)
    human = kind < HUMAN_SHARE
    corrected = (kind >= HUMAN_SHARE) & (kind < HUMAN_SHARE + CORRECTED_SHARE)
    reasons = np.where(human, pick(REASONS), "")
    columns.update(
        QSTAT=np.where(human, "4", "1"), Designation=np.where(human, "Relocation hit", "Person hit")
    )
    columns["Needs a human"] = reasons.astype(object)
    frame = pd.DataFrame(columns)
    # One to three corrected fields per corrected row: the fields of the lowest random ranks.
    corrected_rows = np.flatnonzero(corrected)
    counts = rng.integers(1, 4, len(corrected_rows))
    ranks = rng.random((len(corrected_rows), len(FIELDS))).argsort(axis=1).argsort(axis=1)
    chosen_rows, chosen_fields = np.nonzero(ranks < counts[:, None])
    cell_rows = corrected_rows[chosen_rows].tolist()
    cell_columns = [f"{FIELDS[field]} corrected" for field in chosen_fields.tolist()]
    for number, field in enumerate(FIELDS):
        rows_of_field = corrected_rows[chosen_rows[chosen_fields == number]]
        given = frame[f"{field} given"].to_numpy()[rows_of_field]
        frame.loc[rows_of_field, f"{field} corrected"] = [f"{value}-neu" for value in given.tolist()]
    notes = np.asarray(MARKS, dtype=object)[rng.integers(0, len(MARKS), len(cell_rows))].tolist()
    flagged = np.flatnonzero(human).tolist()
    cells = pd.DataFrame(
        {
            "row": cell_rows + flagged,
            "column": cell_columns + ["Needs a human"] * len(flagged),
            "fill": ["changed"] * len(cell_rows) + [None] * len(flagged),
            "note": notes + reasons[flagged].tolist(),
        }
    )
    return AnnotatedSheet(
        "Review",
        frame,
        fills=FILLS,
        cells=cells,
        rows=pd.DataFrame({"row": flagged, "fill": "human"}),
        header_notes={"Needs a human": "why a person has to look at the row"},
    )


def chart_sheets(sheet: AnnotatedSheet) -> tuple[dict[str, pd.DataFrame], dict[str, list[Chart]]]:
    """A sheet of the rows per reason a human is needed, with its chart."""
    counts = sheet.frame["Needs a human"].value_counts()
    table = pd.DataFrame({"Reason": list(REASONS), "Rows": [int(counts.get(r, 0)) for r in REASONS]})
    return {"Needs a human": table}, {"Needs a human": [Chart("Rows that need a human", "Reason", ("Rows",))]}


def merged_results(rows: int, *, seed: int = SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Merged batch results as the flow has them (the service's address beside the one given, QSTAT, the
    ShortReport) with about a fifth of the hits corrected in one field, and the QSTAT summary."""
    rng = np.random.default_rng(seed)
    qstats = np.asarray(["1", "1", "1", "1", "2", "3", "4", "25", "27", "50", "51"], dtype=object)
    qstat = qstats[rng.integers(0, len(qstats), rows)]
    towns = rng.integers(0, len(TOWNS), rows)
    given = {
        "Streetname": np.asarray(STREETS, dtype=object)[rng.integers(0, len(STREETS), rows)],
        "HouseNo": rng.integers(1, 200, rows).astype(str).astype(object),
        "ZIPCode": np.asarray([zip_code for zip_code, _ in TOWNS], dtype=object)[towns],
        "TownName": np.asarray([town for _, town in TOWNS], dtype=object)[towns],
    }
    corrected = {field: values.copy() for field, values in given.items()}
    report = np.full((rows, 24), "1", dtype="<U1")
    fixed = (rng.random(rows) < 0.2) & np.isin(qstat, ["1", "2", "3", "4"])
    for number, (field, position) in enumerate((("Streetname", 7), ("TownName", 13))):
        chosen = fixed & (rng.integers(0, 2, rows) == number)
        corrected[field][chosen] = [f"{value}-neu" for value in given[field][chosen].tolist()]
        report[chosen, position] = "3"
    merged = pd.DataFrame(
        {
            "RecordId": np.arange(1, rows + 1),
            "KundenNr": np.char.add("K", np.arange(rows).astype(str)).astype(object),
            "ReturnedByService": True,
            "QSTAT": qstat,
            "ShortReport": report.view("<U24").ravel().astype(object),
            **corrected,
            **{f"{field}_in": values for field, values in given.items()},
        }
    )
    return merged, qstat_summary(merged)


def review_end_to_end(merged: pd.DataFrame, summary: pd.DataFrame, path: Path) -> None:
    """The review as the flow makes it: the corrections found, the review's rows, the workbook written."""
    corrections = classify(merged)
    ids = pd.Series(merged["KundenNr"].to_numpy(), index=corrections.given.index)
    rejected = pd.DataFrame({"KundenNr": [], "line": [], "row": [], "problems": [], "values": []})
    sheet = build_review(
        corrections, rejected, policy="corrections", written=corrections.applied("corrections"), ids=ids,
        id_header="KundenNr",
    )  # fmt: skip
    write_review(path, sheet, summary, corrections, rejected_rows=0)


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Time the fast writer against xlsxwriter on the same review workbook, alternately."""
    sheet = review_sheet(config.review_rows)
    sheets, charts = chart_sheets(sheet)
    fast, plain = workdir / "fast.xlsx", workdir / "plain.xlsx"
    timings = alternate(
        lambda: write_annotated_xlsx(fast, sheet, sheets=sheets, charts=charts),
        lambda: write_annotated_xlsx_plain(plain, sheet, sheets=sheets, charts=charts),
        config.repeats,
    )
    assert sheet.cells is not None and sheet.rows is not None
    result = ratio_result(
        NAME,
        "fileio.annotated_workbooks.write_annotated_xlsx (rustpy-xlsxwriter, package completed) vs "
        f"xlsxwriter constant_memory, per-cell formats and write_comment; and under {SECONDS_TARGET:g} s "
        f"at {FULL_ROWS:,} rows",
        timings,
        size={"rows": config.review_rows, "columns": sheet.frame.shape[1]},
        target=TARGET,
        comparison="at_most",
        info={
            "notes": int(sheet.cells["note"].notna().sum()),
            "filled_cells": int(sheet.cells["fill"].notna().sum()),
            "filled_rows": len(sheet.rows),
            "candidate_file_mib": round(fast.stat().st_size / 2**20, 2),
            "baseline_file_mib": round(plain.stat().st_size / 2**20, 2),
        },
    )
    candidate = statistics.median(timings.candidate)
    merged, summary = merged_results(config.review_rows)
    whole = statistics.median(
        measured(lambda: review_end_to_end(merged, summary, workdir / "review.xlsx"))
        for _ in range(config.repeats)
    )
    result.info["review_from_results_s (classify + review rows + write_review, median)"] = round(whole, 3)
    if config.review_rows >= FULL_ROWS:
        result.info["seconds_bound"] = {
            "bound_s": SECONDS_TARGET,
            "candidate_median_s": round(candidate, 3),
            "review_from_results_median_s": round(whole, 3),
        }
        result.require(candidate < SECONDS_TARGET, f"candidate median {candidate:.2f} s < {SECONDS_TARGET} s")
        result.require(whole < SECONDS_TARGET, f"review from results {whole:.2f} s < {SECONDS_TARGET} s")
    return result


def measured(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started
