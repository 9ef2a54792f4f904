"""The delivery sub-API (§4.2): when an address can be delivered (GET with dotted query parameters, or POST
with a body), how a product is delivered, and the option lists (additional services, delivery instructions,
holidays of the current and next year).

Deliverabilities (§2.5): Monday to Saturday are WORK days whose products were handed in on the previous
working day (ECO and PRI; Saturday PRI only); Sundays and holidays are NO_SERVICE. The answer depends on the
town only: street and house number are accepted and not checked. A postcode or town the reference data does
not know is 404; neither given, a malformed date or dayCount outside 1..:data:`MAX_DAYS` is 400. P.O. box
postcodes answer ``deliveryToTheDoor: NOT_AVAILABLE`` (an open enum value beyond the spec's AVAILABLE).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Request

from sandbox.address_service.postcodes import SUPPLEMENTED, load_postcode_directory
from sandbox.address_service.reference import Town
from sandbox.commerce.bodies import json_object
from sandbox.commerce.delivery_options import ADDITIONAL_SERVICES, DELIVERY_INSTRUCTIONS, PRODUCTS
from sandbox.commerce.errors import INVALID_PARAMETER, NO_RESULTS, CommerceError
from sandbox.commerce.holidays import is_working_day, previous_working_day, swiss_holidays
from sandbox.commerce.reference import commerce_reference, towns_named

DELIVERY = "/api/delivery/v1"
WHEN = f"{DELIVERY}/deliverabilities/when"
DEFAULT_DAYS = 14
MAX_DAYS = 366
ZURICH = ZoneInfo("Europe/Zurich")
_SATURDAY = 5
_ZIP = "address.geographicLocation.zip.zip"
_CITY = "address.geographicLocation.zip.city"


def today(clock: Callable[[], float]) -> date:
    """The current day in Switzerland by ``clock``."""
    return datetime.fromtimestamp(clock(), ZURICH).date()


def delivery_router(clock: Callable[[], float]) -> APIRouter:
    router = APIRouter()

    @router.get(WHEN)
    def when_by_query(request: Request) -> dict[str, Any]:
        query = request.query_params
        town = delivery_town(query.get(_ZIP, ""), query.get(_CITY, ""))
        explicit = [
            day for value in query.getlist("deliveryDates") for day in value.split(",") if day.strip()
        ]
        if explicit:
            days = [parse_date(value, "deliveryDates") for value in explicit]
        else:
            first = parse_date(query["date"], "date") if query.get("date") else today(clock)
            days = [first + timedelta(days=n) for n in range(_day_count(query.get("dayCount")))]
        return deliverabilities(town, days)

    @router.post(WHEN)
    async def when_by_body(request: Request) -> dict[str, Any]:
        body = await json_object(request, INVALID_PARAMETER)
        for name in ("street", "houseNumber"):
            body.text(f"address.geographicLocation.house.{name}")
        town = delivery_town(body.text(_ZIP), body.text(_CITY))
        given = body.strings("deliveryDates")
        first = today(clock)
        days = [parse_date(value, "deliveryDates") for value in given] or [
            first + timedelta(days=n) for n in range(DEFAULT_DAYS)
        ]
        return deliverabilities(town, days)

    @router.get(f"{DELIVERY}/deliverabilities/how/{{product_code}}")
    def how(product_code: str) -> dict[str, Any]:
        product = PRODUCTS.get(product_code.strip().upper())
        if product is None:
            raise CommerceError(404, NO_RESULTS, f"no product {product_code!r}")
        return product

    @router.get(f"{DELIVERY}/options/additionalservices")
    def additional_services() -> list[dict[str, Any]]:
        return list(ADDITIONAL_SERVICES)

    @router.get(f"{DELIVERY}/options/deliveryinstructions")
    def delivery_instructions() -> list[dict[str, Any]]:
        return list(DELIVERY_INSTRUCTIONS)

    @router.get(f"{DELIVERY}/options/holidays")
    def holidays() -> list[dict[str, Any]]:
        year = today(clock).year
        return [
            {"date": holiday.day.isoformat(), "name": holiday.name}
            for current in (year, year + 1)
            for holiday in swiss_holidays(current)
        ]

    return router


def delivery_town(zip_code: str, city: str) -> Town:
    """The town of the address asked about: 400 when neither postcode nor town is given, 404 if unknown
    (no locality of Switzerland or Liechtenstein has that postcode and town)."""
    if not zip_code.strip() and not city.strip():
        raise CommerceError(400, INVALID_PARAMETER, f"the address needs {_ZIP} or {_CITY}")
    towns = towns_named(commerce_reference(), zip_code, city)
    if towns:
        return towns[0]
    # Every other Swiss locality, from the postcode directory the address service's sandbox answers from,
    # where postcode and town agree (or one of them is left out).
    found = load_postcode_directory().resolve(zip_code, city)
    if found is None or found.score < SUPPLEMENTED:
        raise CommerceError(404, NO_RESULTS, f"no deliverabilities for {zip_code} {city}".strip())
    return found.town


def parse_date(value: str, name: str) -> date:
    try:
        return date.fromisoformat(value.strip())
    except ValueError as exc:
        raise CommerceError(400, INVALID_PARAMETER, f"{name} {value!r} is not a date YYYY-MM-DD") from exc


def _day_count(value: str | None) -> int:
    if value is None or not value.strip():
        return DEFAULT_DAYS
    try:
        count = int(value)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_DAYS:
        raise CommerceError(400, INVALID_PARAMETER, f"dayCount must be 1..{MAX_DAYS}, not {value!r}")
    return count


def deliverabilities(town: Town, days: list[date]) -> dict[str, Any]:
    """The §2.5 answer for ``days`` (in the order given, each once) at ``town``."""
    return {
        "days": [deliverability_day(day) for day in dict.fromkeys(days)],
        "quality": "RELIABLE",
        "deliveryToTheDoor": "NOT_AVAILABLE" if town.po_box else "AVAILABLE",
    }


def deliverability_day(day: date) -> dict[str, Any]:
    if not is_working_day(day):
        return {"deliveryDate": day.isoformat(), "deliverabilities": [], "activity": "NO_SERVICE"}
    incoming = previous_working_day(day).isoformat()
    codes = ("PRI",) if day.weekday() == _SATURDAY else ("ECO", "PRI")
    return {
        "deliveryDate": day.isoformat(),
        "deliverabilities": [{"incomingDate": incoming, "productCode": code} for code in codes],
        "activity": "WORK",
    }
