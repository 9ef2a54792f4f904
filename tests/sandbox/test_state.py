"""Sandbox state in a state directory: what one app stores another app (or process) on the same directory
finds, ids never handed out twice by processes running at once, shared request and fault counts — and the
in-memory default unchanged."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from sandbox.config import SandboxConfig
from sandbox.faults import FaultPlan, FaultRule
from sandbox.inprocess import SANDBOX_ORIGIN, SandboxTransport
from sandbox.state_file import STATE_FILE
from tests.sandbox.test_address_support import (
    Clock,
    address_client,
    batch_body,
    create_output,
    make_config,
    upload,
)
from tests.sandbox.test_newspaper_masterdata import statistics_record
from tests.sandbox.test_newspaper_purchases import purchase
from tests.sandbox.test_newspaper_support import (
    ORDERS,
    PURCHASES,
    STATISTICS,
    FakeClock,
    authorised_client,
    standard_order,
)

REPO = Path(__file__).resolve().parents[2]
SMALL_BATCH = (
    b"KundenNr;Prename;Name;Streetname;HouseNo;ZIPCode;TownName\r\n"
    b"A1;Hans;Muster;Lindenstrasse;12;6010;Kriens\r\n"
)
PURCHASE = {
    "title": "Abonnenten",
    "depositDate": "2031-03-04",
    "addresses": [
        {"id": "1", "lastName": "Muster", "street": "Lindenstr.", "zipCode": 6010, "city": "Kriens"}
    ],
}


def newspaper_config(state_dir: Path | None, clock: FakeClock, **settings: Any) -> SandboxConfig:
    return SandboxConfig(state_dir=state_dir, clock=clock, job_seconds=10.0, **settings)


async def test_an_order_made_by_one_app_is_served_by_the_next(tmp_path: Path) -> None:
    clock = FakeClock()
    # The order keeps the statuses it was accepted with, whatever the next app is configured with.
    three = ("LOADED", "CONTROL", "DONE")
    async with authorised_client(newspaper_config(tmp_path, clock, order_statuses=three)) as first:
        order_id = (await first.post(f"{ORDERS}/standard", json=standard_order(clock))).json()["id"]
        purchase_id = (await first.post(PURCHASES, json=PURCHASE)).json()
        assert (await first.post(STATISTICS, json={"statistics": [statistics_record()]})).status_code == 200

    later = FakeClock()
    later.advance(6)
    async with authorised_client(newspaper_config(tmp_path, later)) as second:
        assert (await second.get(f"{ORDERS}/{order_id}/status")).json()["statusValue"] == "CONTROL"
        later.advance(5)
        assert (await second.get(f"{ORDERS}/{order_id}/status")).json()["statusValue"] == "DONE"
        summary = (await second.get(f"{ORDERS}/{order_id}/summary")).json()
        assert summary["issueNumber"] == {"from": 24} and summary["statusValue"] == "DONE"
        # Validated only (no sorting module): its validation ran on in the first app's absence.
        progress = (await second.get(f"{PURCHASES}/{purchase_id}/progress")).json()
        assert progress["validationStatus"] == "READY"
        # The issue number is known as used, and the next order takes the next id.
        again = await second.post(f"{ORDERS}/standard", json=standard_order(later, deliveryDate="2031-01-01"))
        assert [item["error"][:4] for item in again.json()["errors"]] == ["0007"]
        other = standard_order(later, issueNumber={"from": 25})
        assert (await second.post(f"{ORDERS}/standard", json=other)).json()["id"] == order_id + 1
        received = (await second.get(f"{SANDBOX_ORIGIN}/newspaper/_sandbox/received")).json()
        assert received["statisticsUploads"] == [1]
    assert (tmp_path / STATE_FILE).is_file()


async def test_a_file_uploaded_through_one_app_is_aligned_and_downloaded_through_others(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with address_client(make_config(state_dir=tmp_path, clock=clock, job_seconds=4.0)) as first:
        input_token = await upload(first, SMALL_BATCH)
        output_token = await create_output(first)

    async with address_client(make_config(state_dir=tmp_path, clock=clock, job_seconds=4.0)) as second:
        result = (await second.post("/runbatch", json=batch_body(input_token, output_token))).json()
        assert result["RunBatchResult"]["Status"] == 0
        batch_token = result["RunBatchResult"]["BatchToken"]
        assert result["RunBatchResult"]["SettlementId"] == 4_200_001

    clock.advance(5)
    async with address_client(make_config(state_dir=tmp_path, clock=clock)) as third:
        status = (await third.get(f"/checkbatchstatus/{batch_token}")).json()["CheckBatchStatusResult"]
        assert status["BatchStatus"]["TokenStatus"] == 4
        download = await third.get(f"/downloadfile/{output_token}")
        assert download.headers["content-type"] == "application/octet-stream"
        assert b"Muster" in download.content
        assert (await third.get(f"/deletefile/{batch_token}")).json() == {"Status": 0}

    async with address_client(make_config(state_dir=tmp_path, clock=clock)) as fourth:
        assert (await fourth.get(f"/downloadfile/{output_token}")).json() == {"Status": 302}


async def test_request_counts_and_fault_counts_are_shared(tmp_path: Path) -> None:
    rule = {"api": "address", "endpoint": "ping", "kind": "http_status", "value": 503, "times": 1}
    plan_text = json.dumps([rule])
    first = make_config(state_dir=tmp_path, faults=FaultPlan.load(plan_text))
    second = make_config(state_dir=tmp_path, faults=FaultPlan.load(plan_text))
    async with address_client(first) as one, address_client(second) as two:
        answers = [(await client.get("/ping")).status_code for client in (one, two, one, two)]
        assert answers == [503, 200, 200, 200]
        counts = (await two.get(f"{SANDBOX_ORIGIN}/_sandbox/requests")).json()
        assert counts == [{"api": "address", "method": "GET", "endpoint": "ping", "count": 4}]
        [shown] = (await one.get(f"{SANDBOX_ORIGIN}/_sandbox/faults")).json()
        assert shown["fired"] == 1

        # Replacing the plan re-arms it for every process.
        assert (await one.put(f"{SANDBOX_ORIGIN}/_sandbox/faults", json=[rule])).status_code == 200
        assert (await two.get("/ping")).status_code == 503
        assert (await one.delete(f"{SANDBOX_ORIGIN}/_sandbox/requests")).status_code == 200
        assert (await two.get(f"{SANDBOX_ORIGIN}/_sandbox/requests")).json() == []


async def test_concurrent_requests_through_two_apps_on_one_directory_all_complete(tmp_path: Path) -> None:
    clock = FakeClock()
    async with (
        authorised_client(newspaper_config(tmp_path, clock)) as one,
        authorised_client(newspaper_config(tmp_path, clock)) as two,
    ):

        async def submit(http: httpx.AsyncClient, issue: int) -> int:
            body = standard_order(clock, issueNumber={"from": issue})
            order_id = int((await http.post(f"{ORDERS}/standard", json=body)).json()["id"])
            assert (await http.get(f"{ORDERS}/{order_id}/status")).status_code == 200
            return order_id

        ids = await asyncio.gather(*(submit((one, two)[issue % 2], issue) for issue in range(1, 41)))
    assert sorted(ids) == list(range(7_000_001, 7_000_041))


async def test_in_memory_apps_share_nothing_and_write_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    async with authorised_client(newspaper_config(None, clock)) as first:
        order_id = (await first.post(f"{ORDERS}/standard", json=standard_order(clock))).json()["id"]
        assert (await first.get(f"{ORDERS}/{order_id}/status")).status_code == 200
    async with authorised_client(newspaper_config(None, clock)) as second:
        assert (await second.get(f"{ORDERS}/{order_id}/status")).status_code == 404
        assert (await second.post(f"{ORDERS}/standard", json=standard_order(clock))).json()["id"] == order_id
    assert list(tmp_path.rglob(STATE_FILE)) == []


async def test_a_lost_answer_keeps_what_the_request_did(tmp_path: Path) -> None:
    clock = FakeClock()
    config = newspaper_config(tmp_path, clock)
    config.faults.add(FaultRule(api="newspaper", endpoint="*orders/standard", kind="lost_answer"))
    async with authorised_client(config) as http:
        with pytest.raises(httpx.RemoteProtocolError):
            await http.post(f"{ORDERS}/standard", json=standard_order(clock))
    async with authorised_client(newspaper_config(tmp_path, clock)) as other:
        assert (await other.get(f"{ORDERS}/7000001/status")).json()["statusValue"] == "LOADED"
        following = standard_order(clock, issueNumber={"from": 25})
        assert (await other.post(f"{ORDERS}/standard", json=following)).json()["id"] == 7000002


async def test_a_lost_answer_on_runbatch_still_starts_the_job() -> None:
    clock = Clock()
    config = make_config(clock=clock, job_seconds=4.0)
    config.faults.add(FaultRule(api="address", endpoint="runbatch", kind="lost_answer"))
    async with address_client(config) as client:
        input_token, output_token = await upload(client, SMALL_BATCH), await create_output(client)
        with pytest.raises(httpx.RemoteProtocolError):
            await client.post("/runbatch", json=batch_body(input_token, output_token))
        clock.advance(5)
        assert b"Muster" in (await client.get(f"/downloadfile/{output_token}")).content
        counts = (await client.get(f"{SANDBOX_ORIGIN}/_sandbox/requests")).json()
        assert {"api": "address", "method": "POST", "endpoint": "runbatch", "count": 1} in counts


async def test_processed_status_answers_201_after_doing_the_work() -> None:
    clock = Clock()
    config = make_config(clock=clock, job_seconds=4.0)
    config.faults.add(FaultRule(api="address", endpoint="runbatch", kind="processed_status"))
    config.faults.add(FaultRule(api="address", endpoint="ping", kind="processed_status", value=106))
    async with address_client(config) as client:
        input_token, output_token = await upload(client, SMALL_BATCH), await create_output(client)
        response = await client.post("/runbatch", json=batch_body(input_token, output_token))
        assert response.status_code == 200
        assert response.json() == {"RunBatchResult": {"BatchToken": None, "SettlementId": 0, "Status": 201}}
        assert (await client.get("/ping")).json() == {"Status": 106}
        clock.advance(5)
        assert b"Muster" in (await client.get(f"/downloadfile/{output_token}")).content
        # The job took a settlement id although the caller never saw it.
        again = (await client.post("/runbatch", json=batch_body(input_token, output_token))).json()
        assert again["RunBatchResult"]["SettlementId"] == 4_200_002


async def test_processed_status_on_a_newspaper_order_answers_0000_after_accepting_it() -> None:
    clock = FakeClock()
    config = newspaper_config(None, clock)
    config.faults.add(FaultRule(api="newspaper", endpoint="*orders/standard", kind="processed_status"))
    async with authorised_client(config) as http:
        response = await http.post(f"{ORDERS}/standard", json=standard_order(clock))
        assert response.status_code == 200
        body = response.json()
        assert "id" not in body and [item["error"][:4] for item in body["errors"]] == ["0000"]
        assert (await http.get(f"{ORDERS}/7000001/status")).json()["statusValue"] == "LOADED"


async def test_processed_status_with_id_answers_the_order_id_beside_the_error() -> None:
    clock = FakeClock()
    config = newspaper_config(None, clock)
    value = {"code": "0030", "with_id": True}
    config.faults.add(
        FaultRule(api="newspaper", endpoint="*orders/standard", kind="processed_status", value=value)
    )
    async with authorised_client(config) as http:
        response = await http.post(f"{ORDERS}/standard", json=standard_order(clock))
        assert response.status_code == 200
        body = response.json()
        assert body["id"] == 7_000_001
        assert [item["error"][:4] for item in body["errors"]] == ["0030"]
        assert (await http.get(f"{ORDERS}/7000001/status")).json()["statusValue"] == "LOADED"
        accepted = (await http.get(f"{SANDBOX_ORIGIN}/_sandbox/accepted")).json()
        assert [item["count"] for item in accepted if item["endpoint"].endswith("orders/standard")] == [1]


async def test_processed_status_with_id_answers_the_purchase_id_beside_the_error() -> None:
    config = newspaper_config(None, FakeClock())
    value = {"code": "0030", "with_id": True}
    config.faults.add(
        FaultRule(api="newspaper", endpoint="*v1/purchases", kind="processed_status", value=value)
    )
    async with authorised_client(config) as http:
        response = await http.post(PURCHASES, json=purchase())
        assert response.status_code == 200
        body = response.json()
        assert body["id"] == 880_001 and [item["error"][:4] for item in body["errors"]] == ["0030"]
        assert (await http.get(f"{PURCHASES}/880001/progress")).status_code == 200


async def test_processed_status_without_an_api_answer_is_http_500() -> None:
    config = SandboxConfig()
    config.faults.add(FaultRule(api="auth", kind="processed_status"))
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        response = await http.post(
            f"{SANDBOX_ORIGIN}/auth/OAuth/token",
            data={
                "client_id": "sandbox-client",
                "client_secret": "x",
                "scope": "s",
                "grant_type": "client_credentials",
            },
        )
        assert response.status_code == 500
        assert config.tokens.requests("sandbox-client") == 1


# Submits orders for issues 1..N in the state directory given, as another process would: says "ready" once it
# holds a token, starts on "go" (so two of them send at the same moment) and prints the answers as JSON.
_ORDERING_PROCESS = """
import asyncio, json, sys
from pathlib import Path

import httpx

from sandbox.config import SandboxConfig
from sandbox.inprocess import SandboxTransport, newspaper_url, token_url

state_dir, count, delivery = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
order = json.loads(Path(sys.argv[4]).read_text())
orders = f"{newspaper_url()}/logistics/newspaper/submission/v1/orders/standard"


async def main() -> list[dict]:
    transport = SandboxTransport(SandboxConfig(state_dir=state_dir))
    async with httpx.AsyncClient(transport=transport) as http:
        form = {"client_id": "sandbox-client", "client_secret": "sandbox-secret",
                "scope": "SENDINGS_NEWSPAPER_SUBMISSION_ORDERS", "grant_type": "client_credentials"}
        token = (await http.post(token_url(), data=form)).json()["access_token"]
        http.headers["Authorization"] = f"Bearer {token}"
        print("ready", flush=True)
        sys.stdin.readline()
        answers = []
        for issue in range(1, count + 1):
            order["basisInformation"].update(issueNumber={"from": issue}, deliveryDate=delivery)
            answers.append((await http.post(orders, json=order)).json())
        return answers


print(json.dumps(asyncio.run(main())))
"""


def test_two_processes_ordering_at_once_get_distinct_ids(tmp_path: Path) -> None:
    state_dir, count = tmp_path / "state", 30
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _ORDERING_PROCESS,
                str(state_dir),
                str(count),
                delivery,
                str(REPO / "examples" / "newspaper-order.json"),
            ],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for delivery in ("2031-03-04", "2031-03-11")
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            assert process.stdout.readline() == "ready\n", process.stderr.read() if process.stderr else ""
        answers = []
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        for process in processes:
            stdout, stderr = process.communicate(timeout=60)
            assert process.returncode == 0, stderr
            answers.append(json.loads(stdout))
    finally:
        for process in processes:
            process.kill()

    ids = [answer["id"] for per_process in answers for answer in per_process if answer["id"] is not None]
    assert sorted(ids) == list(range(7_000_001, 7_000_001 + count))
    # Each issue went to whichever process asked first; the other was told the issue is taken (0007).
    for first, second in zip(*answers, strict=True):
        assert (first["id"] is None) != (second["id"] is None), (first, second)
        refused = first if first["id"] is None else second
        assert [item["error"][:4] for item in refused["errors"]] == ["0007"]
