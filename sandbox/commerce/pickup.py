"""The pickup sub-API (§4.3), under ``commerce_paths.pickup_prefix``: pickup-service users (§2.9) and the
pickup points near an address (§2.10, at ``commerce_paths.pickup_points_method``/``pickup_points_path``).

A user is known by first and last name, address and e-mail (compared after normalisation): registering the
same user again answers the id it got the first time, a new one gets a new id. Users are kept in the state
table ``commerce.pickup_users``, so every process sharing a state directory hands out the same ids. The
answer's ``verified`` is always ``NONE``. Pickup points: the three localities of the postcode directory
whose postcodes are nearest the address's (its own first), at a building of the detailed records where the
town has one, else at the town's ``Bahnhofstrasse 1``; each with a calendar of seven consecutive days from
today; a Sunday or holiday is an empty array (§2.10: "empty array for a closed day").

Beyond §7 (which lists 200/403/500 only), a body that is not a JSON object, lacks a required field or has
a field of the wrong type is 400.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from fastapi import APIRouter, Request

from sandbox.address_service.directory_matching import synthetic_address
from sandbox.address_service.normalize import compact
from sandbox.address_service.reference import ReferenceData, Town
from sandbox.commerce.bodies import JSONBody, json_object
from sandbox.commerce.delivery import today
from sandbox.commerce.errors import INVALID_PARAMETER, CommerceError
from sandbox.commerce.holidays import is_working_day
from sandbox.commerce.paths import CommercePaths
from sandbox.commerce.reference import commerce_reference, every_town, first_building, house_number
from sandbox.guesses import is_other, play
from sandbox.state import SandboxState

USERS_TABLE = "commerce.pickup_users"
POINTS_PER_ANSWER = 3
POINT_STREET = "Bahnhofstrasse"  # where a town without detailed records has its point
CALENDAR_DAYS = 7
_TEXT_FIELDS = (
    "userDetails.gender",
    "userDetails.language",
    "address.house.street",
    "address.house.houseNumber",
    "address.zip.city",
    "address.zip.countryCode",
    "notification.notifyMode",
    "notification.email",
    "notification.mobileNumber",
    "service",
    "verified",
)
_ZIP = re.compile(r"^\d{4}$")
_WEEKDAY_HOURS = [{"from": "07:30:00", "to": "12:00:00"}, {"from": "13:30:00", "to": "18:30:00"}]
_SATURDAY_HOURS = [{"from": "08:00:00", "to": "12:00:00"}]
_SATURDAY = 5


class PickupUsers:
    """The registered pickup users: a fingerprint of who they are -> their id."""

    def __init__(self, state: SandboxState) -> None:
        self._state = state
        self._ids = state.table(USERS_TABLE)

    def register(self, fingerprint: str) -> str:
        """The id of the user with ``fingerprint``, created on first registration."""
        with self._state.atomic():
            known = self._ids.get(fingerprint)
            if known is not None:
                return str(known)
            created = str(uuid.uuid4())
            self._ids.put(fingerprint, created)
            return created


def pickup_router(paths: CommercePaths, state: SandboxState, clock: Callable[[], float]) -> APIRouter:
    router = APIRouter()
    users = PickupUsers(state)

    @router.post(paths.pickup_users_path)
    async def register_user(request: Request) -> dict[str, Any]:
        body = await _pickup_body(request)
        body.text("userDetails.firstName", required=True)
        body.text("userDetails.lastName", required=True)
        user_id = users.register(user_fingerprint(body))
        # commerce.http-400-groups, the other way: a user without a mobile number is registered, then the
        # notification is refused with a 400 (§7 lists none for pickup users).
        if is_other(request) and not (body.text("notification.mobileNumber") or "").strip():
            play(request, "commerce.http-400-groups")
            raise CommerceError(400, INVALID_PARAMETER, "notification.mobileNumber is missing")
        return {"id": user_id, "verified": "NONE"}

    @router.api_route(paths.pickup_points_full_path, methods=[paths.pickup_points_method])
    async def pickup_points(request: Request) -> dict[str, Any]:
        body = await _pickup_body(request)
        zip_code = body.text("address.zip.zip", required=True).strip()
        if not _ZIP.match(zip_code):
            raise CommerceError(
                400, INVALID_PARAMETER, f"field address.zip.zip must be 4 digits, not {zip_code!r}"
            )
        reference = commerce_reference()
        first = today(clock)
        return {"points": [_point(reference, town, first) for town in nearest_towns(zip_code)]}

    return router


async def _pickup_body(request: Request) -> JSONBody:
    """The §2.9 body with every field it shows checked to be a string (or absent/null)."""
    body = await json_object(request, INVALID_PARAMETER)
    for name in (*_TEXT_FIELDS, "userDetails.firstName", "userDetails.lastName", "address.zip.zip"):
        body.text(name)
    return body


def user_fingerprint(body: JSONBody) -> str:
    """Who the user is: names, address and e-mail, normalised, hashed."""
    who = [
        compact(body.text("userDetails.firstName")),
        compact(body.text("userDetails.lastName")),
        compact(body.text("address.house.street")),
        body.text("address.house.houseNumber").replace(" ", "").casefold(),
        body.text("address.zip.zip").strip(),
        compact(body.text("address.zip.city")),
        body.text("notification.email").strip().casefold(),
    ]
    return hashlib.sha256(json.dumps(who).encode()).hexdigest()


def nearest_towns(zip_code: str) -> list[Town]:
    """The localities whose postcodes are nearest ``zip_code`` (see the module docstring)."""
    wanted = int(zip_code)
    towns = [town for town in every_town() if not town.po_box]
    towns.sort(key=lambda town: (abs(int(town.zip_code) - wanted), town.zip_code, town.onrp))
    return towns[:POINTS_PER_ANSWER]


def _point(reference: ReferenceData, town: Town, first: date) -> dict[str, Any]:
    found = first_building(reference, town)
    if found is None:
        address = synthetic_address(town, POINT_STREET, "1", "")
        found = address.street, address.building
    street, building = found
    number = f"{town.zip_code}{town.onrp % 1000:03d}"
    place = {
        "street": f"{street.street_name} {house_number(building)}",
        "zip": town.zip_code,
        "city": town.town_name,
    }
    code = int(town.zip_code)
    point: dict[str, Any] = {
        "ppNumber": number,
        "service": "PICKUP",
        "name": f"PickPost {town.town_name}",
        "address": place,
        "webLink": f"https://sandbox.postflows.invalid/pickup/points/{number}",
        "delivery": dict(place),
        "geographicPosition": {
            "latitude": f"{46.0 + (code % 1000) / 1000 * 1.5:.6f}",
            "longitude": f"{6.0 + code / 10000 * 4:.6f}",
        },
        "calendar": {
            day.isoformat(): _opening(day)
            for day in (first + timedelta(days=n) for n in range(CALENDAR_DAYS))
        },
    }
    if town.onrp % 2 == 0:
        point["hint"] = "Schalter in der Postfiliale"
    return point


def _opening(day: date) -> dict[str, Any] | list[Any]:
    if not is_working_day(day):
        return []
    return {"openingIntervals": _SATURDAY_HOURS if day.weekday() == _SATURDAY else _WEEKDAY_HOURS}
