"""The request log (``request_log`` of the sandbox config, ``postflows sandbox --request-log``): every API
request a JSON line with its time, method, path, API, status and fault; control requests left out."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

from sandbox.config import SandboxConfig
from sandbox.faults import FaultPlan, FaultRule
from sandbox.inprocess import SANDBOX_ORIGIN, SandboxTransport

USER, PASSWORD = "sandbox-user", "sandbox-password"


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_every_api_request_is_a_line_with_its_time_api_status_and_fault(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "requests.jsonl"
    config = SandboxConfig(
        request_log=log,
        faults=FaultPlan([FaultRule(api="address", endpoint="ping", kind="http_status", value=503)]),
    )
    transport = SandboxTransport(config)
    assert log.read_text() == ""  # made (with its folder) with the app, before any request
    before = time.time()
    async with httpx.AsyncClient(transport=transport, base_url=SANDBOX_ORIGIN) as http:
        assert (await http.get("/address/REST/v1/ping", auth=(USER, PASSWORD))).status_code == 503
        assert (await http.get("/address/REST/v1/ping", auth=(USER, PASSWORD))).status_code == 200
        assert (await http.get("/_sandbox/requests")).status_code == 200
        token = await http.post(
            "/auth/OAuth/token",
            data={"grant_type": "client_credentials", "client_id": "sandbox-client"},
            auth=("sandbox-client", "sandbox-secret"),
        )
    after = time.time()
    entries = _entries(log)
    assert [(e["method"], e["api"], e["endpoint"]) for e in entries] == [
        ("GET", "address", "ping"),
        ("GET", "address", "ping"),
        ("POST", "auth", "OAuth/token"),
    ]
    times = [e["time"] for e in entries]
    assert before <= times[0] <= times[1] <= times[2] <= after
    assert [e["path"] for e in entries][:2] == ["/address/REST/v1/ping"] * 2
    assert [(e["status"], e["fault"]) for e in entries] == [
        (503, "http_status"),
        (200, None),
        (token.status_code, None),
    ]
    assert all(e["seconds"] >= 0 for e in entries)


async def test_without_a_log_file_nothing_is_written(tmp_path: Path) -> None:
    config = SandboxConfig()
    async with httpx.AsyncClient(transport=SandboxTransport(config), base_url=SANDBOX_ORIGIN) as http:
        assert (await http.get("/address/REST/v1/ping", auth=(USER, PASSWORD))).status_code == 200
    assert config.request_log is None
    assert list(tmp_path.iterdir()) == []
