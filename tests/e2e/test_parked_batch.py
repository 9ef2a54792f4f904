"""A parked batch job of several minutes end to end (started in the background when the session begins, see
:mod:`tests.e2e.parked_batch_run`). The triggered run parks its job and ends; nothing runs while the job does;
the follow-up run of the same deployment resumes it, downloads and deletes the remote files. runbatch is sent
once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from tests.e2e.parked_batch_run import JOB_SECONDS, ParkedBatch

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(2 * JOB_SECONDS + 600)]


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value)


def test_a_parked_batch_job_completes_through_its_follow_up_with_no_worker_busy_between(
    parked_batch: Callable[[], ParkedBatch],
) -> None:
    job = parked_batch()
    api = job.api_url
    deadline = time.monotonic() + 2 * JOB_SECONDS + 300
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        runs = job.flow_runs()
        if len(runs) == 2 and all(run["state_type"] == "COMPLETED" for run in runs):
            break
        assert not any(run["state_type"] in ("FAILED", "CRASHED") for run in runs), runs
        time.sleep(1)
    else:
        raise AssertionError(f"no completed follow-up in time: {runs}\n{job.serve_log.read_text()[-5000:]}")

    first, follow_up = runs
    assert first["id"] == job.flow_run_id and "follow-up" in follow_up["tags"]
    assert follow_up["parameters"] == first["parameters"]
    # The first run ended long before the job did; the follow-up started when the job was expected to end.
    parked_for = (_when(follow_up["start_time"]) - _when(first["end_time"])).total_seconds()
    first_ran_for = (_when(first["end_time"]) - _when(first["start_time"])).total_seconds()
    assert first_ran_for < JOB_SECONDS / 2, first
    assert _when(first["end_time"]) - _when(first["start_time"]) < _when(
        follow_up["expected_start_time"]
    ) - _when(first["start_time"])
    assert parked_for >= JOB_SECONDS / 2, (first, follow_up)
    # Nothing ran in between: no flow run of the served deployments was running in that time.
    everything = httpx.post(f"{api}/flow_runs/filter", json={}, timeout=10).json()
    overlapping = [
        run
        for run in everything
        if run["id"] not in (first["id"], follow_up["id"])
        and run["deployment_id"] is not None
        and run["start_time"] is not None
        and _when(run["start_time"]) < _when(follow_up["start_time"])
        and (run["end_time"] is None or _when(run["end_time"]) > _when(first["end_time"]))
    ]
    assert overlapping == []

    assert job.sandbox.count("runbatch") == 1
    assert job.sandbox.count("deletefile") == 2
    engine = create_engine(f"sqlite:///{job.data_dir / 'history.db'}")
    with engine.connect() as connection:
        states = [
            tuple(row) for row in connection.execute(text("SELECT flow_run_id, state FROM runs ORDER BY id"))
        ]
        tokens = [
            row[0]
            for row in connection.execute(
                text("SELECT remote_id FROM remote_jobs WHERE kind IN ('upload-file', 'output-file')")
            )
        ]
    engine.dispose()
    assert states == [(first["id"], "PARKED"), (follow_up["id"], "COMPLETED")]
    assert len(tokens) == 2 and all(job.sandbox.delete_status(token) == 302 for token in tokens)
    assert (job.output_dir / "results.xlsx").is_file()
