"""``flow_import``: what a worker pays before a flow run's first step, importing the flow's module in a
fresh process, against what Prefect itself costs (``python -c "import prefect"``), time and peak RSS.

Each flow module of the deployment catalog is imported in a process of its own, from bytecode (written by
a first import that is not measured, as installing a package compiles it), paired with an import of the
baseline just before or just after it (the order alternating), ``flow_import_repeats`` rounds; each
process reports its own import time (measured inside it, so the interpreter's start is not counted on
either side) and its peak RSS. A flow's ratios are the medians over the rounds of its figure over its own
pair's baseline: the machine's pace drifts over the minutes the benchmark takes, and a flow measured while
it was slow is compared with a baseline measured then, not with the whole run's. The slowest flow (by its
time ratio) is the row: its ``value`` is the larger of its time and RSS ratios (≤ 1.5×). Every flow's
ratios are listed in ``info``, with the baseline's median over the whole run.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
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
    """Every flow module's import against ``import prefect``, in pairs, in fresh processes."""
    modules = flow_modules(config.flow_import_modules)
    pairs: dict[str, list[Pair]] = {module: [] for module in modules}
    for module in [BASELINE_MODULE, *modules]:  # the bytecode, as an installed package has it
        _import_cost(module, workdir)
    for round_number in range(config.flow_import_repeats):
        for position, module in enumerate(modules):
            baseline_first = bool((round_number + position) % 2)  # the baseline first every other time
            if baseline_first:
                baseline = _import_cost(BASELINE_MODULE, workdir)
                flow = _import_cost(module, workdir)
            else:
                flow = _import_cost(module, workdir)
                baseline = _import_cost(BASELINE_MODULE, workdir)
            pairs[module].append(Pair(flow, baseline))
    ratios = {module: flow_figures(measured) for module, measured in pairs.items()}
    slowest = max(modules, key=lambda module: ratios[module]["time"])
    heaviest = max(modules, key=lambda module: ratios[module]["rss"])
    worst = ratios[slowest]
    every_baseline = [pair.baseline for measured in pairs.values() for pair in measured]
    base_s = statistics.median(seconds for seconds, _ in every_baseline)
    base_rss = statistics.median(kib for _, kib in every_baseline)
    info: dict[str, Any] = {
        "slowest_flow": slowest,
        "time_ratio": round(worst["time"], 3),
        "rss_ratio": round(worst["rss"], 3),
        "heaviest_flow": heaviest,
        "heaviest_rss_ratio": round(ratios[heaviest]["rss"], 3),
        "baseline": f"import {BASELINE_MODULE}: {base_s:.3f} s, {base_rss / 1024:.0f} MiB",
        "ratios": "each flow's median over the rounds of its figure over its pair's baseline",
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
        candidate_s=[pair.flow[0] for pair in pairs[slowest]],
        baseline_s=[pair.baseline[0] for pair in pairs[slowest]],
        info=info,
    )


@dataclass(frozen=True)
class Pair:
    """One round of a flow: its import's seconds and peak RSS (KiB), and its baseline's."""

    flow: tuple[float, int]
    baseline: tuple[float, int]


def flow_figures(measured: list[Pair]) -> dict[str, float]:
    """A flow's time and RSS ratios (medians of each round's flow over its baseline) and its own medians."""
    return {
        "time": statistics.median(pair.flow[0] / pair.baseline[0] for pair in measured),
        "rss": statistics.median(pair.flow[1] / pair.baseline[1] for pair in measured),
        "median_s": statistics.median(pair.flow[0] for pair in measured),
        "peak_rss_mib": statistics.median(pair.flow[1] for pair in measured) / 1024,
    }
