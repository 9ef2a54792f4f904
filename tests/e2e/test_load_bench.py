"""The load test of many workers (``python -m bench.load``, ``make load``) end to end at a tiny size: two
process workers, six flow runs of the four flows and six of the empty flow, on a PostgreSQL-backed Prefect
server and run history against a served sandbox with latency and faults. Its report is complete and every
check passes; no timing is asserted (the full run's figures are in bench/load-results.json and
docs/operations.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.e2e.conftest import POSTGRES_URL_ENV, REPO, base_environment

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.timeout(360)]

MISSING_POSTGRES = (
    f"{POSTGRES_URL_ENV} is not set: run through `make test` / scripts/with-postgres.sh, "
    f"or set {POSTGRES_URL_ENV} to a PostgreSQL server URL"
)
FIGURES = {
    "wall_s", "completed_runs", "final_runs", "runs_per_minute", "start_latency_s", "median_run_s",
    "empty_runs_per_minute", "throughput_vs_empty", "throughput_target", "throughput_met",
    "prefect_api_requests_per_run", "cpu_s_per_run", "empty_flow",
}  # fmt: skip
APIS = {"address-service", "newspaper-api", "commerce-api"}


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One tiny load test: its results file (the command must succeed: every check passed)."""
    server_url = os.environ.get(POSTGRES_URL_ENV)
    if not server_url:
        pytest.fail(MISSING_POSTGRES, pytrace=False)
    out = tmp_path_factory.mktemp("load") / "results.json"
    env = {**base_environment(), POSTGRES_URL_ENV: server_url}
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--workers", "2", "--runs", "6", "--out", str(out),
         "--timeout", "180"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=330,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-5000:]
    assert "outcomes: PASS" in done.stdout and "rate limits: PASS" in done.stdout, done.stdout
    results: dict = json.loads(out.read_text(encoding="utf-8"))
    return results


def test_every_run_completed_or_failed_with_a_typed_error(document: dict) -> None:
    outcomes = document["checks"]["outcomes"]
    assert outcomes["passed"] is True
    assert outcomes["not_final_or_untyped"] == []
    assert sum(outcomes["states"].values()) == 6
    assert set(outcomes["states"]) <= {"COMPLETED", "FAILED"}
    assert set(outcomes["by_flow"]) == set(document["settings"]["mix"])


def test_no_key_was_submitted_twice(document: dict) -> None:
    once = document["checks"]["exactly_once"]
    assert once["passed"] is True
    assert once["keys_submitted_twice"] == []
    # runs 0 and 4 are address batches, run 3 a newspaper order: one submission each
    assert once["distinct_keys"] == once["recorded_submissions"] == once["submitting_requests_in_log"] == 3
    assert once["by_kind"] == {"batch": 2, "order": 1}


def test_every_rate_limit_held_across_the_workers(document: dict) -> None:
    limits = document["checks"]["rate_limits"]
    assert limits["passed"] is True
    assert set(limits["per_api"]) == APIS
    for api in limits["per_api"].values():
        assert api["requests"] > 0
        assert 0 < api["busiest_60s"] <= api["limit_per_minute"]


def test_the_empty_flow_ran_as_often_through_the_same_workers(document: dict) -> None:
    assert document["checks"]["empty_runs"] == {"passed": True, "states": {"COMPLETED": 6}}
    figures = document["figures"]
    assert figures["empty_flow"]["completed_runs"] == 6 and figures["empty_runs_per_minute"] > 0
    assert figures["throughput_vs_empty"] == pytest.approx(
        figures["runs_per_minute"] / figures["empty_runs_per_minute"], abs=0.01
    )
    requests = figures["prefect_api_requests_per_run"]
    assert requests["mixed"] > requests["empty"] > 5  # the mix's runs also take rate-limit slots
    assert all(seconds > 0 for seconds in figures["cpu_s_per_run"].values())


def test_the_report_names_the_figures_and_the_machine(document: dict) -> None:
    assert set(document["figures"]) == FIGURES
    assert document["figures"]["completed_runs"] + len(document["checks"]["outcomes"]["typed_failures"]) >= 1
    assert set(document["figures"]["start_latency_s"]) == {"median", "p95", "max", "runs"}
    assert document["figures"]["start_latency_s"]["runs"] == 6
    assert document["machine"]["cpus"] == os.cpu_count()
    assert document["settings"]["workers"] == 2 and document["settings"]["runs"] == 6
    assert document["settings"]["sandbox"]["faults"], "the sandbox injects transient faults"
    assert document["requests_logged"] > 0
    assert document["passed"] is True
