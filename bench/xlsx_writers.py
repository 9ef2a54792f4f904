"""``python -m bench.xlsx_writers``: the maintained .xlsx writers side by side on the benchmark's results
frame (100,000 rows × 40 columns), each write in a fresh process, the writers in turn and the order
rotated every round; prints a markdown table of medians (with versions, peak memory and whether text that
looks like a formula stays text) and writes it as JSON. Not part of ``make bench``: xlsxwriter alone takes
most of a minute a write here.

pyexcelerate and polars are no dependencies of the project, only its extra ``xlsx-writers``: install them
to include them (``pip install -e '.[dev,xlsx-writers]'``); a writer that is not installed is listed as such.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import statistics
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd

from bench import xlsx_worker
from bench.config import FULL
from bench.data import results_frame
from bench.xlsx import _run_worker

# Variant of bench.xlsx_worker, what it is, the distribution that gives its version, the module it needs.
WRITERS: tuple[tuple[str, str, str, str], ...] = (
    ("report", "fileio.reports.write_xlsx (rustpy-xlsxwriter, header style, widths, panes, filter)",
     "rustpy-xlsxwriter", "rustpy_xlsxwriter"),
    ("rustpy", "rustpy-xlsxwriter write_worksheet(frame), no styling", "rustpy-xlsxwriter",
     "rustpy_xlsxwriter"),
    ("xlsxwriter", "xlsxwriter constant_memory, write_row per row (the baseline)", "xlsxwriter",
     "xlsxwriter"),
    ("xlsxwriter_cells", "xlsxwriter constant_memory, write_string/number/boolean per cell", "xlsxwriter",
     "xlsxwriter"),
    ("pyexcelerate", "pyexcelerate Workbook.new_sheet(data=rows)", "pyexcelerate", "pyexcelerate"),
    ("polars", "polars DataFrame.write_excel (xlsxwriter underneath)", "polars", "polars"),
    ("openpyxl", "pandas DataFrame.to_excel(engine='openpyxl')", "openpyxl", "openpyxl"),
)  # fmt: skip
DEFAULT_OUT = Path("bench/xlsx_writers.json")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.xlsx_writers", description=__doc__)
    parser.add_argument("--rows", type=int, default=FULL.xlsx_rows)
    parser.add_argument("--columns", type=int, default=FULL.xlsx_columns)
    parser.add_argument("--repeats", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--only", action="append", choices=[name for name, *_ in WRITERS])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser.parse_args(argv)


def keeps_formula_text(variant: str, directory: Path) -> bool:
    """Whether the writer writes the text ``=1+1`` as text (not as a formula)."""
    frame = pd.DataFrame({"Text": ["=1+1"]})
    frame_path = directory / "probe.pkl"
    frame.to_pickle(frame_path)
    out = directory / f"probe-{variant}.xlsx"
    xlsx_worker.measure(variant, frame_path, out)
    workbook = openpyxl.load_workbook(out)
    try:
        return bool(workbook.worksheets[0]["A2"].data_type == "s")
    finally:
        workbook.close()


def compare(rows: int, columns: int, repeats: int, names: Sequence[str]) -> dict[str, Any]:
    """Run the writers in turn ``repeats`` times; returns the comparison document."""
    available = [name for name in names if importlib.util.find_spec(_module(name)) is not None]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in available}
    with tempfile.TemporaryDirectory(prefix="postflows-xlsx-writers-") as directory:
        workdir = Path(directory)
        frame_path = workdir / "results-frame.pkl"
        results_frame(rows, columns).to_pickle(frame_path)
        for round_number in range(repeats):
            shift = round_number % max(len(available), 1)
            for name in available[shift:] + available[:shift]:
                runs[name].append(_run_worker(name, frame_path, workdir / f"{name}.xlsx"))
        formula_safe = {name: keeps_formula_text(name, workdir) for name in available}
    baseline = (
        statistics.median(run["seconds"] for run in runs["xlsxwriter"]) if runs.get("xlsxwriter") else None
    )
    writers = []
    for name, what, distribution, _ in WRITERS:
        if name not in names:
            continue
        entry: dict[str, Any] = {"variant": name, "what": what, "version": _version(distribution)}
        if name in runs:
            median = statistics.median(run["seconds"] for run in runs[name])
            entry |= {
                "median_s": round(median, 3),
                "seconds": [round(run["seconds"], 3) for run in runs[name]],
                "vs_xlsxwriter": round(median / baseline, 3) if baseline else None,
                "write_rss_mib": round(
                    statistics.median(run["write_rss_bytes"] or 0 for run in runs[name]) / 2**20, 1
                ),
                "file_mib": round(runs[name][-1]["file_bytes"] / 2**20, 2),
                "text_stays_text": formula_safe[name],
            }
        writers.append(entry)
    return {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "size": {"rows": rows, "columns": columns},
        "repeats": repeats,
        "writers": writers,
    }


def markdown(document: dict[str, Any]) -> str:
    """The comparison as a markdown table."""
    lines = [
        "| writer | version | median s | × xlsxwriter | write RSS MiB | file MiB | `=1+1` stays text |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for entry in document["writers"]:
        if "median_s" not in entry:
            lines.append(f"| {entry['what']} | {entry['version'] or 'not installed'} | – | – | – | – | – |")
            continue
        cells = [
            entry["what"],
            entry["version"],
            f"{entry['median_s']:.2f}",
            f"{entry['vs_xlsxwriter']:.2f}",
            str(entry["write_rss_mib"]),
            str(entry["file_mib"]),
            "yes" if entry["text_stays_text"] else "no",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _module(name: str) -> str:
    return next(module for variant, _, _, module in WRITERS if variant == name)


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    names = args.only or [name for name, *_ in WRITERS]
    if "xlsxwriter" not in names:
        names = [*names, "xlsxwriter"]  # the figures are relative to it
    document = compare(args.rows, args.columns, args.repeats, names)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(markdown(document))  # noqa: T201
    print(f"\n{args.rows:,} rows × {args.columns} columns, median of {args.repeats}; written to {args.out}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
