"""The sandbox served over HTTP as users run it (``postflows sandbox``, its state in a directory) answers 200
requests sent at once across its three APIs and its authorization server: each one correctly, and each one
counted.

Each must answer what the same request answers alone, and what is its own must be its own: a settlement id
per query, a file per upload, a token per grant. The request counts prove nothing was lost or counted twice.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from sandbox.config import COMMERCE_SCOPES, NEWSPAPER_SCOPES
from tests.e2e.conftest import PASSWORD, USER, ServedSandbox, served_sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

SUMMARY = "/newspaper/logistics/newspaper/submission/v1/newspapers/4711/summary"
QUERY = "/address/REST/v1/runquery2"
UPLOAD = "/address/REST/v1/uploadfile"
ZIPS = "/commerce/address/v1/zips"
TOKEN = "/auth/OAuth/token"
HANS_MUSTER = {
    "Prename_in": "Hans",
    "Name_in": "Muster",
    "StreetName_in": "Lindenstrasse",
    "HouseNo_in": "12",
    "ZIPCode_in": "6010",
    "TownName_in": "Kriens",
}
# How many of each request go out at once: 200 in all.
CROWD = {
    "address query": 50,
    "address upload": 25,
    "newspaper summary": 50,
    "token grant": 25,
    "commerce zips": 50,
}


@dataclass(frozen=True)
class Call:
    """One kind of request: what to send and the (API, endpoint) the sandbox counts it under."""

    method: str
    path: str
    counted: tuple[str, str]
    kwargs: dict[str, Any]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSandbox]:
    with served_sandbox(tmp_path_factory.mktemp("load-sandbox"), job_seconds=1) as served:
        yield served


def _query_body(record_id: int) -> dict[str, Any]:
    data = [{"FieldName": name, "Value": value} for name, value in HANS_MUSTER.items()]
    return {"address": {"Id": record_id, "Data": data}, "key": "postflows_maintenance_v1", "timeout": 10000}


def _grant(client_id: str, secret: str, scopes: tuple[str, ...]) -> dict[str, Any]:
    form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
    return {"data": {**form, "scope": " ".join(scopes)}}


def _calls(newspaper_token: str, commerce_token: str) -> dict[str, Call]:
    basic = httpx.BasicAuth(USER, PASSWORD)
    return {
        "address query": Call(
            "POST", QUERY, ("address", "runquery2"), {"json": _query_body(7), "auth": basic}
        ),
        "address upload": Call(
            "POST",
            UPLOAD,
            ("address", "uploadfile"),
            {"content": b"KDNR\tName\r\n1\tMuster\r\n", "auth": basic},
        ),
        "newspaper summary": Call(
            "GET",
            SUMMARY,
            ("newspaper", SUMMARY.removeprefix("/newspaper/")),
            {"headers": {"Authorization": f"Bearer {newspaper_token}"}},
        ),
        "token grant": Call(
            "POST",
            TOKEN,
            ("auth", "OAuth/token"),
            _grant("sandbox-client", "sandbox-secret", NEWSPAPER_SCOPES),
        ),
        "commerce zips": Call(
            "GET",
            ZIPS,
            ("commerce", ZIPS.removeprefix("/commerce/")),
            {"params": {"zipCity": "Bern"}, "headers": {"Authorization": f"Bearer {commerce_token}"}},
        ),
    }


def _answer(kind: str, response: httpx.Response) -> Any:
    """What must be the same for every request of ``kind`` (the single-use parts checked on their own)."""
    assert response.status_code == 200, (kind, response.status_code, response.text)
    body = response.json()
    if kind == "address query":
        return {**body["RunQuery2Result"], "SettlementId": "own"}  # each query is billed on its own
    if kind == "address upload":
        assert body["UploadFileResult"]["Status"] == 0, body
        return "uploaded"
    if kind == "token grant":
        assert body["token_type"] == "Bearer" and body["access_token"], body
        return body["scope"]
    return body


async def _token(http: httpx.AsyncClient, client_id: str, secret: str, scopes: tuple[str, ...]) -> str:
    response = await http.post(TOKEN, **_grant(client_id, secret, scopes))
    response.raise_for_status()
    return str(response.json()["access_token"])


async def test_two_hundred_requests_at_once_are_all_answered_correctly(sandbox: ServedSandbox) -> None:
    limits = httpx.Limits(max_connections=250, max_keepalive_connections=250)
    async with httpx.AsyncClient(base_url=sandbox.origin, limits=limits, timeout=60) as http:
        newspaper_token = await _token(http, "sandbox-client", "sandbox-secret", NEWSPAPER_SCOPES)
        commerce_token = await _token(
            http, "sandbox-commerce-client", "sandbox-commerce-secret", COMMERCE_SCOPES
        )
        calls = _calls(newspaper_token, commerce_token)
        # What each request answers when it is alone.
        alone = {
            kind: _answer(kind, await http.request(call.method, call.path, **call.kwargs))
            for kind, call in calls.items()
        }
        sandbox.reset()

        crowd = [kind for kind, count in CROWD.items() for _ in range(count)]
        assert len(crowd) == 200
        responses = await asyncio.gather(
            *(http.request(calls[kind].method, calls[kind].path, **calls[kind].kwargs) for kind in crowd)
        )

    for kind, response in zip(crowd, responses, strict=True):
        assert _answer(kind, response) == alone[kind], kind
    by_kind: dict[str, list[dict[str, Any]]] = {kind: [] for kind in CROWD}
    for kind, response in zip(crowd, responses, strict=True):
        by_kind[kind].append(response.json())
    settlements = {body["RunQuery2Result"]["SettlementId"] for body in by_kind["address query"]}
    files = {body["UploadFileResult"]["FileToken"] for body in by_kind["address upload"]}
    tokens = {body["access_token"] for body in by_kind["token grant"]}
    assert len(settlements) == CROWD["address query"]
    assert len(files) == CROWD["address upload"] and len(tokens) == CROWD["token grant"]

    counted = Counter({(entry["api"], entry["endpoint"]): entry["count"] for entry in sandbox.requests()})
    assert counted == Counter({calls[kind].counted: count for kind, count in CROWD.items()})
