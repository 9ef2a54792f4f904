"""Every benchmark runs end to end at a tiny size and reports a complete result; no timing is asserted
(speed is judged by ``make bench`` on full sizes, never by a unit test)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from bench.__main__ import BENCHMARKS, main, run_benchmarks
from bench.config import BenchConfig

# The module's fixture runs every benchmark once (a minute or two alone, the worker benchmarks starting a
# Prefect server, the sandbox and a worker of their own); beside another worker of the suite it may take twice
# that, so its first test is given more than the suite's default.
pytestmark = pytest.mark.timeout(480)

TINY = BenchConfig(
    repeats=1,
    result_rows=1_000,
    upload_rows=1_000,
    xlsx_rows=1_000,
    xlsx_read_rows=1_000,
    review_rows=1_000,
    queries=50,
    limited_queries=50,
    small_batch_rows=5,
    overhead_rows=20,
    query_latency_s=0.001,
    job_seconds=0.5,
    batch_job_seconds=0.0,
    flow_poll_interval_s=0.05,
    jobs=1,
    cli_repeats=1,
    flow_import_repeats=1,
    flow_import_modules=1,
    worker_runs=1,
    history_runs=300,
    report_runs=60,
    long_line_mib=2,
)
RESULT_KEYS = {
    "name", "description", "size", "repeats", "candidate_median_s", "baseline_median_s", "value",
    "value_label", "target", "comparison", "passed", "candidate_s", "baseline_s", "info", "wall_s",
}  # fmt: skip


@pytest.fixture(scope="module")
def document(prefect_harness: None) -> dict:
    """Every benchmark once at the tiny size; the flow benchmarks on the session's Prefect test server."""
    from prefect.settings import PREFECT_API_URL

    config = dataclasses.replace(TINY, prefect_api_url=str(PREFECT_API_URL.value()))
    return run_benchmarks(config, list(BENCHMARKS))


def test_every_benchmark_reports_medians_ratio_and_target(document: dict) -> None:
    assert set(document["benchmarks"]) == set(BENCHMARKS)
    assert set(BENCHMARKS) >= {
        "result_file", "upload_file", "xlsx", "xlsx_read", "review_xlsx", "queries", "queries_limited",
        "completion", "small_batch", "flow_overhead", "cli_refuse", "cli_help", "history_list",
        "history_report", "flow_import", "worker_run", "worker_run_cpu",
    }  # fmt: skip
    assert document["config"]["repeats"] == 1
    for name, result in document["benchmarks"].items():
        assert set(result) == RESULT_KEYS, name
        assert result["name"] == name
        assert result["value"] > 0 or name == "completion"
        assert isinstance(result["passed"], bool)
        assert len(result["candidate_s"]) == 1
        assert result["candidate_median_s"] > 0 or name == "completion"


@pytest.mark.parametrize(
    "name",
    [
        "result_file",
        "upload_file",
        "xlsx",
        "xlsx_read",
        "review_xlsx",
        "queries",
        "small_batch",
        "flow_overhead",
        "worker_run",
        "worker_run_cpu",
        "cli_refuse",
        "cli_help",
        "history_list",
    ],  # fmt: skip
)
def test_side_by_side_benchmarks_time_both_sides(document: dict, name: str) -> None:
    result = document["benchmarks"][name]
    assert result["candidate_median_s"] > 0
    assert result["baseline_median_s"] > 0
    assert len(result["baseline_s"]) == len(result["candidate_s"])


def test_both_sides_do_the_same_work(document: dict) -> None:
    benchmarks = document["benchmarks"]
    parse = benchmarks["result_file"]["info"]
    assert parse["candidate_shape"][0] == parse["baseline_shape"][0] == 1_000
    assert benchmarks["upload_file"]["size"]["rows"] == 1_000
    workbook = benchmarks["xlsx_read"]["info"]
    assert workbook["candidate_shape"] == workbook["baseline_shape"] == [1_000, 11]
    queries = benchmarks["queries"]["info"]
    assert queries["candidate_rows"] == queries["baseline_rows"] == 50
    assert queries["candidate_errors"] == 0
    assert queries["requests_answered"] == 100  # every query of both sides went through the latency
    for name, rows in (("small_batch", 5), ("flow_overhead", 20)):
        flow = benchmarks[name]["info"]
        assert flow["flow_rows"] == flow["script_rows"] == rows, name
    limited = benchmarks["queries_limited"]["info"]
    assert limited["queries_sent"] >= 50 and limited["rows_with_error"] == 0


def test_xlsx_reports_memory_of_each_writer(document: dict) -> None:
    info = document["benchmarks"]["xlsx"]["info"]
    for key in ("candidate_memory", "baseline_memory", "pandas_to_excel_openpyxl (one run, information)"):
        assert info[key]["peak_rss_mib"] > 0
        assert info[key]["file_mib"] > 0


def test_review_xlsx_writes_the_same_annotations_both_ways(document: dict) -> None:
    result = document["benchmarks"]["review_xlsx"]
    assert result["size"] == {"rows": 1_000, "columns": 25}
    info = result["info"]
    # A fifth of the rows with one to three corrected cells, a tenth needing a human (seeded: exact).
    assert 200 < info["filled_cells"] < 600 and 50 < info["filled_rows"] < 150
    assert info["notes"] == info["filled_cells"] + info["filled_rows"]
    assert info["candidate_file_mib"] > 0 and info["baseline_file_mib"] > 0
    assert "seconds_bound" not in info  # the 10 s bound holds at the full size only


def test_history_list_times_its_query(document: dict) -> None:
    result = document["benchmarks"]["history_list"]
    assert result["size"] == {"runs": 300}
    assert all(ms > 0 for ms in result["info"]["query_ms_median"].values())
    assert isinstance(result["info"]["query_passed"], bool)


def test_history_report_times_the_command_and_its_function(document: dict) -> None:
    result = document["benchmarks"]["history_report"]
    assert result["size"]["runs"] == 60 and result["size"]["remote_jobs"] > 0
    assert result["target"] == 1.0 and result["info"]["target_s"] == 5.0
    assert result["value"] == pytest.approx(result["candidate_median_s"] / 5.0, abs=1e-3)
    assert result["info"]["months"] == 24 and result["info"]["address_runs"] > 0


def test_worker_runs_count_the_prefect_api_requests_of_both_sides(document: dict) -> None:
    for name in ("worker_run", "worker_run_cpu"):
        result = document["benchmarks"][name]
        assert result["size"] == {"rows": 5, "job_seconds": 0.0, "runs_per_side": 1}
        requests = result["info"]["prefect_api_requests_per_run"]
        # a run asks at least for its deployment, sets its states and reports its end
        assert requests["address-batch"] > requests["empty"] > 5
        assert result["info"]["idle_requests_counted"] == 0  # an idle worker only polls
    kinds = document["benchmarks"]["worker_run"]["info"]["requests_by_kind_per_run"]
    assert kinds["empty"]["POST /api/flow_runs/{id}/set_state"] >= 3  # Pending, Running, Completed
    assert not any("get_scheduled_flow_runs" in kind for side in kinds.values() for kind in side)


def test_completion_is_seen_after_the_job_ends(document: dict) -> None:
    result = document["benchmarks"]["completion"]
    assert result["candidate_s"][0] >= 0  # never reported finished before its end
    assert result["info"]["status_calls_per_job"][0] >= 1
    assert result["info"]["calls_within_bound"] is True


def test_command_line_writes_the_results_file(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    argv = [
        "--only",
        "completion",
        "--repeats",
        "1",
        "--jobs",
        "1",
        "--job-seconds",
        "0.2",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert list(written["benchmarks"]) == ["completion"]
    assert written["quick"] is False
    assert written["config"]["job_seconds"] == 0.2


def test_the_command_line_reads_flags_and_urls_as_such() -> None:
    from bench.__main__ import config_from, parse_args

    args = parse_args(["--worker-direct-engine", "--prefect-api-url", "http://127.0.0.1:4200/api"])
    config = config_from(args)
    assert config.worker_direct_engine is True
    assert config.prefect_api_url == "http://127.0.0.1:4200/api"
    assert config_from(parse_args([])).worker_direct_engine is False


def test_runs_started_by_prefects_engine_directly_complete(tmp_path: Path) -> None:
    """The job variable ``command`` an operator sets (docs/performance.md) has the worker start the engine
    itself: both sides' runs complete, the address batch with its results (the benchmark checks both)."""
    from bench import worker_run

    config = dataclasses.replace(TINY, worker_direct_engine=True)
    workdir = tmp_path / "worker_run"  # the measurement is left beside it, in tmp_path
    workdir.mkdir()
    result = worker_run.run(config, workdir)
    assert result.info["engine"].startswith("started directly")
    assert result.info["prefect_api_requests_per_run"]["address-batch"] > 5
    command = f"{sys.executable} -m prefect.engine"  # as the server held both deployments
    assert result.info["commands"] == {"address-batch": command, "empty": command}
