"""One measured workbook write in a fresh process, so its peak memory is its own: ``python -m
bench.xlsx_worker {report|xlsxwriter|openpyxl} FRAME.pkl OUT.xlsx`` prints seconds and memory as JSON.

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

from tasks.reports import write_xlsx

VARIANTS = ("report", "xlsxwriter", "openpyxl")


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
