"""Newspaper master data, gratis distribution and black lists, and statistics uploads of the sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from sandbox.inprocess import newspaper_url
from tests.sandbox.test_newspaper_support import STATISTICS, SUBMISSION, authorised_client, codes, sandbox

pytestmark = pytest.mark.asyncio
DISTRIBUTION = f"{SUBMISSION}/distribution/newspapers"


@pytest_asyncio.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    config, _ = sandbox()
    async with authorised_client(config) as client:
        yield client


def statistics_record(**changes: Any) -> dict[str, Any]:
    record = {
        "newspaperId": 104711,
        "split": "A",
        "product": "TUESDAY_EDITION",
        "houseKey": 123456,
        "bbz": 101,
        "aplz": 6280,
        "city": "Hochdorf",
        "deliveryDate": "2025-06-17",
        "bundleType": "NOT_BUNDLED",
        "count": 42,
    }
    record.update(changes)
    return record


async def test_newspaper_summary_has_the_master_data_fields(http: httpx.AsyncClient) -> None:
    summary = (await http.get(f"{SUBMISSION}/newspapers/4711/summary")).json()
    assert summary["newspaperNumber"] == 4711 and summary["newspaperID"] == 104711
    assert summary["title"] == "Seetaler Bote"
    assert summary["postCustomerService"] == "CENTRAL" and summary["format"] == "TALLER_THAN_B_5"
    assert summary["addressMethod"] == "ADDRESSED" and summary["postagePaidImpression"] == "AZA"
    assert set(summary) == {
        "newspaperNumber",
        "newspaperID",
        "title",
        "publisherName",
        "printerName",
        "postCustomerService",
        "region",
        "periodicity",
        "format",
        "language",
        "textQuota",
        "addressMethod",
        "sendingZipCode",
        "sendingCity",
        "postagePaidImpression",
        "postagePaidImpressionZipCode",
        "postagePaidImpressionCity",
    }
    gratis = (await http.get(f"{SUBMISSION}/newspapers/5120/summary")).json()
    assert gratis["title"] == "Anzeiger Rigi"


@pytest.mark.parametrize(("number", "expected"), [("9001", "0001"), ("1234", "0002"), ("x1", "0002")])
async def test_master_data_of_foreign_or_unknown_newspapers_is_refused(
    http: httpx.AsyncClient, number: str, expected: str
) -> None:
    for url in (
        f"{SUBMISSION}/newspapers/{number}/summary",
        f"{DISTRIBUTION}/{number}/distribution-list",
        f"{DISTRIBUTION}/{number}/black-list",
    ):
        response = await http.get(url)
        assert response.status_code == 400
        assert codes(response.json()) == [expected]
        assert response.json()["errors"][0]["error"].endswith(number)


async def test_distribution_list_of_a_gratis_newspaper(http: httpx.AsyncClient) -> None:
    body = (await http.get(f"{DISTRIBUTION}/5120/distribution-list")).json()
    assert body["distributionType"] == ["OFFICIAL_PLUS"]
    details = body["distributionListDetails"]
    assert {row["locationCategory"] for row in details} == {"A", "B", "C"}
    assert all(len(row["canton"]) == 2 and len(row["unloadTime"]) == 8 for row in details)
    assert details[0] == {
        "zipCode": 6353,
        "city": "Weggis",
        "canton": "LU",
        "locationCategory": "A",
        "count": 2150,
        "poBox": False,
        "distributionType": "OFFICIAL_PLUS",
        "packedInSacks": False,
        "bundlesInSB": True,
        "deliveryZipCode": 6353,
        "unloadZipCode": 6353,
        "unloadPlace": "Weggis Post",
        "unloadTime": "05:30:00",
        "containerTargetId": "CT-6353",
    }
    other = (await http.get(f"{DISTRIBUTION}/5121/distribution-list")).json()
    assert {row["locationCategory"] for row in other["distributionListDetails"]} == {"A", "B"}


async def test_black_list_of_a_gratis_newspaper(http: httpx.AsyncClient) -> None:
    body = (await http.get(f"{DISTRIBUTION}/5120/black-list")).json()
    assert body["newspaperNumber"] == 5120
    assert body["blackListDetails"][0] == {
        "zipCode": 6353,
        "city": "Weggis",
        "street": "Seestrasse",
        "houseNumber": "12",
    }


async def test_standard_newspapers_have_no_distribution_list(http: httpx.AsyncClient) -> None:
    for leaf in ("distribution-list", "black-list"):
        response = await http.get(f"{DISTRIBUTION}/4711/{leaf}")
        assert response.status_code == 400 and codes(response.json()) == ["0100"]


async def test_statistics_upload_is_confirmed_in_plain_text(http: httpx.AsyncClient) -> None:
    records = [
        statistics_record(),
        statistics_record(product="FRIDAY_EDITION", bundleType="CITY", houseKey=None),
    ]
    response = await http.post(STATISTICS, json={"statistics": records})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "File uploaded successfully"
    received = (await http.get(f"{newspaper_url()}/_sandbox/received")).json()
    assert received["statisticsUploads"] == [2]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"statistics": [statistics_record(newspaperId=999)]}, "record 1: newspaperId 999 unknown"),
        ({"statistics": [statistics_record(newspaperId=109001)]}, "newspaperId 109001 unknown"),
        ({"statistics": [statistics_record(), statistics_record(count="many")]}, "record 2: count"),
        ({"statistics": [statistics_record(deliveryDate="17.06.2025")]}, "deliveryDate"),
        ({"statistics": []}, "no statistics records"),
        ({"rows": [statistics_record()]}, "no statistics records"),
    ],
)
async def test_invalid_statistics_get_0200(
    http: httpx.AsyncClient, body: dict[str, Any], fragment: str
) -> None:
    response = await http.post(STATISTICS, json=body)
    assert response.status_code == 400
    assert set(codes(response.json())) == {"0200"}
    assert fragment in response.json()["errors"][0]["error"]
    assert response.json()["errors"][0]["error"].startswith("0200 Statistics cannot be processed: ")
    assert (await http.get(f"{newspaper_url()}/_sandbox/received")).json()["statisticsUploads"] == []
