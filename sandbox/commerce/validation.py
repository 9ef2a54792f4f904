"""Address validation (§4.1 ``POST addresses/validation``, request §2.2, result §2.3) against the reference
data, with a ``quality`` (an open enum: the spec shows only CERTIFIED) chosen as follows:

* ``CERTIFIED``: street, house number, postcode and town name a building as given (case, umlauts, ``str.``
  and spaces may differ); the official spelling comes back with the house key and an expiry of one year;
* ``USUALLY_CERTIFIED``: the building exists once the postcode or the town is corrected or supplied;
* ``DOMICILE_UNKNOWN``: the town is known but not the street or the house number (no house key);
* ``UNKNOWN``: neither postcode nor town is known (the address comes back as given).

Outside the detailed areas (where the detailed records are the whole truth) an address the reference does
not hold is judged as the address service judges it (:mod:`sandbox.address_service.directory_matching`):
a real postcode and town of the postcode directory with a plausible street and a well-formed house number
is a building, ``CERTIFIED`` when postcode and town agree as given, ``USUALLY_CERTIFIED`` when one was
corrected or supplied; the same address always gets the same answer.

A ``postBoxNumber`` makes a POSTBOX address whose logistic location holds ``Postfach <number>`` at the
town's P.O. box postcode; without a street, its quality comes from the town alone. ``fullValidation`` is
checked to be a boolean and does not change the answer. The result's ``id`` is a UUID derived from the
answered address, so the same address validates to the same id; ``expires`` is one year from now.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Request

from sandbox.address_service.directory_matching import known_address
from sandbox.address_service.postcodes import EXACT, load_postcode_directory
from sandbox.address_service.reference import Building, ReferenceData, Street, Town
from sandbox.commerce.bodies import json_object
from sandbox.commerce.errors import INVALID_ADDRESS, CommerceError
from sandbox.commerce.reference import (
    building_numbered,
    commerce_reference,
    house_number,
    streets_named,
    towns_named,
)

VALIDATION = "/address/v1/addresses/validation"
CERTIFICATE_DAYS = 365
ZURICH = ZoneInfo("Europe/Zurich")
_ID_NAMESPACE = uuid.UUID("6f1c3a52-0c2e-4f7d-9a55-1d2b3c4d5e6f")


@dataclass(frozen=True)
class ValidationRequest:
    """The fields of a §2.2 request the sandbox reads."""

    first_name: str
    last_name: str
    street: str
    house_number: str
    additional_address: str
    zip_code: str
    city: str
    post_box_number: str


@dataclass(frozen=True)
class Match:
    """How far the address was found: a quality and the official records it resolved to."""

    quality: str
    town: Town | None = None
    street: Street | None = None
    building: Building | None = None


def validation_router(clock: Callable[[], float]) -> APIRouter:
    router = APIRouter()

    @router.post(VALIDATION)
    async def validate(request: Request) -> dict[str, Any]:
        wanted = await _read_request(request)
        reference = commerce_reference()
        return validation_result(wanted, match_address(reference, wanted), _now(clock), reference)

    return router


async def _read_request(request: Request) -> ValidationRequest:
    body = await json_object(request, INVALID_ADDRESS)
    for name in ("addressee.title", "addressee.firstName", "addressee.lastName"):
        body.text(name)
    body.boolean("fullValidation")
    house, zip_ = "geographicLocation.house", "geographicLocation.zip"
    wanted = ValidationRequest(
        first_name=body.text("addressee.firstName"),
        last_name=body.text("addressee.lastName"),
        street=body.text(f"{house}.street").strip(),
        house_number=body.text(f"{house}.houseNumber").strip(),
        additional_address=body.text(f"{house}.additionalAddress").strip(),
        zip_code=body.text(f"{zip_}.zip").strip(),
        city=body.text(f"{zip_}.city").strip(),
        post_box_number=body.text("logisticLocation.postBoxNumber").strip(),
    )
    if not wanted.zip_code and not wanted.city:
        raise CommerceError(400, INVALID_ADDRESS, "geographicLocation.zip needs a zip or a city")
    return wanted


def match_address(reference: ReferenceData, wanted: ValidationRequest) -> Match:
    """The best match: of the reference (:func:`reference_match`), else of the postcode directory."""
    match = reference_match(reference, wanted)
    if match.building is not None or wanted.post_box_number:
        return match
    return directory_match(wanted) or match


def directory_match(wanted: ValidationRequest) -> Match | None:
    """The building a plausible address of a directory town outside the detailed areas stands for (see the
    module docstring), the town alone when its street or number is not plausible; None for a place the
    directory does not know."""
    directory = load_postcode_directory()
    locality = directory.resolve(wanted.zip_code, wanted.city)
    if (
        locality is None
        or directory.is_detailed(locality.town.zip_code)
        or directory.is_detailed(wanted.zip_code)
    ):
        return None
    address = known_address(locality.town, wanted.street, wanted.house_number)
    if address is None:
        return Match("DOMICILE_UNKNOWN", locality.town)
    quality = "CERTIFIED" if locality.score == EXACT else "USUALLY_CERTIFIED"
    return Match(quality, address.town, address.street, address.building)


def reference_match(reference: ReferenceData, wanted: ValidationRequest) -> Match:
    """The best match of the reference: the town as given first, then any town of the given postcode or
    name."""
    both_given = bool(wanted.zip_code and wanted.city)
    exact = towns_named(reference, wanted.zip_code, wanted.city) if both_given else []
    broad = [
        *towns_named(reference, wanted.zip_code, ""),
        *(town for town in towns_named(reference, "", wanted.city) if town.zip_code != wanted.zip_code),
    ]
    if not broad:
        return Match("UNKNOWN")
    if not wanted.street:
        if wanted.post_box_number:
            return Match("CERTIFIED" if exact else "USUALLY_CERTIFIED", (exact or broad)[0])
        return Match("DOMICILE_UNKNOWN", (exact or broad)[0])
    for towns, quality in ((exact, "CERTIFIED"), (broad, "USUALLY_CERTIFIED")):
        for town, street in streets_named(reference, towns, wanted.street):
            building = building_numbered(reference, street, wanted.house_number)
            if building is not None:
                return Match(quality, town, street, building)
    found = streets_named(reference, exact or broad, wanted.street)
    if found:
        return Match("DOMICILE_UNKNOWN", *found[0])
    return Match("DOMICILE_UNKNOWN", (exact or broad)[0])


def validation_result(
    wanted: ValidationRequest, match: Match, now: datetime, reference: ReferenceData
) -> dict[str, Any]:
    """The §2.3 answer for ``wanted`` matched as ``match``."""
    house: dict[str, str] = {
        "street": match.street.street_name if match.street else wanted.street,
        "houseNumber": house_number(match.building) if match.building else wanted.house_number,
    }
    if match.building is not None:
        house["houseKey"] = str(match.building.house_key)
    if wanted.additional_address:
        house["additionalAddress"] = wanted.additional_address
    zip_ = (
        {"zip": match.town.zip_code, "city": match.town.town_name}
        if match.town
        else {"zip": wanted.zip_code, "city": wanted.city}
    )
    address: dict[str, Any] = {
        "type": "POSTBOX" if wanted.post_box_number else "DOMICILE",
        "addressee": {"firstName": wanted.first_name, "lastName": wanted.last_name},
        "logisticLocation": _logistic_location(wanted, match, reference),
        "geographicLocation": {"house": house, "zip": zip_},
    }
    address["id"] = str(uuid.uuid5(_ID_NAMESPACE, repr(sorted(_flatten(address)))))
    expires = now + timedelta(days=CERTIFICATE_DAYS)
    return {"quality": match.quality, "expires": compact_timestamp(expires), "address": address}


def _logistic_location(wanted: ValidationRequest, match: Match, reference: ReferenceData) -> dict[str, Any]:
    if not wanted.post_box_number:
        return {"postBoxNumber": "", "house": {}, "zip": {}}
    town = _po_box_town(reference, match.town) if match.town else None
    zip_ = (
        {"zip": town.zip_code, "city": town.town_name}
        if town
        else {"zip": wanted.zip_code, "city": wanted.city}
    )
    return {
        "postBoxNumber": wanted.post_box_number,
        "house": {"street": f"Postfach {wanted.post_box_number}"},
        "zip": zip_,
    }


def _po_box_town(reference: ReferenceData, town: Town) -> Town:
    """The P.O. box postcode of ``town``'s place (``Bern`` 3030 → 3001), else ``town`` itself."""
    if town.po_box:
        return town
    boxes = [other for other in reference.towns if other.po_box and other.town_name == town.town_name]
    return min(boxes, key=lambda other: other.zip_code) if boxes else town


def _flatten(node: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(node, dict):
        return [pair for key, value in node.items() for pair in _flatten(value, f"{prefix}.{key}")]
    return [(prefix, str(node))]


def compact_timestamp(moment: datetime) -> str:
    """``yyyymmddThhmmss+hhmm`` (compact ISO 8601 with a numeric UTC offset), as §2.3's ``expires``."""
    return moment.strftime("%Y%m%dT%H%M%S%z")


def _now(clock: Callable[[], float]) -> datetime:
    return datetime.fromtimestamp(clock(), ZURICH).replace(microsecond=0)
