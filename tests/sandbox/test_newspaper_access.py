"""Each newspaper endpoint of spec §4 refuses a missing or bad token (401) and one without its scope (403)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio

from sandbox.config import NEWSPAPER_SCOPES
from sandbox.inprocess import SandboxTransport
from tests.sandbox.test_newspaper_support import (
    ADDRESS,
    ORDERS,
    PURCHASES,
    STATISTICS,
    SUBMISSION,
    grant_token,
    sandbox,
)

ORDERS_SCOPE, NEWSPAPERS_SCOPE, DISTRIBUTION_SCOPE, STATISTIC_SCOPE, ADDRESS_SCOPE = NEWSPAPER_SCOPES
DOCUMENTS = (
    "original-addresse",
    "output-addresses",
    "non-reusable-addresses",
    "bundle-labels",
    "container-labels",
    "sort-protocol",
    "order-confirmation",
)

ENDPOINTS: list[tuple[str, str, str]] = [
    ("POST", f"{ORDERS}/standard", ORDERS_SCOPE),
    ("POST", f"{ORDERS}/gratis", ORDERS_SCOPE),
    *[
        ("GET", f"{ORDERS}/7000001/{leaf}", ORDERS_SCOPE)
        for leaf in (
            "delivery-note",
            "status",
            "summary",
            "sendings",
            "original-standard-order",
            "corrected-standard-order",
            "original-gratis-order",
            "corrected-gratis-order",
        )
    ],
    ("GET", f"{SUBMISSION}/newspapers/4711/summary", NEWSPAPERS_SCOPE),
    ("GET", f"{SUBMISSION}/distribution/newspapers/5120/distribution-list", DISTRIBUTION_SCOPE),
    ("GET", f"{SUBMISSION}/distribution/newspapers/5120/black-list", DISTRIBUTION_SCOPE),
    ("POST", STATISTICS, STATISTIC_SCOPE),
    ("POST", PURCHASES, ADDRESS_SCOPE),
    ("GET", f"{PURCHASES}/880001/progress", ADDRESS_SCOPE),
    ("GET", f"{PURCHASES}/880001/output-addresses", ADDRESS_SCOPE),
    *[("GET", f"{PURCHASES}/880001/document/{name}", ADDRESS_SCOPE) for name in DOCUMENTS],
    *[("GET", f"{ADDRESS}/structurefiles/{code}", ADDRESS_SCOPE) for code in (1, 2, 9)],
    ("POST", f"{ADDRESS}/structurefiles/email", ADDRESS_SCOPE),
]


@pytest_asyncio.fixture
async def tokens() -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str]]]:
    config, _ = sandbox()
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        yield http, {scope: await grant_token(http, [scope]) for scope in NEWSPAPER_SCOPES}


def test_the_table_covers_every_endpoint_of_the_spec() -> None:
    assert len(ENDPOINTS) == 10 + 1 + 2 + 1 + 3 + 7 + 3 + 1


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("method", "url", "scope"), ENDPOINTS, ids=[f"{m} {u.split('/v1/')[-1]}" for m, u, _ in ENDPOINTS]
)
async def test_endpoint_demands_a_valid_token_with_its_scope(
    tokens: tuple[httpx.AsyncClient, dict[str, str]], method: str, url: str, scope: str
) -> None:
    http, by_scope = tokens
    missing = await http.request(method, url, json={})
    bogus = await http.request(method, url, json={}, headers={"Authorization": "Bearer not-a-token"})
    basic = await http.request(method, url, json={}, headers={"Authorization": "Basic c2FuZGJveDp4"})
    wrong = [
        await http.request(method, url, json={}, headers={"Authorization": f"Bearer {token}"})
        for other, token in by_scope.items()
        if other != scope
    ]
    right = await http.request(method, url, json={}, headers={"Authorization": f"Bearer {by_scope[scope]}"})
    assert [missing.status_code, bogus.status_code, basic.status_code] == [401, 401, 401]
    assert all(response.json()["error"] == "invalid_token" for response in (missing, bogus, basic))
    assert [response.status_code for response in wrong] == [403] * 4
    assert right.status_code not in (401, 403), right.text
