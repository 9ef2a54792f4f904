"""``python -m bench.load``: a load test of many Prefect workers at once, as operators scale out (one
PostgreSQL-backed Prefect server, one PostgreSQL run history, N process workers on one pool).

    python -m bench.load [--workers 4] [--runs 200] [--out bench/load-results.json]

It needs a PostgreSQL server (``POSTFLOWS_TEST_POSTGRES_URL``; ``make load`` starts a throwaway one) and
makes two fresh databases on it (Prefect's and the history's), starts a Prefect server, serves the sandbox
over HTTP with latency, transient faults and a request log, deploys every flow to a process pool with the
per-API rate limits and automations and the empty flow (:mod:`bench.empty_flow`) beside them, starts the
workers, creates ``--runs`` flow runs of four flows at once and waits until every run is final, then does
the same with as many runs of the empty flow through the same workers and server, stops everything and
drops the databases. It prints and writes the checks (runs completed or failed with a typed error; no
idempotency key submitted twice; every rate limit held across the workers; every empty run completed) and
the figures (runs per minute of the mix and of the empty flow and their ratio, aimed at 0.6 or more; start
latency; Prefect API requests and CPU seconds per run of both). Exit code 0 when every check passed, 1 when
one failed; the throughput's target is reported, not checked. See :mod:`bench.load_world`,
:mod:`bench.load_runs`, :mod:`bench.load_checks`, :mod:`bench.prefect_requests`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

from bench import load_checks, load_runs, load_world, process_tree  # noqa: E402  (after the environment)
from bench.prefect_requests import RequestCount, RequestTally  # noqa: E402

POSTGRES_URL_ENV = "POSTFLOWS_TEST_POSTGRES_URL"
POOL = "postflows"  # every deployment on one pool (postflows deploy --pool)
DEFAULT_OUT = Path(__file__).resolve().parent / "load-results.json"


def _settings_rates() -> dict[str, int]:
    """The per-API rate limits (requests per minute) the settings make by default (1,200, 600, 1,200)."""
    from runtime.settings.apis import AddressServiceSettings, CommerceSettings, NewspaperSettings

    return {
        api: int(settings.model_fields["rate_per_minute"].default)
        for api, settings in (
            ("address", AddressServiceSettings),
            ("newspaper", NewspaperSettings),
            ("commerce", CommerceSettings),
        )
    }


# The rate limits by default: the settings' own, which these sizes never reach, so that the mix's throughput
# against the empty flow's is the runs' and not the limiter's; --rate-* lower them to press the limiter.
DEFAULT_RATES = _settings_rates()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4, help="process workers on the pool (default 4)")
    parser.add_argument("--runs", type=int, default=200, help="flow runs created at once (default 200)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the results JSON goes")
    parser.add_argument("--worker-limit", type=int, default=4, help="flow runs one worker runs at once")
    for api, rate in DEFAULT_RATES.items():
        parser.add_argument(f"--rate-{api}", type=int, default=rate, help=f"{api} rate limit per minute")
    parser.add_argument("--latency", type=float, default=0.05, help="sandbox delay per request (s)")
    parser.add_argument("--job-seconds", type=float, default=2.0, help="sandbox batch job / order time (s)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="longest wait for every run (s)")
    parser.add_argument("--workdir", type=Path, default=None, help="kept afterwards (default: a temp dir)")
    parser.add_argument(
        "--direct-engine",
        action="store_true",
        help="deploy with --worker-python (this interpreter): workers start each run's engine directly, "
        "the empty flow's runs too",
    )
    return parser.parse_args(argv)


@dataclass
class Phase:
    """Runs created at once and watched until every one is final: what they cost the Prefect server (its
    requests between two marks of its log, :mod:`bench.prefect_requests`) and the CPU seconds of the
    workers, their runs and the Prefect server (:mod:`bench.process_tree`; PostgreSQL not counted)."""

    name: str
    planned: list[load_runs.PlannedRun]
    requests: RequestCount | None = None
    cpu_s: float | None = None
    ended: bool = False

    def per_run(self, figure: float | None) -> float | None:
        return None if figure is None else round(figure / len(self.planned), 2)


def run_load(args: argparse.Namespace, server_url: str, workdir: Path) -> dict[str, Any]:
    """The whole load test in ``workdir``; the results document."""
    rates = {api: int(getattr(args, f"rate_{api}")) for api in DEFAULT_RATES}
    plan = load_world.SandboxPlan(args.latency, args.job_seconds, load_world.transient_faults(args.runs))
    stamp = uuid.uuid4().hex[:8]
    env = load_world.base_environment(workdir, rates)
    os.environ["PREFECT_HOME"] = env["PREFECT_HOME"]
    mixed = Phase("mixed", load_runs.plan_runs(args.runs, workdir, stamp))
    empty = Phase("empty", load_runs.plan_empty_runs(args.runs))
    with (
        load_world.fresh_databases(server_url, "prefect", "history") as (prefect_db, history_db),
        load_world.prefect_server(workdir / "prefect-server", prefect_db) as server,
        load_world.served_sandbox(workdir / "sandbox", env, plan) as sandbox,
    ):
        worker_env = load_world.worker_environment(env, server.api_url, history_db, sandbox, workdir)
        say(f"Prefect API {server.api_url}, sandbox {sandbox.origin}; deploying to pool {POOL}")
        worker_python = sys.executable if args.direct_engine else None
        load_world.deploy(worker_env, POOL, worker_python=worker_python)
        asyncio.run(load_world.deploy_empty_flow(server.api_url, POOL, worker_python=worker_python))
        with load_world.workers(
            worker_env, POOL, args.workers, args.worker_limit, workdir / "workers"
        ) as started:
            say(f"{args.workers} workers started")
            pids = [process.pid for process in started]
            run_phase(mixed, server, pids, stamp, args.timeout)
            if mixed.ended:  # else the workers are still busy: the empty flow's figures would mean nothing
                run_phase(empty, server, pids, stamp, args.timeout)
        requests = load_checks.read_request_log(sandbox.request_log)
        checks = {
            "outcomes": load_checks.outcomes(mixed.planned),
            "exactly_once": load_checks.exactly_once(history_db, requests),
            "rate_limits": load_checks.rate_limits(requests, rates),
            "empty_runs": load_checks.all_completed(empty.planned),
        }
    settings = {
        "workers": args.workers,
        "worker_limit": args.worker_limit,
        "runs": args.runs,
        "mix": list(load_runs.MIX),
        "rate_per_minute": rates,
        "sandbox": {"latency_s": args.latency, "job_seconds": args.job_seconds, "faults": list(plan.faults)},
        "pool": POOL,
        "engine": "started directly (postflows deploy --worker-python)"
        if args.direct_engine
        else "the process worker's default: a workspace supervisor process, then the engine's",
    }
    return _document(settings, mixed, empty, checks, len(requests))


def run_phase(
    phase: Phase, server: load_world.PrefectServer, worker_pids: list[int], stamp: str, timeout_s: float
) -> None:
    """Create the phase's runs at once, wait until every one is final and the workers have reaped their
    processes; note what it cost in ``phase``."""
    log, tally = server.log, RequestTally()
    idle = process_tree.descendants(worker_pids)
    start = log.mark(f"{phase.name}-start")
    before = _cpu_seconds(server, worker_pids)
    started = time.monotonic()
    say(f"creating {len(phase.planned)} {phase.name} flow runs at once")
    asyncio.run(load_runs.create_runs(server.api_url, phase.planned, stamp, tally))
    say(f"created in {time.monotonic() - started:.1f} s; waiting until every run is final")
    phase.ended = asyncio.run(load_runs.wait_until_final(server.api_url, phase.planned, timeout_s, tally))
    say(f"{'all final' if phase.ended else 'timed out'} after {time.monotonic() - started:.1f} s")
    if phase.ended and not process_tree.wait_until_reaped(worker_pids, idle, timeout_s=120):
        say("the workers still had flow run processes two minutes after every run was final")
    phase.cpu_s = _cpu_seconds(server, worker_pids) - before
    phase.requests = log.count(start, log.mark(f"{phase.name}-end"), own=tally)


def _cpu_seconds(server: load_world.PrefectServer, worker_pids: list[int]) -> float:
    return sum(process_tree.cpu_seconds(pid) for pid in [server.pid, *worker_pids])


def _document(
    settings: dict[str, Any], mixed: Phase, empty: Phase, checks: dict[str, Any], requests_logged: int
) -> dict[str, Any]:
    """The results document: machine, settings, figures of both phases, checks, one line per run."""
    figures, empty_figures = load_checks.figures(mixed.planned), load_checks.figures(empty.planned)
    counts = {phase.name: phase.requests for phase in (mixed, empty)}
    return {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "settings": settings,
        "figures": {
            **figures,
            **load_checks.against_empty(figures, empty_figures),
            "prefect_api_requests_per_run": {
                phase.name: phase.per_run(None if phase.requests is None else phase.requests.counted)
                for phase in (mixed, empty)
            },
            "cpu_s_per_run": {phase.name: phase.per_run(phase.cpu_s) for phase in (mixed, empty)},
            "empty_flow": empty_figures,
        },
        "checks": checks,
        "passed": all(check["passed"] for check in checks.values()),
        "requests_logged": requests_logged,
        "prefect_api_requests_by_kind": {
            name: dict(count.by_kind.most_common()) for name, count in counts.items() if count is not None
        },
        "runs": load_checks.run_rows(mixed.planned),
    }


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)  # noqa: T201 - progress of a long command


def report(document: dict[str, Any]) -> str:
    """The results in a few lines."""
    figures, checks = document["figures"], document["checks"]
    empty = figures["empty_flow"]
    latency = figures["start_latency_s"]
    settings, cpus = document["settings"], document["machine"]["cpus"]
    lines = [
        f"load test: {settings['workers']} workers × {settings['runs']} runs on {cpus} CPUs "
        f"(rate limits {settings['rate_per_minute']} per minute, sandbox latency "
        f"{settings['sandbox']['latency_s']} s, {len(settings['sandbox']['faults'])} fault rules)",
        f"elapsed {figures['wall_s']} s, {figures['completed_runs']} completed, "
        f"{figures['runs_per_minute']} runs/min",
        f"empty flow: {empty['completed_runs']} completed in {empty['wall_s']} s, "
        f"{figures['empty_runs_per_minute']} runs/min; mix/empty {figures['throughput_vs_empty']} "
        f"(target ≥ {figures['throughput_target']}: {'met' if figures['throughput_met'] else 'NOT met'})",
        "per run, mix / empty: Prefect API requests "
        + " / ".join(str(value) for value in figures["prefect_api_requests_per_run"].values())
        + ", CPU s (workers, runs, Prefect server) "
        + " / ".join(str(value) for value in figures["cpu_s_per_run"].values()),
        f"start latency: median {latency['median']} s, p95 {latency['p95']} s, max {latency['max']} s",
        "median run time: " + ", ".join(f"{flow} {secs} s" for flow, secs in figures["median_run_s"].items()),
        f"outcomes: {_verdict(checks['outcomes'])} {checks['outcomes']['states']}"
        + (
            f", typed failures {checks['outcomes']['typed_failures']}"
            if checks["outcomes"]["typed_failures"]
            else ""
        ),
        f"exactly once: {_verdict(checks['exactly_once'])} ({checks['exactly_once']['distinct_keys']} keys, "
        f"{checks['exactly_once']['recorded_submissions']} recorded submissions, "
        f"{checks['exactly_once']['submitting_requests_in_log']} submitting requests in the request log)",
        f"rate limits: {_verdict(checks['rate_limits'])} "
        + ", ".join(
            f"{name} busiest 60 s {api['busiest_60s']}/{api['limit_per_minute']} ({api['requests']} requests)"
            for name, api in checks["rate_limits"]["per_api"].items()
        ),
        f"empty runs: {_verdict(checks['empty_runs'])} {checks['empty_runs']['states']}",
    ]
    lines += [
        f"  not final or untyped: {offender}" for offender in checks["outcomes"]["not_final_or_untyped"]
    ]
    lines += [f"  submitted twice: {key}" for key in checks["exactly_once"]["keys_submitted_twice"]]
    return "\n".join(lines)


def _verdict(check: dict[str, Any]) -> str:
    return "PASS" if check["passed"] else "FAIL"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    server_url = os.environ.get(POSTGRES_URL_ENV)
    if not server_url:
        say(f"{POSTGRES_URL_ENV} is not set: run `make load` (scripts/with-postgres.sh) or name a server")
        return 2
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="postflows-load-"))
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        document = run_load(args, server_url, workdir)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    document["elapsed_s"] = round(time.monotonic() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(report(document))  # noqa: T201 - the command's output
    print(f"(total {document['elapsed_s']} s with setup; written to {args.out})")  # noqa: T201
    return 0 if document["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
