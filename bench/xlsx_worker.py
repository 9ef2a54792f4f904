"""One measured workbook write in a fresh process, so its peak memory is its own: ``python -m
bench.xlsx_worker VARIANT FRAME.pkl OUT.xlsx`` prints seconds and memory as JSON. The variants are the
project's writer (``report``), the baseline (``xlsxwriter``), pandas' ``to_excel`` (``openpyxl``) and the
other writers that ``python -m bench.xlsx_writers`` compares (see :data:`WRITERS`); those are imported only
when asked for.

Memory is the resident set (RSS) from ``/proc/self/status``: the peak (VmHWM) is reset through
``/proc/self/clear_refs`` after the frame is loaded, so ``peak_rss_bytes`` is the high-water mark during
the write alone and ``write_rss_bytes`` what the write added on top of the loaded frame. Where the reset is
not possible, the peak falls back to ``getrusage`` (which then also covers loading the frame).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

import pandas as pd
import xlsxwriter

from fileio.workbooks import write_xlsx

VARIANTS = ("report", "xlsxwriter", "openpyxl", "xlsxwriter_cells", "pyexcelerate", "rustpy", "polars")


def write_plain_xlsxwriter(frame: pd.DataFrame, path: Path) -> None:
    """The baseline: xlsxwriter's constant-memory mode with its default options, a header row, then one
    ``write_row`` per row; no formats, widths or filters. Missing values become empty cells (None)."""
    workbook = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    worksheet = workbook.add_worksheet("Results")
    worksheet.write_row(0, 0, [str(column) for column in frame.columns])
    values = frame.astype(object)
    for row_number, row in enumerate(values.where(values.notna(), None).to_numpy().tolist(), start=1):
        worksheet.write_row(row_number, 0, row)
    workbook.close()


def _rows(frame: pd.DataFrame) -> list[list[object]]:
    values = frame.astype(object)
    rows: list[list[object]] = values.where(values.notna(), None).to_numpy().tolist()
    return rows


def write_xlsxwriter_cells(frame: pd.DataFrame, path: Path) -> None:
    """xlsxwriter's constant-memory mode below ``write_row``: one typed call per cell, no type dispatch."""
    workbook = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    worksheet = workbook.add_worksheet("Results")
    worksheet.write_row(0, 0, [str(column) for column in frame.columns])
    text, number, boolean = worksheet.write_string, worksheet.write_number, worksheet.write_boolean
    for row_number, row in enumerate(_rows(frame), start=1):
        for position, value in enumerate(row):
            if value is None:
                continue
            if type(value) is str:
                text(row_number, position, value)
            elif type(value) is bool:
                boolean(row_number, position, value)
            else:
                number(row_number, position, value)
    workbook.close()


def write_pyexcelerate(frame: pd.DataFrame, path: Path) -> None:
    """pyexcelerate: the whole sheet as one list of rows. (It writes text starting with "=" as a formula.)"""
    from pyexcelerate import Workbook

    workbook = Workbook()
    workbook.new_sheet("Results", data=[[str(column) for column in frame.columns], *_rows(frame)])
    workbook.save(str(path))


def write_rustpy(frame: pd.DataFrame, path: Path) -> None:
    """rustpy-xlsxwriter on the frame as it is: the library alone, without write_xlsx's header, widths and
    panes."""
    import rustpy_xlsxwriter

    rustpy_xlsxwriter.write_worksheet(frame, path, sheet_name="Results")


def write_polars(frame: pd.DataFrame, path: Path) -> None:
    """polars' ``write_excel`` (xlsxwriter underneath); the frame is converted column by column, as polars
    takes pandas' nullable and categorical columns only through pyarrow."""
    import polars as pl

    values = frame.astype(object)
    columns = values.where(values.notna(), None).to_dict(orient="list")
    pl.DataFrame({str(name): column for name, column in columns.items()}, strict=False).write_excel(
        path, worksheet="Results", autofit=False
    )


def _status_bytes(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def measure(variant: str, frame_path: Path, out: Path) -> dict[str, object]:
    """Load the frame, write it with ``variant``, return seconds and memory figures."""
    frame = pd.read_pickle(frame_path)
    rss_start = _status_bytes("VmRSS")
    peak_reset = _reset_peak()
    started = time.perf_counter()
    if variant == "report":
        write_xlsx(out, {"Results": frame})
    elif variant == "xlsxwriter":
        write_plain_xlsxwriter(frame, out)
    elif variant == "openpyxl":
        frame.to_excel(out, sheet_name="Results", index=False, engine="openpyxl")
    elif variant == "xlsxwriter_cells":
        write_xlsxwriter_cells(frame, out)
    elif variant == "pyexcelerate":
        write_pyexcelerate(frame, out)
    elif variant == "rustpy":
        write_rustpy(frame, out)
    elif variant == "polars":
        write_polars(frame, out)
    else:
        raise ValueError(f"unknown variant {variant!r}; one of {VARIANTS}")
    seconds = time.perf_counter() - started
    peak = _status_bytes("VmHWM") if peak_reset else None
    if peak is None:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    return {
        "seconds": seconds,
        "peak_rss_bytes": peak,
        "rss_start_bytes": rss_start,
        "write_rss_bytes": peak - rss_start if peak_reset and rss_start is not None else None,
        "peak_covers_write_only": peak_reset,
        "file_bytes": out.stat().st_size,
    }


def main(argv: list[str]) -> int:
    variant, frame_path, out = argv
    sys.stdout.write(json.dumps(measure(variant, Path(frame_path), Path(out))) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
