"""Files over a limit refused one after another in a fresh process, so the peak memory is the refusals':
``python -m bench.table_limits_worker FILE...`` prints, per file name, the seconds of its refusal, the
problem and the process's peak RSS until then (VmHWM, reset after the imports) as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from bench.xlsx_worker import _reset_peak, _status_bytes
from fileio.errors import InputError
from fileio.tables import read_table


def measure(paths: list[Path]) -> dict[str, dict[str, object]]:
    """Refuse each of ``paths``; its seconds, the refusal and the peak RSS so far."""
    _reset_peak()
    found: dict[str, dict[str, object]] = {}
    for path in paths:
        started = time.perf_counter()
        try:
            read_table(path)
        except InputError as error:
            problem = error.problem
        else:
            problem = "read, not refused"
        peak = _status_bytes("VmHWM") or 0
        found[path.name] = {
            "seconds": round(time.perf_counter() - started, 4),
            "problem": problem,
            "peak_rss_mib": round(peak / 2**20, 1),
        }
    return found


def main(argv: list[str]) -> int:
    sys.stdout.write(json.dumps(measure([Path(name) for name in argv])) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
