"""Same-day acceptance points (§2.8, §4.2): a GET carrying a JSON body, served at
``commerce_paths.same_day_path``.

Same-day delivery is offered in the cantons of :data:`SAME_DAY_CANTONS` on working days: the answer lists
acceptance points in the address's town and another town of its canton, for the products ``SD1,SD2`` (one
result holding two codes, as real answers do) and ``SD3``. Every field of the request body is required (400
naming the one missing); an unknown town, a canton without same-day service, or a Sunday or holiday is 404.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from sandbox.address_service.reference import ReferenceData, Town
from sandbox.commerce.bodies import json_object
from sandbox.commerce.delivery import delivery_town, parse_date
from sandbox.commerce.errors import INVALID_PARAMETER, NO_RESULTS, CommerceError
from sandbox.commerce.holidays import is_working_day
from sandbox.commerce.reference import commerce_reference, first_building, house_number

SAME_DAY_CANTONS = frozenset({"BE", "LU", "ZH"})
_FIELDS = (
    "address.geographicLocation.house.street",
    "address.geographicLocation.house.houseNumber",
    "address.geographicLocation.zip.zip",
    "address.geographicLocation.zip.city",
    "deliveryDate",
)


def same_day_router(path: str) -> APIRouter:
    router = APIRouter()

    @router.get(path)
    async def acceptance_points(request: Request) -> dict[str, Any]:
        body = await json_object(request, INVALID_PARAMETER)
        _, _, zip_code, city, day = (body.text(name, required=True) for name in _FIELDS)
        delivery_date = parse_date(day, "deliveryDate")
        town = delivery_town(zip_code, city)
        if town.canton not in SAME_DAY_CANTONS or town.po_box:
            raise CommerceError(404, NO_RESULTS, f"no same-day service to {town.zip_code} {town.town_name}")
        if not is_working_day(delivery_date):
            raise CommerceError(404, NO_RESULTS, f"no same-day service on {delivery_date.isoformat()}")
        return {"quality": "RELIABLE", "results": _results(commerce_reference(), town)}

    return router


def _results(reference: ReferenceData, town: Town) -> list[dict[str, Any]]:
    neighbours = [
        other
        for other in reference.towns
        if other.canton == town.canton and not other.po_box and other.town_name != town.town_name
    ]
    points = [point for point in (_drop_off_point(reference, t) for t in [town, *neighbours[:1]]) if point]
    if not points:
        raise CommerceError(404, NO_RESULTS, f"no acceptance point for {town.zip_code} {town.town_name}")
    return [
        {
            "productCode": "SD1,SD2",
            "dropOffInfo": [
                {"dropOffPoint": point, "lastDropOffTime": time}
                for point, time in zip(points, ("10:00", "09:30"), strict=False)
            ],
        },
        {"productCode": "SD3", "dropOffInfo": [{"dropOffPoint": points[0], "lastDropOffTime": "12:00"}]},
    ]


def _drop_off_point(reference: ReferenceData, town: Town) -> dict[str, Any] | None:
    found = first_building(reference, town)
    if found is None:
        return None
    street, building = found
    return {
        "technicalZip": f"{town.zip_code}{town.zip_addition}",
        "description": f"Postfiliale {town.town_name}",
        "street": street.street_name,
        "streetNumber": house_number(building),
        "zip": {"zip": town.zip_code, "city": town.town_name},
    }
