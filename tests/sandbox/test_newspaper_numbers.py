"""Which newspaper numbers the sandbox knows: the specific ones, every number the README and the examples
use, and the generated range, where any number (``8123``, say) is a newspaper of the customer."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from sandbox.newspaper.reference import GENERATED_NUMBERS, NEWSPAPERS, newspaper
from tests.sandbox.test_newspaper_support import (
    ORDERS,
    STATISTICS,
    SUBMISSION,
    FakeClock,
    authorised_client,
    codes,
    sandbox,
    standard_order,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest_asyncio.fixture
async def env() -> AsyncIterator[tuple[httpx.AsyncClient, FakeClock]]:
    config, clock = sandbox()
    async with authorised_client(config) as http:
        yield http, clock


def used_numbers() -> set[int]:
    """The newspaper numbers the documentation's commands and the example orders name."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    readme = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    numbers = {int(n) for n in re.findall(r"postflows newspaper-sync (\d+)", readme)}
    numbers |= {int(n) for n in re.findall(r"newspaper-order-(\d+)-", readme)}
    for path in (ROOT / "examples").glob("*.json"):
        found = re.findall(r'"newspaperNumber":\s*"?(\d+)', path.read_text(encoding="utf-8"))
        numbers |= {int(n) for n in found}
    return numbers


def test_every_number_of_the_readme_and_the_examples_is_known() -> None:
    numbers = used_numbers()
    assert {4711, 5120} <= numbers
    for number in numbers:
        paper = newspaper(number)
        assert paper is not None and paper.own, number


def test_the_generated_range_is_stable_and_keeps_the_specific_newspapers() -> None:
    assert newspaper(8123) == newspaper(8123)
    assert all(newspaper(number) is paper for number, paper in NEWSPAPERS.items())
    for number in (GENERATED_NUMBERS.start, 8123, GENERATED_NUMBERS.stop - 1):
        paper = newspaper(number)
        assert paper is not None and paper.own and not paper.gratis and paper.sort_file
        assert paper.newspaper_id == 100_000 + number
    assert newspaper(GENERATED_NUMBERS.start - 1) is None and newspaper(GENERATED_NUMBERS.stop) is None
    assert len({newspaper(number).title for number in range(8100, 8160)}) > 10  # type: ignore[union-attr]


async def test_newspaper_8123_is_found_and_takes_orders(env: tuple[httpx.AsyncClient, FakeClock]) -> None:
    http, clock = env
    summary = (await http.get(f"{SUBMISSION}/newspapers/8123/summary")).json()
    assert summary["newspaperNumber"] == 8123 and summary["newspaperID"] == 108123
    assert summary["title"] and summary["publisherName"] and summary["addressMethod"] == "ADDRESSED"
    response = await http.post(f"{ORDERS}/standard", json=standard_order(clock, newspaperNumber="8123"))
    assert response.status_code == 200 and response.json()["errors"] == [], response.text
    record = {
        "newspaperId": 108123, "split": "A", "product": "WEEKLY", "bbz": 101, "aplz": 8123,
        "city": "Ebmatingen", "deliveryDate": "2025-06-17", "bundleType": "NOT_BUNDLED", "count": 7,
    }  # fmt: skip
    assert (await http.post(STATISTICS, json={"statistics": [record]})).status_code == 200
    gratis = await http.get(f"{SUBMISSION}/distribution/newspapers/8123/distribution-list")
    assert gratis.status_code == 400 and codes(gratis.json()) == ["0100"]


@pytest.mark.parametrize("number", ["1234", "1999", "9000", "9999", "12345"])
async def test_numbers_outside_the_range_are_unknown(
    env: tuple[httpx.AsyncClient, FakeClock], number: str
) -> None:
    http, _ = env
    response = await http.get(f"{SUBMISSION}/newspapers/{number}/summary")
    assert response.status_code == 400 and codes(response.json()) == ["0002"]
