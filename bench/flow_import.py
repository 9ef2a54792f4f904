"""``flow_import``: what a worker pays before a flow run's first step, importing the flow's module in a
fresh process, against what Prefect itself costs (``python -c "import prefect"``), time and peak RSS.

Each flow module of the deployment catalog is imported in a process of its own, from bytecode (written by
a first import that is not measured, as installing a package compiles it), alternating with the baseline,
``flow_import_repeats`` rounds; each process reports its own import time (measured inside it, so the
interpreter's start is not counted on either side) and its peak RSS. The slowest flow (by its median time
ratio) is the row: its ``value`` is the larger of its time and RSS ratios (≤ 1.5×). Every flow's
ratios are listed in ``info``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.config import BenchConfig
from bench.measure import BenchResult

NAME = "flow_import"
TARGET = 1.5
BASELINE_MODULE = "prefect"

# The peak RSS of this process's own memory (Linux's VmHWM): ``ru_maxrss`` would also count the pages of the
# benchmark's process this one was forked from, whatever it imported itself.
_PROBE = """
import json, pathlib, resource, sys, time
started = time.perf_counter()
__import__(sys.argv[1])
elapsed = time.perf_counter() - started
status = pathlib.Path("/proc/self/status")
lines = status.read_text().splitlines() if status.exists() else []
peak = [int(line.split()[1]) for line in lines if line.startswith("VmHWM:")]
kib = peak[0] if peak else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"s": elapsed, "rss_kib": kib}))
"""


def flow_modules(limit: int | None = None) -> list[str]:
    """The modules of the catalog's flows, each once, in the catalog's order (the first ``limit``)."""
    from deployments.catalog import CATALOG

    modules = list(dict.fromkeys(spec.flow.partition(":")[0] for spec in CATALOG))
    return modules[:limit] if limit else modules


def _import_cost(module: str, workdir: Path) -> tuple[float, int]:
    """Seconds and peak RSS (KiB) of importing ``module`` in a fresh interpreter, from bytecode as an
    installed package is imported (the bytecode of both sides is written under ``workdir`` by a first,
    unmeasured import: see :func:`run`)."""
    env = {
        **{name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"},
        "PYTHONPYCACHEPREFIX": str(workdir / "pycache"),
        "POSTFLOWS_DATA_DIR": str(workdir / "data"),
        "PREFECT_HOME": str(workdir / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, module],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"importing {module} failed: {done.stderr.strip()[-2000:]}")
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    return float(measured["s"]), int(measured["rss_kib"])


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Every flow module's import against ``import prefect``, alternately, in fresh processes."""
    modules = flow_modules(config.flow_import_modules)
    times: dict[str, list[float]] = {module: [] for module in [*modules, BASELINE_MODULE]}
    rss: dict[str, list[int]] = {module: [] for module in [*modules, BASELINE_MODULE]}
    for module in [BASELINE_MODULE, *modules]:  # the bytecode, as an installed package has it
        _import_cost(module, workdir)
    for round_number in range(config.flow_import_repeats):
        for position, module in enumerate(modules):
            pair = [module, BASELINE_MODULE]
            if (round_number + position) % 2:
                pair.reverse()  # the baseline first every other time
            for imported in pair:
                seconds, kib = _import_cost(imported, workdir)
                times[imported].append(seconds)
                rss[imported].append(kib)
    baseline_s = times.pop(BASELINE_MODULE)
    base_s, base_rss = statistics.median(baseline_s), statistics.median(rss.pop(BASELINE_MODULE))
    ratios = {
        module: {
            "time": statistics.median(times[module]) / base_s,
            "rss": statistics.median(rss[module]) / base_rss,
            "median_s": statistics.median(times[module]),
            "peak_rss_mib": statistics.median(rss[module]) / 1024,
        }
        for module in modules
    }
    slowest = max(modules, key=lambda module: ratios[module]["time"])
    heaviest = max(modules, key=lambda module: ratios[module]["rss"])
    worst = ratios[slowest]
    info: dict[str, Any] = {
        "slowest_flow": slowest,
        "time_ratio": round(worst["time"], 3),
        "rss_ratio": round(worst["rss"], 3),
        "heaviest_flow": heaviest,
        "heaviest_rss_ratio": round(ratios[heaviest]["rss"], 3),
        "baseline": f"import {BASELINE_MODULE}: {base_s:.3f} s, {base_rss / 1024:.0f} MiB",
        "flows": {
            module: {key: round(value, 3) for key, value in figures.items()}
            for module, figures in ratios.items()
        },
    }
    return BenchResult(
        name=NAME,
        description=(
            "import of each flow module vs python -c 'import prefect' (time and peak RSS, fresh processes)"
        ),
        size={"flow_modules": len(modules)},
        repeats=config.flow_import_repeats,
        target=TARGET,
        comparison="at_most",
        value=max(worst["time"], worst["rss"]),
        value_label="larger of time and RSS ratio, slowest flow",
        candidate_s=times[slowest],
        baseline_s=baseline_s,
        info=info,
    )
