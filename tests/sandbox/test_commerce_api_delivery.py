"""The commerce API sandbox's delivery sub-API: deliverable days (GET with dotted parameters, POST with a
body), products, option lists, Swiss holidays and same-day acceptance points (a GET with a JSON body)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import pytest

from sandbox.commerce.holidays import easter_sunday, swiss_holidays
from sandbox.commerce.paths import CommercePaths
from sandbox.config import SandboxConfig
from tests.sandbox.commerce_api_support import commerce_client, commerce_sandbox, error_code
from tests.sandbox.test_newspaper_support import ZURICH, FakeClock

DELIVERY = "DCAPI_DELIVERY"
WHEN = "/api/delivery/v1/deliverabilities/when"
SAME_DAY = CommercePaths().same_day_path
BERN = {"address.geographicLocation.zip.zip": "3030", "address.geographicLocation.zip.city": "Bern"}


def body_address(zip_code: str = "3030", city: str = "Bern") -> dict[str, Any]:
    return {
        "geographicLocation": {
            "house": {"street": "Wankdorfallee", "houseNumber": "4"},
            "zip": {"zip": zip_code, "city": city},
        }
    }


def by_date(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {day["deliveryDate"]: day for day in answer["days"]}


async def test_when_defaults_to_fourteen_days_from_today() -> None:
    config, clock = commerce_sandbox()
    async with commerce_client(config, DELIVERY) as http:
        response = await http.get(WHEN, params={**BERN, "address.geographicLocation.house.street": "x"})
    assert response.status_code == 200
    answer = response.json()
    assert answer["quality"] == "RELIABLE"
    assert answer["deliveryToTheDoor"] == "AVAILABLE"
    today = clock.today()
    assert today == date(2025, 6, 16)  # a Monday
    assert [day["deliveryDate"] for day in answer["days"]] == [
        (today + timedelta(days=n)).isoformat() for n in range(14)
    ]
    days = by_date(answer)
    assert days["2025-06-16"] == {
        "deliveryDate": "2025-06-16",
        "deliverabilities": [
            {"incomingDate": "2025-06-14", "productCode": "ECO"},
            {"incomingDate": "2025-06-14", "productCode": "PRI"},
        ],
        "activity": "WORK",
    }
    assert days["2025-06-21"]["deliverabilities"] == [{"incomingDate": "2025-06-20", "productCode": "PRI"}]
    for sunday in ("2025-06-22", "2025-06-29"):
        assert days[sunday] == {"deliveryDate": sunday, "deliverabilities": [], "activity": "NO_SERVICE"}
    assert sum(day["activity"] == "WORK" for day in answer["days"]) == 12


async def test_when_follows_the_clock_for_today() -> None:
    config, clock = commerce_sandbox()
    clock.advance(3 * 86400)
    async with commerce_client(config, DELIVERY) as http:
        answer = (await http.get(WHEN, params=BERN)).json()
    assert answer["days"][0]["deliveryDate"] == "2025-06-19"


async def test_when_with_date_and_day_count() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, DELIVERY) as http:
        answer = (await http.get(WHEN, params={**BERN, "date": "2025-07-30", "dayCount": "5"})).json()
    days = by_date(answer)
    assert list(days) == ["2025-07-30", "2025-07-31", "2025-08-01", "2025-08-02", "2025-08-03"]
    # The national holiday has no service, and the day after it takes what came in the day before it.
    assert days["2025-08-01"]["activity"] == "NO_SERVICE"
    assert days["2025-08-02"]["deliverabilities"] == [{"incomingDate": "2025-07-31", "productCode": "PRI"}]


async def test_explicit_delivery_dates_override_date_and_day_count() -> None:
    config, _ = commerce_sandbox()
    params = [
        *BERN.items(),
        ("date", "2025-01-01"),
        ("dayCount", "30"),
        ("deliveryDates", "2025-06-09"),
        ("deliveryDates", "2025-06-10"),
        ("deliveryDates", "2025-12-27"),
    ]
    async with commerce_client(config, DELIVERY) as http:
        answer = (await http.get(WHEN, params=params)).json()
    days = by_date(answer)
    assert list(days) == ["2025-06-09", "2025-06-10", "2025-12-27"]
    assert days["2025-06-09"]["activity"] == "NO_SERVICE"  # Whit Monday
    # After Whit Monday and the weekend before it, the previous working day is Saturday.
    assert days["2025-06-10"]["deliverabilities"][0]["incomingDate"] == "2025-06-07"
    # After Christmas and St Stephen's day.
    assert days["2025-12-27"]["deliverabilities"] == [{"incomingDate": "2025-12-24", "productCode": "PRI"}]


async def test_when_by_post_with_a_body() -> None:
    config, _ = commerce_sandbox()
    body = {"address": body_address(), "deliveryDates": ["2025-06-20", "2025-06-22"]}
    async with commerce_client(config, DELIVERY) as http:
        response = await http.post(WHEN, json=body)
        without_dates = await http.post(WHEN, json={"address": body_address()})
    assert response.status_code == 200
    assert [(d["deliveryDate"], d["activity"]) for d in response.json()["days"]] == [
        ("2025-06-20", "WORK"),
        ("2025-06-22", "NO_SERVICE"),
    ]
    assert len(without_dates.json()["days"]) == 14


async def test_a_po_box_zip_has_no_delivery_to_the_door() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, DELIVERY) as http:
        answer = (await http.get(WHEN, params={"address.geographicLocation.zip.zip": "3001"})).json()
    assert answer["deliveryToTheDoor"] == "NOT_AVAILABLE"


async def test_an_unknown_zip_has_no_deliverabilities() -> None:
    config, _ = commerce_sandbox()
    unknown = {"address.geographicLocation.zip.zip": "9999", "address.geographicLocation.zip.city": "Bern"}
    mismatched = {
        "address.geographicLocation.zip.zip": "3030",
        "address.geographicLocation.zip.city": "Genève",
    }
    async with commerce_client(config, DELIVERY) as http:
        by_get = await http.get(WHEN, params=unknown)
        by_mismatch = await http.get(WHEN, params=mismatched)
        by_post = await http.post(WHEN, json={"address": body_address("9999", "Nowhere")})
    for response in (by_get, by_mismatch, by_post):
        assert response.status_code == 404
        assert error_code(response) == "NO_RESULTS"


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({}, "zip"),
        ({**BERN, "date": "16.06.2025"}, "date"),
        ({**BERN, "dayCount": "0"}, "dayCount"),
        ({**BERN, "dayCount": "many"}, "dayCount"),
        ({**BERN, "deliveryDates": "2025-13-01"}, "deliveryDates"),
    ],
)
async def test_malformed_when_parameters_are_400(params: dict[str, str], named: str) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, DELIVERY) as http:
        response = await http.get(WHEN, params=params)
    assert response.status_code == 400
    assert error_code(response) == "INVALID_PARAMETER"
    assert named in response.json()["message"]


async def test_how_describes_a_product() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, DELIVERY) as http:
        response = await http.get("/api/delivery/v1/deliverabilities/how/PRI")
        unknown = await http.get("/api/delivery/v1/deliverabilities/how/XYZ")
    product = response.json()
    assert product["productCode"] == "PRI"
    assert isinstance(product["barcode"], str)
    assert {"code": "ZAW3211"} in product["deliveryInstructions"]
    assert {"code": "SA", "mandatory": False} in product["additionalServices"]
    assert (unknown.status_code, error_code(unknown)) == (404, "NO_RESULTS")


async def test_option_lists_name_every_entry_in_four_languages() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, DELIVERY) as http:
        services = (await http.get("/api/delivery/v1/options/additionalservices")).json()
        instructions = (await http.get("/api/delivery/v1/options/deliveryinstructions")).json()
        products = [
            (await http.get(f"/api/delivery/v1/deliverabilities/how/{code}")).json()
            for code in ("ECO", "PRI", "SD1", "SD2", "SD3")
        ]
    assert len(services) >= 4 and len(instructions) >= 4
    for entry in (*services, *instructions):
        assert set(entry["name"]) == {"de", "fr", "it", "en"} and all(entry["name"].values())
        assert isinstance(entry["barcode"], str)
    assert all(set(s) == {"code", "name", "barcode"} for s in services)
    for instruction in instructions:
        assert set(instruction) == {"code", "barcode", "name", "editable", "placeHolderNames", "optionNames"}
        assert isinstance(instruction["editable"], bool)
    # Every code a product refers to is in the option lists.
    service_codes = {s["code"] for s in services}
    instruction_codes = {i["code"] for i in instructions}
    for product in products:
        assert {s["code"] for s in product["additionalServices"]} <= service_codes
        assert {i["code"] for i in product["deliveryInstructions"]} <= instruction_codes


async def test_holidays_of_the_current_and_next_year() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, DELIVERY) as http:
        holidays = (await http.get("/api/delivery/v1/options/holidays")).json()
    dates = [holiday["date"] for holiday in holidays]
    assert dates[0] == "2025-01-01" and dates[-1] == "2026-12-26"
    assert {"2025-04-18", "2025-04-21", "2025-05-29", "2025-06-09", "2025-08-01"} <= set(dates)
    assert {"2026-04-03", "2026-04-06", "2026-05-14", "2026-05-25", "2026-12-25"} <= set(dates)
    good_friday = next(h for h in holidays if h["date"] == "2025-04-18")
    assert good_friday["name"] == {
        "de": "Karfreitag",
        "fr": "Vendredi saint",
        "it": "Venerdì santo",
        "en": "Good Friday",
    }


async def test_holidays_follow_the_clock_into_the_next_year() -> None:
    config = SandboxConfig(clock=FakeClock(datetime(2027, 1, 5, 8, 0, tzinfo=ZURICH)))
    async with commerce_client(config, DELIVERY) as http:
        holidays = (await http.get("/api/delivery/v1/options/holidays")).json()
    years = {holiday["date"][:4] for holiday in holidays}
    assert years == {"2027", "2028"}
    assert "2027-03-26" in {holiday["date"] for holiday in holidays}  # Good Friday 2027


@pytest.mark.parametrize(
    ("year", "easter"),
    [
        (2024, date(2024, 3, 31)),
        (2025, date(2025, 4, 20)),
        (2038, date(2038, 4, 25)),
        (2285, date(2285, 3, 22)),
    ],
)
def test_easter_sunday(year: int, easter: date) -> None:
    assert easter_sunday(year) == easter
    assert swiss_holidays(year)[3].day == easter + timedelta(days=1)


# Same-day acceptance points


def same_day_body(
    delivery_date: str = "2025-06-17", zip_code: str = "3030", city: str = "Bern"
) -> dict[str, Any]:
    return {"address": body_address(zip_code, city), "deliveryDate": delivery_date}


async def test_same_day_acceptance_points_answer_a_get_with_a_body() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, DELIVERY) as http:
        response = await http.request("GET", SAME_DAY, json=same_day_body())
    assert response.status_code == 200
    answer = response.json()
    assert answer["quality"] == "RELIABLE"
    assert [result["productCode"] for result in answer["results"]] == ["SD1,SD2", "SD3"]
    first = answer["results"][0]["dropOffInfo"][0]
    assert first["lastDropOffTime"] == "10:00"
    point = first["dropOffPoint"]
    assert set(point) == {"technicalZip", "description", "street", "streetNumber", "zip"}
    assert point["zip"] == {"zip": "3030", "city": "Bern"}
    assert point["street"] == "Wankdorfallee"


@pytest.mark.parametrize(
    "missing",
    [
        "address.geographicLocation.house.street",
        "address.geographicLocation.house.houseNumber",
        "address.geographicLocation.zip.zip",
        "address.geographicLocation.zip.city",
        "deliveryDate",
    ],
)
async def test_same_day_needs_every_field_of_the_body(missing: str) -> None:
    config, _ = commerce_sandbox()
    body = same_day_body()
    *parents, name = missing.split(".")
    node = body
    for parent in parents:
        node = node[parent]
    del node[name]
    async with commerce_client(config, DELIVERY) as http:
        response = await http.request("GET", SAME_DAY, json=body)
    assert response.status_code == 400
    assert error_code(response) == "INVALID_PARAMETER"
    assert missing in response.json()["message"]


async def test_same_day_without_a_body_or_with_a_bad_date_is_400() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, DELIVERY) as http:
        no_body = await http.get(SAME_DAY)
        bad_date = await http.request("GET", SAME_DAY, json=same_day_body("tomorrow"))
    assert no_body.status_code == bad_date.status_code == 400


@pytest.mark.parametrize(
    "body",
    [
        same_day_body("2025-06-22"),  # a Sunday
        same_day_body("2025-08-01"),  # a holiday
        same_day_body(zip_code="1204", city="Genève"),  # no same-day service in the canton
        same_day_body(zip_code="9999", city="Nowhere"),
    ],
)
async def test_same_day_without_service_is_404(body: dict[str, Any]) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, DELIVERY) as http:
        response = await http.request("GET", SAME_DAY, json=body)
    assert (response.status_code, error_code(response)) == (404, "NO_RESULTS")


async def test_same_day_path_is_a_setting() -> None:
    config, _ = commerce_sandbox(
        commerce_paths=CommercePaths(same_day_path="api/delivery/v1/acceptancepoints/")
    )
    async with commerce_client(config, DELIVERY) as http:
        moved = await http.request("GET", "/api/delivery/v1/acceptancepoints", json=same_day_body())
        old = await http.request("GET", SAME_DAY, json=same_day_body())
    assert moved.status_code == 200
    assert old.status_code == 404
