"""The fault kinds the fault matrix needs besides the first ones: a read timeout after processing, a token
that expires mid-run, corrupt downloads, unlisted statuses — and the count of requests an API accepted."""

from __future__ import annotations

import base64
import io
import json
import zipfile
import zlib
from typing import Any

import httpx
import pytest

from sandbox.answer_faults import Answer, corrupt_download, with_unlisted_status
from sandbox.config import SandboxConfig
from sandbox.fault_middleware import FaultMiddleware
from sandbox.faults import IN_PROCESS_KEY, ConnectionDropped, FaultPlan, FaultRule
from sandbox.inprocess import SANDBOX_ORIGIN
from sandbox.request_counter import RequestCounter
from tests.sandbox.test_address_support import (
    Clock,
    address_client,
    batch_body,
    create_output,
    make_config,
    submit_batch,
    upload,
)
from tests.sandbox.test_newspaper_support import (
    ADDRESS,
    ORDERS,
    FakeClock,
    authorised_client,
    grant_token,
    sandbox,
    standard_order,
)

SMALL_BATCH = (
    b"KundenNr;Prename;Name;Streetname;HouseNo;ZIPCode;TownName\r\n"
    b"A1;Hans;Muster;Lindenstrasse;12;6010;Kriens\r\n"
)


async def accepted(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    return list((await client.get(f"{SANDBOX_ORIGIN}/_sandbox/accepted")).json())


async def test_a_read_timeout_in_process_times_out_at_once_after_the_request_was_processed() -> None:
    clock = Clock()
    config = make_config(clock=clock, job_seconds=4.0)
    config.faults.add(FaultRule(api="address", endpoint="runbatch", kind="read_timeout"))
    async with address_client(config) as client:
        input_token, output_token = await upload(client, SMALL_BATCH), await create_output(client)
        with pytest.raises(httpx.ReadTimeout, match="read timeout on address/runbatch"):
            await client.post("/runbatch", json=batch_body(input_token, output_token))
        clock.advance(5)
        assert b"Muster" in (await client.get(f"/downloadfile/{output_token}")).content
        assert {"api": "address", "method": "POST", "endpoint": "runbatch", "count": 1} in await accepted(
            client
        )


async def test_a_read_timeout_over_a_socket_holds_the_answer_then_closes() -> None:
    answered: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        answered.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    plan = FaultPlan([FaultRule(api="address", kind="read_timeout", value=0.01)])
    middleware = FaultMiddleware(app, plan, RequestCounter())
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/address/REST/v1/ping"}
    with pytest.raises(ConnectionDropped, match="read timeout"):
        await middleware(scope, _no_body, send)
    assert answered == ["/address/REST/v1/ping"]
    assert sent[0]["type"] == "http.response.start" and sent[-1].get("more_body") is True
    assert IN_PROCESS_KEY not in scope


async def _no_body() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def test_an_expired_token_is_refused_with_401_and_a_new_one_works() -> None:
    config, clock = sandbox()
    config.faults.add(FaultRule(api="newspaper", endpoint="*orders/*/status", kind="token_expired"))
    async with authorised_client(config) as http:
        order_id = (await http.post(f"{ORDERS}/standard", json=standard_order(clock))).json()["id"]
        refused = await http.get(f"{ORDERS}/{order_id}/status")
        assert refused.status_code == 401
        assert 'error="invalid_token"' in refused.headers["www-authenticate"]
        # The token stays expired; a token asked for now is served.
        assert (await http.get(f"{ORDERS}/{order_id}/status")).status_code == 401
        http.headers["Authorization"] = f"Bearer {await grant_token(http)}"
        assert (await http.get(f"{ORDERS}/{order_id}/status")).json()["statusValue"] == "LOADED"


def _document(body: dict[str, Any]) -> tuple[int, str]:
    document = body["document"]
    return int(document["size"]), str(document["data"])


async def _purchase_document(config: SandboxConfig, rule: FaultRule) -> dict[str, Any]:
    config.faults.add(rule)
    purchase = {
        "title": "T",
        "depositDate": "2031-03-04",
        "addresses": [{"id": "1", "lastName": "Muster", "street": "Seestr.", "zipCode": 6280, "city": "X"}],
    }
    async with authorised_client(config) as http:
        purchase_id = (await http.post(f"{ADDRESS}/purchases", json=purchase)).json()
        response = await http.get(f"{ADDRESS}/purchases/{purchase_id}/document/order-confirmation")
    assert response.status_code == 200
    return dict(response.json())


async def test_a_truncated_document_decodes_to_less_than_its_size() -> None:
    config, _ = sandbox()
    body = await _purchase_document(
        config, FaultRule(api="newspaper", endpoint="*/document/*", kind="corrupt_download", value="size")
    )
    size, data = _document(body)
    content = base64.b64decode(data, validate=True)
    assert content.startswith(b"%PDF") and len(content) == size // 2


async def test_a_document_whose_data_is_no_base64() -> None:
    config, _ = sandbox()
    body = await _purchase_document(
        config, FaultRule(api="newspaper", endpoint="*/document/*", kind="corrupt_download", value="base64")
    )
    _, data = _document(body)
    with pytest.raises(ValueError):
        base64.b64decode(data, validate=True)
    with pytest.raises(ValueError):
        base64.b64decode(data)


async def test_a_corrupt_structure_file_opens_but_fails_its_crc() -> None:
    config, _ = sandbox()
    config.faults.add(
        FaultRule(api="newspaper", endpoint="*/structurefiles/*", kind="corrupt_download", value="zip")
    )
    async with authorised_client(config) as http:
        files = (await http.get(f"{ADDRESS}/structurefiles/9")).json()
    first, second = (base64.b64decode(item["data"], validate=True) for item in files)
    assert len(first) == files[0]["size"]
    with zipfile.ZipFile(io.BytesIO(first)) as archive, pytest.raises((zipfile.BadZipFile, zlib.error)):
        archive.read(archive.namelist()[0])
    with zipfile.ZipFile(io.BytesIO(second)) as archive:
        assert archive.testzip() is None  # only the first file is spoiled


async def test_a_truncated_output_file_breaks_off_after_half_of_its_declared_length() -> None:
    clock = Clock()
    config = make_config(clock=clock, job_seconds=1.0)
    async with address_client(config) as client:
        _, output_token = await submit_batch(client, SMALL_BATCH)
        clock.advance(2)
        whole = (await client.get(f"/downloadfile/{output_token}")).content
        config.faults.add(
            FaultRule(api="address", endpoint="downloadfile/*", kind="corrupt_download", value="size")
        )
        received = b""
        with pytest.raises(httpx.RemoteProtocolError, match=f"{len(whole) // 2} of {len(whole)} bytes"):
            async with client.stream("GET", f"/downloadfile/{output_token}") as response:
                assert response.headers["content-length"] == str(len(whole))
                async for chunk in response.aiter_bytes():
                    received += chunk
    assert whole.startswith(received)


def test_a_corruption_that_does_not_fit_leaves_the_answer_alone() -> None:
    raw = Answer(200, [(b"content-type", b"application/octet-stream")], b"plain text, no archive")
    assert corrupt_download(raw, "zip") is raw
    assert corrupt_download(raw, "base64") is raw
    with pytest.raises(ValueError, match="none of size, base64, zip"):
        corrupt_download(raw, "checksum")


async def test_unlisted_statuses_replace_the_job_and_order_status() -> None:
    clock = Clock()
    config = make_config(clock=clock)
    config.faults.add(FaultRule(api="address", endpoint="checkbatchstatus/*", kind="unlisted_status"))
    async with address_client(config) as client:
        batch_token, _ = await submit_batch(client, SMALL_BATCH)
        body = (await client.get(f"/checkbatchstatus/{batch_token}")).json()
    assert body["CheckBatchStatusResult"]["BatchStatus"]["TokenStatus"] == 9
    assert body["CheckBatchStatusResult"]["Status"] == 0

    news, news_clock = sandbox()
    news.faults.add(
        FaultRule(api="newspaper", endpoint="*orders/*/status", kind="unlisted_status", value="ARCHIVED")
    )
    async with authorised_client(news) as http:
        order_id = (await http.post(f"{ORDERS}/standard", json=standard_order(news_clock))).json()["id"]
        assert (await http.get(f"{ORDERS}/{order_id}/status")).json()["statusValue"] == "ARCHIVED"
        assert (await http.get(f"{ORDERS}/{order_id}/status")).json()["statusValue"] == "LOADED"


def test_an_answer_without_a_status_field_is_left_alone() -> None:
    answer = Answer(200, [(b"content-type", b"application/json")], json.dumps({"id": 7}).encode())
    assert with_unlisted_status(answer) is answer


async def test_accepted_requests_are_counted_apart_from_those_refused() -> None:
    config = make_config()
    config.faults.add(FaultRule(api="address", endpoint="uploadfile", kind="service_status", value=501))
    config.faults.add(FaultRule(api="address", endpoint="createfile", kind="lost_answer"))
    async with address_client(config) as client:
        refused = await client.post(
            "/uploadfile", content=SMALL_BATCH, headers={"Content-Type": "application/octet-stream"}
        )
        assert refused.json()["UploadFileResult"]["Status"] == 501
        await upload(client, SMALL_BATCH)
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get("/createfile")
        counts = (await client.get(f"{SANDBOX_ORIGIN}/_sandbox/requests")).json()
        assert {"api": "address", "method": "POST", "endpoint": "uploadfile", "count": 2} in counts
        assert await accepted(client) == [
            {"api": "address", "method": "GET", "endpoint": "createfile", "count": 1},
            {"api": "address", "method": "POST", "endpoint": "uploadfile", "count": 1},
        ]


async def test_a_newspaper_order_refused_in_a_200_is_not_accepted() -> None:
    config, clock = sandbox()
    async with authorised_client(config) as http:
        past = standard_order(clock, deliveryDate=(FakeClock().today().replace(year=2020)).isoformat())
        refused = await http.post(f"{ORDERS}/standard", json=past)
        assert refused.status_code == 200 and refused.json()["id"] is None
        assert (await http.post(f"{ORDERS}/standard", json=standard_order(clock))).json()["id"]
        orders = [item for item in await accepted(http) if item["endpoint"].endswith("orders/standard")]
    assert [item["count"] for item in orders] == [1]


def test_a_per_segment_star_never_crosses_a_slash() -> None:
    rule = FaultRule(api="newspaper", endpoint="purchases/*/output-addresses", kind="drop", per_segment=True)
    assert rule.matches("newspaper", "GET", "purchases/880001/output-addresses")
    assert not rule.matches("newspaper", "GET", "purchases/880001/document/output-addresses")
    plain = rule.model_copy(update={"per_segment": False})
    assert plain.matches("newspaper", "GET", "purchases/880001/document/output-addresses")
