"""Benchmarks of the ``postflows`` command's start: each side is a fresh process, timed from the outside,
candidate and baseline alternately.

* ``cli_refuse``: ``postflows address-batch empty.csv --out X`` (refused, exit 2) against
  ``python -c "import prefect"``: nothing heavy may be imported before the input is checked (≤ 0.5×).
* ``cli_help``: ``postflows --help`` against ``python -c "import httpx"`` (≤ 3×).
* ``history_list``: ``postflows history`` with ``history_runs`` recorded runs against ``postflows --help``
  (≤ 1.5×); the listing's query, timed in this process through :func:`postflows.run_list.list_runs` as the
  command calls it, must take at most 50 ms.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.config import BenchConfig
from bench.measure import BenchResult, alternate_reported, ratio_result

REFUSE_NAME = "cli_refuse"
HELP_NAME = "cli_help"
HISTORY_NAME = "history_list"
REFUSE_TARGET = 0.5
HELP_TARGET = 3.0
HISTORY_TARGET = 1.5
QUERY_TARGET_MS = 50.0
QUERY_REPEATS = 50
FLOWS = ("address-batch", "address-query", "newspaper-order", "address-validation", "cleanup")
RARE_FLOW = "structure-files"  # one run in RARE_EVERY: what ``--flow`` must find without a scan
RARE_EVERY = 1000
INSERT_CHUNK = 10_000


def postflows_command() -> list[str]:
    """The installed ``postflows`` script beside this interpreter, else ``python -m postflows``."""
    script = Path(sys.executable).with_name("postflows")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "postflows"]


def _environment(workdir: Path) -> dict[str, str]:
    """The user's environment with the data dir, Prefect home and history in ``workdir``."""
    env = {key: value for key, value in os.environ.items() if key != "POSTFLOWS_DATABASE_URL"}
    env.update(
        POSTFLOWS_DATA_DIR=str(workdir / "data"),
        PREFECT_HOME=str(workdir / "prefect"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        COLUMNS="120",
    )
    return env


def _timed(argv: Sequence[str], workdir: Path, expect: int) -> float:
    """Seconds ``argv`` takes as a new process (cwd ``workdir``, its output captured), checking its exit."""
    started = time.perf_counter()
    completed = subprocess.run(
        list(argv), cwd=workdir, env=_environment(workdir), capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    if completed.returncode != expect:
        raise RuntimeError(
            f"{' '.join(argv)} exited {completed.returncode}, expected {expect}: {completed.stderr.strip()}"
        )
    return elapsed


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def run_refuse(config: BenchConfig, workdir: Path) -> BenchResult:
    """``postflows address-batch`` refusing an empty CSV against ``import prefect``."""
    empty = workdir / "empty.csv"
    empty.write_bytes(b"")
    command = [*postflows_command(), "address-batch", str(empty), "--out", str(workdir / "out")]
    timings = alternate_reported(
        lambda: _timed(command, workdir, 2),
        lambda: _timed(_python("import prefect"), workdir, 0),
        config.cli_repeats,
    )
    return ratio_result(
        REFUSE_NAME,
        "postflows address-batch empty.csv --out X (refused, exit 2) vs python -c 'import prefect'",
        timings,
        size={"input_bytes": 0},
        target=REFUSE_TARGET,
        comparison="at_most",
        info={"command": " ".join(command[-4:])},
    )


def run_help(config: BenchConfig, workdir: Path) -> BenchResult:
    """``postflows --help`` against ``import httpx``."""
    command = [*postflows_command(), "--help"]
    timings = alternate_reported(
        lambda: _timed(command, workdir, 0),
        lambda: _timed(_python("import httpx"), workdir, 0),
        config.cli_repeats,
    )
    return ratio_result(
        HELP_NAME,
        "postflows --help vs python -c 'import httpx'",
        timings,
        size={},
        target=HELP_TARGET,
        comparison="at_most",
    )


def record_runs(url: str, count: int) -> None:
    """``count`` finished runs in the history at ``url``: migrated by the history store (Alembic), filled
    by bulk inserts of the ``runs`` table's rows, oldest first, a minute apart."""
    from sqlalchemy import insert

    import history

    factory = history.session_factory(url)
    start = datetime(2020, 1, 1, tzinfo=UTC)
    states = ("COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "PARKED")
    with factory.begin() as session:
        for first in range(0, count, INSERT_CHUNK):
            rows: list[dict[str, Any]] = []
            for number in range(first, min(first + INSERT_CHUNK, count)):
                started = start + timedelta(minutes=number)
                rare = number % RARE_EVERY == 0
                rows.append(
                    {
                        "flow": RARE_FLOW if rare else FLOWS[number % len(FLOWS)],
                        "flow_run_id": f"{number:08x}-0000-4000-8000-000000000000",
                        "idempotency_key": f"key-{number}",
                        "parameters": {"input_path": f"/data/in/{number}.csv"},
                        "state": states[number % len(states)],
                        "started_at": started,
                        "finished_at": started + timedelta(seconds=30 + number % 600),
                        "summary": {"records": number % 5000},
                    }
                )
            session.execute(insert(history.Run), rows)
    history.dispose_engines(url)


def _query_ms(url: str, **options: Any) -> float:
    """Median milliseconds of :func:`postflows.run_list.list_runs` as ``postflows history`` calls it."""
    from postflows.run_list import list_runs

    list_runs(url, limit=20, **options)  # the file's pages in the OS cache, as for any second listing
    samples = []
    for _ in range(QUERY_REPEATS):
        started = time.perf_counter()
        page = list_runs(url, limit=20, **options)
        samples.append((time.perf_counter() - started) * 1000)
        assert page.runs, options
    return statistics.median(samples)


def run_history(config: BenchConfig, workdir: Path) -> BenchResult:
    """``postflows history`` over ``history_runs`` runs against ``postflows --help``."""
    database = workdir / "data" / "history.db"
    url = f"sqlite:///{database}"
    started = time.perf_counter()
    record_runs(url, config.history_runs)
    build_s = time.perf_counter() - started
    listing = [*postflows_command(), "history"]
    timings = alternate_reported(
        lambda: _timed(listing, workdir, 0),
        lambda: _timed([*postflows_command(), "--help"], workdir, 0),
        config.cli_repeats,
    )
    newest = _query_ms(url)
    queries = {
        "newest 20": newest,
        f"newest 20 of --flow {RARE_FLOW}": _query_ms(url, flow=RARE_FLOW),
        "20 older than the middle run (--before)": _query_ms(url, before=config.history_runs // 2),
    }
    slowest = max(queries.values())
    return ratio_result(
        HISTORY_NAME,
        "postflows history (newest 20 of the recorded runs) vs postflows --help",
        timings,
        size={"runs": config.history_runs},
        target=HISTORY_TARGET,
        comparison="at_most",
        info={
            "query_ms_median": {name: round(ms, 3) for name, ms in queries.items()},
            "query_target_ms": QUERY_TARGET_MS,
            "query_passed": slowest <= QUERY_TARGET_MS,
            "database_mib": round(database.stat().st_size / 2**20, 1),
            "build_s (untimed)": round(build_s, 1),
        },
    )
