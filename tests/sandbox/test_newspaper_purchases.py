"""Address validation/sorting purchases, their documents, and the structure files of the newspaper sandbox."""

from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from sandbox.config import SandboxConfig
from sandbox.faults import FaultRule
from sandbox.inprocess import newspaper_url
from tests.sandbox.test_newspaper_support import (
    ADDRESS,
    PURCHASES,
    FakeClock,
    authorised_client,
    codes,
    decode_document,
    sandbox,
)

pytestmark = pytest.mark.asyncio
DOCUMENTS = (
    "original-addresse",
    "output-addresses",
    "non-reusable-addresses",
    "bundle-labels",
    "container-labels",
    "sort-protocol",
    "order-confirmation",
)


@pytest_asyncio.fixture
async def env() -> AsyncIterator[tuple[httpx.AsyncClient, FakeClock, SandboxConfig]]:
    config, clock = sandbox()
    async with authorised_client(config) as http:
        yield http, clock, config


def purchase(clean_up: bool = False) -> dict[str, Any]:
    return {
        "title": "Abonnenten Juni",
        "depositDate": "2025-06-20",
        "language": "DE",
        "frankingLicence": "60012345",
        "offerOption": "NO_PRICE",
        "offerEmail": "offer@example.com",
        "addresses": [
            {"id": "3", "firstName": "Eva", "lastName": "Meier", "street": "Seestrasse", "houseNumber": "4",
             "zipCode": 6280, "city": "Hochdorf", "isoCode": "CH"},
            {"id": "1", "firstName": "Max", "lastName": "Muster", "street": "bahnhofstr.", "houseNumber": 12,
             "zipCode": 6280, "city": "Hochdorf", "isoCode": "CH"},
            {"id": "2", "firstName": "Anna", "lastName": "Nobody", "street": "", "houseNumber": "",
             "zipCode": 99, "city": "Nirgendwo", "isoCode": "CH"},
            {"id": "4", "firstName": "Jan", "lastName": "Berg", "street": "Hauptstrasse", "houseNumber": "1",
             "zipCode": 10115, "city": "Berlin", "isoCode": "de"},
        ],
        "levelValidation": "COMPLETE",
        "sortingModule": {
            "levelSorting": "NORMAL",
            "sortingParameters": {"productCode": "AZA_WEEKLY_AND_BI_MONTHLY", "sendingSwiss": "PRIORITY",
                                  "weightPerCopyInGram": 180, "issueNumberFrom": 24},
            "simplifiedConfiguration": {"bundle": {"min": 1, "max": 10000, "unit": "GRAM"},
                                        "container": {"min": 1, "max": 500000, "unit": "GRAM"}},
        },
        "addressCleanUp": clean_up,
    }  # fmt: skip


async def create(http: httpx.AsyncClient, body: dict[str, Any]) -> int:
    response = await http.post(PURCHASES, json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.text.isdigit()
    return int(response.json())


async def test_purchase_answers_a_bare_integer_id(env: Any) -> None:
    http, _, _ = env
    assert await create(http, purchase()) == 880001
    assert await create(http, purchase()) == 880002


async def test_progress_runs_validation_then_sorting(env: Any) -> None:
    http, clock, _ = env
    purchase_id = await create(http, purchase())
    seen = []
    for step in (0, 2, 3, 2, 3):
        clock.advance(step)
        seen.append((await http.get(f"{PURCHASES}/{purchase_id}/progress")).json())
    assert seen == [
        {"validationStatus": "IN_PROGRESS", "validationProgressPercent": 0, "sortingStatus": "WAITING"},
        {"validationStatus": "IN_PROGRESS", "validationProgressPercent": 40, "sortingStatus": "WAITING"},
        {"validationStatus": "READY", "validationProgressPercent": 100, "sortingStatus": "IN_PROGRESS"},
        {"validationStatus": "READY", "validationProgressPercent": 100, "sortingStatus": "IN_PROGRESS"},
        {"validationStatus": "READY", "validationProgressPercent": 100, "sortingStatus": "READY"},
    ]


async def test_a_validation_only_purchase_never_sorts_and_serves_its_output_once_validated(env: Any) -> None:
    http, clock, _ = env
    body = purchase()
    del body["sortingModule"]
    purchase_id = await create(http, body)
    clock.advance(10)
    progress = (await http.get(f"{PURCHASES}/{purchase_id}/progress")).json()
    assert progress == {
        "validationStatus": "READY",
        "validationProgressPercent": 100,
        "sortingStatus": "WAITING",
    }
    rows = (await http.get(f"{PURCHASES}/{purchase_id}/output-addresses")).json()["outputAddresses"]
    assert len(rows) == 4
    labels = await http.get(f"{PURCHASES}/{purchase_id}/document/sort-protocol")
    assert labels.status_code == 404
    confirmation = await http.get(f"{PURCHASES}/{purchase_id}/document/order-confirmation")
    assert confirmation.status_code == 200


async def test_output_addresses_once_sorted(env: Any) -> None:
    http, clock, _ = env
    purchase_id = await create(http, purchase())
    early = await http.get(f"{PURCHASES}/{purchase_id}/output-addresses")
    assert early.status_code == 200 and codes(early.json()) == ["0000"]
    clock.advance(10)
    rows = (await http.get(f"{PURCHASES}/{purchase_id}/output-addresses")).json()["outputAddresses"]
    assert [(row["id"], row["statusCode"], row["bundleId"], row["bundleInfo"]) for row in rows] == [
        ("1", "CORRECTED", "B6280", "AUTOMATIC"),
        ("3", "OK", "B6280", "AUTOMATIC"),
        ("4", "OK", "INT-DE", "MANUALLY"),
        ("2", "UNKNOWN", "", "MANUALLY"),
    ]
    assert rows[0] == {
        "statusCode": "CORRECTED",
        "bundleId": "B6280",
        "bundleInfo": "AUTOMATIC",
        "id": "1",
        "firstName": "Max",
        "lastName": "Muster",
        "street": "Bahnhofstrasse",
        "houseNumber": "12",
        "zipCode": 6280,
        "city": "Hochdorf",
        "isoCode": "CH",
        "quantity": 1,
    }


async def test_other_spelling_of_the_output_path_is_404_unless_configured(env: Any) -> None:
    http, clock, _ = env
    purchase_id = await create(http, purchase())
    clock.advance(10)
    assert (await http.get(f"{PURCHASES}/{purchase_id}/outputaddresses")).status_code == 404
    config, clock = sandbox(job_seconds=0, purchase_output_path_spelling="outputaddresses")
    async with authorised_client(config) as other:
        other_id = await create(other, purchase())
        assert (await other.get(f"{PURCHASES}/{other_id}/output-addresses")).status_code == 404
        assert (
            len((await other.get(f"{PURCHASES}/{other_id}/outputaddresses")).json()["outputAddresses"]) == 4
        )


async def test_all_documents_are_pdfs_with_alternating_mime_type(env: Any) -> None:
    http, clock, _ = env
    purchase_id = await create(http, purchase(clean_up=True))
    clock.advance(10)
    for index, name in enumerate(DOCUMENTS):
        response = await http.get(f"{PURCHASES}/{purchase_id}/document/{name}")
        assert response.status_code == 200, name
        lines = decode_document(response.json(), "application/pdf" if index % 2 == 0 else "PDF")
        assert f"Purchase {purchase_id}: Abonnenten Juni" in lines
    non_reusable = decode_document(
        (await http.get(f"{PURCHASES}/{purchase_id}/document/non-reusable-addresses")).json()
    )
    assert any("Nobody" in line for line in non_reusable) and not any(
        "Muster" in line for line in non_reusable
    )


async def test_documents_wait_for_sorting_except_originals_and_confirmation(env: Any) -> None:
    http, _, _ = env
    purchase_id = await create(http, purchase(clean_up=True))
    for name in DOCUMENTS:
        body = (await http.get(f"{PURCHASES}/{purchase_id}/document/{name}")).json()
        if name in ("original-addresse", "order-confirmation"):
            decode_document(body)
        else:
            assert codes(body) == ["0000"], name


async def test_non_reusable_addresses_need_the_clean_up_option(env: Any) -> None:
    http, clock, _ = env
    purchase_id = await create(http, purchase(clean_up=False))
    clock.advance(10)
    response = await http.get(f"{PURCHASES}/{purchase_id}/document/non-reusable-addresses")
    assert response.status_code == 404 and "clean-up" in response.json()["errors"][0]["error"]
    assert (await http.get(f"{PURCHASES}/{purchase_id}/document/payslip")).status_code == 404


async def test_purchase_refusals(env: Any) -> None:
    http, _, _ = env
    no_addresses = {**purchase(), "addresses": []}
    response = await http.post(PURCHASES, json=no_addresses)
    assert response.status_code == 400 and "addresses" in response.json()["errors"][0]["error"]
    missing = await http.get(f"{PURCHASES}/42/progress")
    assert missing.status_code == 404 and "42" in missing.json()["errors"][0]["error"]


async def test_job_outcome_fault_ends_sorting_in_that_status(env: Any) -> None:
    http, clock, config = env
    config.faults.add(
        FaultRule(api="newspaper", endpoint="*purchases", method="POST", kind="job_outcome", value="failed")
    )
    purchase_id = await create(http, purchase())
    clock.advance(10)
    assert (await http.get(f"{PURCHASES}/{purchase_id}/progress")).json()["sortingStatus"] == "FAILED"
    assert codes((await http.get(f"{PURCHASES}/{purchase_id}/output-addresses")).json()) == ["0000"]


def unzip(item: dict[str, Any]) -> str:
    content = base64.b64decode(item["data"])
    assert item["size"] == len(content) and item["mimeType"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        (name,) = archive.namelist()
        return archive.read(name).decode("utf-8")


async def test_structure_files_per_code_and_version(env: Any) -> None:
    http, _, config = env
    files = {code: (await http.get(f"{ADDRESS}/structurefiles/{code}")).json() for code in (1, 2, 9)}
    assert [item["fileName"] for item in files[1]] == ["AZ_GZA_v1.zip"]
    assert [item["fileName"] for item in files[2]] == ["AZA_AZB_v1.zip"]
    assert files[9] == files[1] + files[2]
    assert "6280;Hochdorf" in unzip(files[1][0])
    again = (await http.get(f"{ADDRESS}/structurefiles/1")).json()
    assert again == files[1]
    config.structure_file_version = 2
    newer = (await http.get(f"{ADDRESS}/structurefiles/1")).json()
    assert newer[0]["fileName"] == "AZ_GZA_v2.zip" and newer[0]["data"] != files[1][0]["data"]
    assert (await http.get(f"{ADDRESS}/structurefiles/3")).status_code == 400


@pytest.mark.parametrize("field", ["email", "emailAddress"])
async def test_structure_file_notice_email_accepts_both_field_names(env: Any, field: str) -> None:
    http, _, _ = env
    response = await http.post(f"{ADDRESS}/structurefiles/email", json={field: "notices@example.com"})
    assert response.status_code == 200 and response.text == "E-mail address registered"
    received = (await http.get(f"{newspaper_url()}/_sandbox/received")).json()
    assert received["structureFileEmails"] == ["notices@example.com"]


@pytest.mark.parametrize("body", [{"email": "not-an-address"}, {"mail": "a@example.com"}, {}])
async def test_structure_file_notice_email_refusals(env: Any, body: dict[str, str]) -> None:
    http, _, _ = env
    response = await http.post(f"{ADDRESS}/structurefiles/email", json=body)
    assert response.status_code == 400 and response.json()["errors"]
