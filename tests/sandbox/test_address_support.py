"""Address-service sandbox: shared helpers, and the checks every endpoint makes (Basic auth, injected
service statuses, per-minute limits, unknown tokens)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from sandbox.config import SandboxConfig
from sandbox.faults import FaultRule
from sandbox.inprocess import SandboxTransport, address_service_url

pytestmark = pytest.mark.asyncio

USER, PASSWORD = "sandbox-user", "sandbox-password"
MAINTENANCE, VALIDATION = SandboxConfig().address_batch_keys
START = 1_700_000_000.0


class Clock:
    """A controllable epoch-seconds clock."""

    def __init__(self, start: float = START) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_config(**overrides: Any) -> SandboxConfig:
    overrides.setdefault("clock", Clock())
    return SandboxConfig(**overrides)


@asynccontextmanager
async def address_client(
    config: SandboxConfig | None = None, auth: tuple[str, str] | None = (USER, PASSWORD)
) -> AsyncIterator[httpx.AsyncClient]:
    config = config or make_config()
    async with httpx.AsyncClient(
        transport=SandboxTransport(config), base_url=address_service_url(), auth=auth
    ) as client:
        yield client


def query_body(key: str = MAINTENANCE, record_id: int = 1, **fields: str) -> dict[str, Any]:
    data = [{"FieldName": name, "Value": value} for name, value in fields.items()]
    return {"address": {"Id": record_id, "Data": data}, "key": key, "timeout": 10000}


def result_data(body: dict[str, Any]) -> dict[str, str]:
    return {item["FieldName"]: item["Value"] for item in body["RunQuery2Result"]["Result"]["Data"]}


async def upload(client: httpx.AsyncClient, content: bytes) -> str:
    response = await client.post(
        "/uploadfile", content=content, headers={"Content-Type": "application/octet-stream"}
    )
    body = response.json()["UploadFileResult"]
    assert body["Status"] == 0
    return str(body["FileToken"])


async def create_output(client: httpx.AsyncClient) -> str:
    body = (await client.get("/createfile")).json()["CreateFileResult"]
    assert body["Status"] == 0
    return str(body["FileToken"])


def batch_body(input_token: str, output_token: str, key: str = MAINTENANCE, **extra: Any) -> dict[str, Any]:
    return {
        "key": key,
        "replaceItems": [
            {"Search": "{###INPUTFILE###}", "Replacement": input_token},
            {"Search": "{###OUTPUTFILE###}", "Replacement": output_token},
        ],
        **extra,
    }


async def submit_batch(client: httpx.AsyncClient, content: bytes, key: str = MAINTENANCE) -> tuple[str, str]:
    """(batch token, output file token) of a job aligning ``content``."""
    input_token = await upload(client, content)
    output_token = await create_output(client)
    body = (await client.post("/runbatch", json=batch_body(input_token, output_token, key))).json()
    assert body["RunBatchResult"]["Status"] == 0
    return str(body["RunBatchResult"]["BatchToken"]), output_token


HANS_MUSTER = {
    "Prename_in": "Hans",
    "Name_in": "Muster",
    "StreetName_in": "Lindenstrasse",
    "HouseNo_in": "12",
    "ZIPCode_in": "6010",
    "TownName_in": "Kriens",
}
AUTOCOMPLETE_BODY = {"request": {"ONRP": 0, "ZipCode": "60", "TownName": "K"}, "zipOrderMode": 0}

# (method, path, JSON body, result wrapper or None for a bare {Status})
ENDPOINTS: list[tuple[str, str, dict[str, Any] | None, str | None]] = [
    ("GET", "/ping", None, None),
    ("GET", "/createfile", None, "CreateFileResult"),
    ("POST", "/runbatch", batch_body("a", "b"), "RunBatchResult"),
    (
        "POST",
        "/runbatchwithclient",
        batch_body("a", "b", billingReferenceNumber="RRN-0001"),
        "RunBatchResult",
    ),
    ("GET", "/checkbatchstatus/abc", None, "CheckBatchStatusResult"),
    ("GET", "/downloadfile/abc", None, None),
    ("GET", "/deletefile/abc", None, None),
    ("POST", "/runquery2", query_body(**HANS_MUSTER), "RunQuery2Result"),
    ("POST", "/runquery2withclient", query_body(**HANS_MUSTER), "RunQuery2Result"),
    ("POST", "/autocomplete4", AUTOCOMPLETE_BODY, "QueryAutoComplete4Result"),
    ("POST", "/autocomplete3", AUTOCOMPLETE_BODY, "QueryAutoComplete3Result"),
    ("POST", "/autocomplete2", {"request": {"Zipcode": "60"}, "zipOrderMode": 0}, "QueryAutoCompleteResult"),
    ("GET", "/buildingverification2?streetname=x", None, "QueryBuildingVerification2Result"),
]


def status_of(body: dict[str, Any], wrapper: str | None) -> int:
    return int(body[wrapper]["Status"] if wrapper else body["Status"])


async def call(
    client: httpx.AsyncClient, method: str, path: str, body: dict[str, Any] | None
) -> httpx.Response:
    return await client.request(method, path, json=body)


async def test_ping_answers_http_200_with_status_0() -> None:
    async with address_client() as client:
        response = await client.get("/ping")
    assert response.status_code == 200
    assert response.json() == {"Status": 0}


async def test_upload_stores_the_body_under_a_file_token() -> None:
    async with address_client() as client:
        first = await upload(client, b"Name\nMuster\n")
        second = await upload(client, b"Name\nMeier\n")
        created = await create_output(client)
    assert len({first, second, created}) == 3


@pytest.mark.parametrize(("method", "path", "body", "wrapper"), ENDPOINTS)
async def test_every_endpoint_checks_basic_credentials(
    method: str, path: str, body: dict[str, Any] | None, wrapper: str | None
) -> None:
    config = make_config()
    async with address_client(config, auth=None) as anonymous:
        missing = await call(anonymous, method, path, body)
    async with address_client(config, auth=(USER, "wrong")) as wrong_password:
        bad_password = await call(wrong_password, method, path, body)
    async with address_client(config, auth=("nobody", PASSWORD)) as stranger:
        unknown_user = await call(stranger, method, path, body)

    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Basic")
    for response, status in ((bad_password, 101), (unknown_user, 102)):
        assert response.status_code == 200
        payload = response.json()
        assert status_of(payload, wrapper) == status
        if wrapper:
            assert list(payload) == [wrapper]


async def test_credentials_are_read_preemptively_from_the_header() -> None:
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    async with address_client(auth=None) as client:
        response = await client.get("/ping", headers={"Authorization": f"Basic {token}"})
        garbled = await client.get("/ping", headers={"Authorization": "Basic !!!"})
    assert response.json() == {"Status": 0}
    assert garbled.status_code == 401


@pytest.mark.parametrize(
    ("method", "path", "body", "wrapper", "status"),
    [(*endpoint, (106, 201, 501, 999, 203)[i % 5]) for i, endpoint in enumerate(ENDPOINTS)],
)
async def test_injected_service_status_is_answered_in_the_wrapper(
    method: str, path: str, body: dict[str, Any] | None, wrapper: str | None, status: int
) -> None:
    config = make_config()
    endpoint = path.lstrip("/").split("?")[0]
    config.faults.add(FaultRule(api="address", endpoint=endpoint, kind="service_status", value=status))
    async with address_client(config) as client:
        first = await call(client, method, path, body)
        second = await call(client, method, path, body)
    assert first.status_code == 200
    assert status_of(first.json(), wrapper) == status
    assert status_of(second.json(), wrapper) != status


async def test_query_limit_per_minute_answers_106_until_the_window_passes() -> None:
    clock = Clock()
    config = make_config(clock=clock, max_queries_per_minute=2)
    async with address_client(config) as client:
        statuses = [
            (await client.post("/runquery2", json=query_body(**HANS_MUSTER))).json()["RunQuery2Result"][
                "Status"
            ]
            for _ in range(3)
        ]
        limited = (await client.post("/autocomplete4", json=AUTOCOMPLETE_BODY)).json()
        batch_calls_unaffected = (await client.get("/createfile")).json()["CreateFileResult"]["Status"]
        clock.advance(61)
        after = (await client.post("/runquery2", json=query_body(**HANS_MUSTER))).json()
    assert statuses == [0, 0, 106]
    assert limited["QueryAutoComplete4Result"] == {"AutoCompleteResult": [], "Status": 106}
    assert batch_calls_unaffected == 0
    assert after["RunQuery2Result"]["Status"] == 0


async def test_upload_limit_per_minute_answers_501() -> None:
    clock = Clock()
    config = make_config(clock=clock, max_uploads_per_minute=1)
    async with address_client(config) as client:
        await upload(client, b"Name\nMuster\n")
        refused = await client.post("/uploadfile", content=b"Name\nMeier\n")
        clock.advance(60.5)
        again = await upload(client, b"Name\nMeier\n")
    assert refused.json() == {"UploadFileResult": {"FileToken": None, "Status": 501}}
    assert again


@pytest.mark.parametrize(
    ("path", "wrapper"),
    [
        ("/checkbatchstatus/unknown-token", "CheckBatchStatusResult"),
        ("/downloadfile/unknown-token", None),
        ("/deletefile/unknown-token", None),
    ],
)
async def test_unknown_tokens_answer_302(path: str, wrapper: str | None) -> None:
    async with address_client() as client:
        response = await client.get(path)
    assert response.status_code == 200
    assert status_of(response.json(), wrapper) == 302


async def test_deletefile_forgets_an_upload() -> None:
    async with address_client() as client:
        token = await upload(client, b"Name\nMuster\n")
        deleted = (await client.get(f"/deletefile/{token}")).json()
        again = (await client.get(f"/deletefile/{token}")).json()
        output = await create_output(client)
        run = (await client.post("/runbatch", json=batch_body(token, output))).json()
    assert deleted == {"Status": 0}
    assert again == {"Status": 302}
    assert run["RunBatchResult"]["Status"] == 302


async def test_malformed_bodies_answer_801() -> None:
    async with address_client() as client:
        batch = await client.post(
            "/runbatch", content=b"not json", headers={"Content-Type": "application/json"}
        )
        query = await client.post("/runquery2", json={"key": MAINTENANCE, "address": {"Id": 1}})
        complete = await client.post("/autocomplete4", json={"request": {"ONRP": "x"}})
        empty_upload = await client.post("/uploadfile", content=b"")
    assert batch.json()["RunBatchResult"]["Status"] == 801
    assert query.json()["RunQuery2Result"]["Status"] == 801
    assert complete.json()["QueryAutoComplete4Result"]["Status"] == 801
    assert empty_upload.json()["UploadFileResult"]["Status"] == 801
