"""Counting a Prefect server's requests from its access log: which lines are requests, which of them are a
worker's polling or the measuring process's own, and how a window between two marks is cut."""

from __future__ import annotations

from pathlib import Path

import httpx

from bench.prefect_requests import RequestTally, ServerLog, count_lines, request_kind

RUN = "0b7d3c5e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
LOG = f"""INFO:     127.0.0.1:1 - "GET /api/health?bench_mark=one-start-1 HTTP/1.1" 200 OK
INFO:     127.0.0.1:2 - "POST /api/work_pools/pool-a/get_scheduled_flow_runs HTTP/1.1" 200 OK
INFO:     127.0.0.1:3 - "POST /api/deployments/{RUN}/create_flow_run HTTP/1.1" 201 Created
INFO:     127.0.0.1:4 - "GET /api/flow_runs/{RUN} HTTP/1.1" 200 OK
INFO:     127.0.0.1:4 - "GET /api/flow_runs/{RUN} HTTP/1.1" 200 OK
INFO:     127.0.0.1:5 - "GET /api/csrf-token?client={RUN} HTTP/1.1" 422 Unprocessable Entity
INFO:     127.0.0.1:6 - "WebSocket /api/events/in" [accepted]
INFO:     connection open
12:00:00.000 | INFO    | prefect.server.services.scheduler - Scheduled 0 runs.
INFO:     127.0.0.1:7 - "POST /api/work_pools/pool-a/workers/heartbeat HTTP/1.1" 204 No Content
INFO:     127.0.0.1:8 - "POST /api/flow_runs/{RUN}/set_state HTTP/1.1" 201 Created
INFO:     127.0.0.1:9 - "GET /api/health?bench_mark=one-end-2 HTTP/1.1" 200 OK
INFO:     127.0.0.1:9 - "POST /api/flow_runs/{RUN}/set_state HTTP/1.1" 201 Created
"""


def test_a_kind_of_request_has_its_ids_and_query_left_out() -> None:
    assert request_kind("GET", f"/api/flow_runs/{RUN}?x=1") == "GET /api/flow_runs/{id}"
    assert request_kind("POST", "/api/logs/") == "POST /api/logs/"


def test_the_window_between_two_marks_counts_all_but_polling_and_the_measurers_own(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text(LOG, encoding="utf-8")
    tally = RequestTally()
    tally.sync_httpx_settings()["event_hooks"]["request"][0](
        httpx.Request("POST", f"http://127.0.0.1:1/api/deployments/{RUN}/create_flow_run")
    )
    tally.sync_httpx_settings()["event_hooks"]["request"][0](
        httpx.Request("GET", f"http://127.0.0.1:1/api/flow_runs/{RUN}")
    )
    assert tally.sent == 2
    found = ServerLog(path, "http://127.0.0.1:1/api").count("one-start-1", "one-end-2", own=tally)
    assert (found.answered, found.polling, found.own, found.counted) == (7, 2, 2, 3)
    assert found.websockets == 1
    assert dict(found.by_kind) == {
        "GET /api/flow_runs/{id}": 1,
        "GET /api/csrf-token": 1,
        "POST /api/flow_runs/{id}/set_state": 1,
    }


def test_lines_that_are_no_request_are_not_counted() -> None:
    found = count_lines(["INFO:     Started server process [1]", "INFO:     connection open", ""])
    assert (found.answered, found.counted, found.websockets) == (0, 0, 0)
