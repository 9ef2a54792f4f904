"""One read of a result file in a fresh process, so its peak memory is its own: ``python -m
bench.result_file_worker {candidate|baseline} RESULT.txt`` prints seconds and memory as JSON.

``candidate`` is ``read_result_file`` + ``decode_results``, ``baseline`` ``pandas.read_csv(dtype=str)``.
Memory is the resident set from ``/proc/self/status``: the peak (VmHWM) is reset through
``/proc/self/clear_refs`` after the imports, so ``peak_rss_bytes`` is the process's high-water mark during
the read (the imported libraries included), ``read_rss_bytes`` what the read added on top of them.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pandas as pd

from bench.xlsx_worker import _reset_peak, _status_bytes
from fileio.address_service.result_codes import decode_results
from fileio.address_service.result_file import read_result_file

VARIANTS = ("candidate", "baseline")


def measure(variant: str, path: Path) -> dict[str, object]:
    """Read ``path`` with ``variant``; seconds, peak and added RSS."""
    rss_start = _status_bytes("VmRSS")
    peak_reset = _reset_peak()
    started = time.perf_counter()
    if variant == "candidate":
        shape = decode_results(read_result_file(path)).shape
    elif variant == "baseline":
        shape = pd.read_csv(path, sep="\t", dtype=str, encoding="cp1252").shape
    else:
        raise ValueError(f"unknown variant {variant!r}; one of {VARIANTS}")
    seconds = time.perf_counter() - started
    peak = _status_bytes("VmHWM")
    return {
        "seconds": seconds,
        "shape": list(shape),
        "peak_rss_bytes": peak,
        "read_rss_bytes": peak - rss_start if peak_reset and peak and rss_start else None,
        "peak_covers_read_only": peak_reset,
    }


def main(argv: list[str]) -> int:
    variant, path = argv
    sys.stdout.write(json.dumps(measure(variant, Path(path))) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
