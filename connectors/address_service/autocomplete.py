"""Builds auto-complete requests from what the user asks for, following the query-level table of spec §4.3.

The service decides the query level from which fields are filled; :func:`build_autocomplete_request`
picks the table row (:class:`AutocompleteVariant`) for a :class:`AutocompleteQuery` and fills exactly the
fields that row allows, in the field names of autocomplete4, 3 or 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any, Literal

from core.errors import PostflowsError

Target = Literal["towns", "streets", "buildings"]


class ZipOrderMode(IntEnum):
    NUMERIC_ASCENDING = 0
    ZIP_TYPE_NOT_PO_BOX = 1
    ZIP_PO_BOX = 2


class AutocompleteVariant(StrEnum):
    """The rows of the §4.3 query-level table."""

    TOWNS = "towns"
    STREETS_ANY_TOWN = "streets, no town restriction"
    STREETS_TOWN_TERMS = "streets, towns by search terms"
    STREETS_ONE_TOWN = "streets, exactly one town"
    BUILDINGS_ANY = "buildings, no restriction"
    BUILDINGS_STREET_TERMS = "buildings, streets by terms"
    BUILDINGS_TOWN_TERMS = "buildings, towns by terms"
    BUILDINGS_ONE_STREET = "buildings, exactly one street"
    BUILDINGS_STREET_AND_TOWN_TERMS = "buildings, streets and towns by terms"


class AutocompleteQueryError(PostflowsError, ValueError):
    """The query cannot be expressed as any row of the §4.3 table."""


@dataclass(frozen=True)
class AutocompleteQuery:
    """What to complete and how to restrict it.

    Attributes:
        target: towns, streets or buildings.
        zip_code: postcode or its beginning.
        town_name: town name or the beginning of one of its words.
        street_name: street name or the beginning of one of its words.
        onrp: restrict streets to exactly one town (town number).
        strid: restrict buildings to exactly one street (street number).
        house_no: house number or its beginning (buildings).
        house_no_addition: house number addition (buildings).
        zip_addition: postcode addition, sent with a postcode.
        zip_order_mode: result ordering (§4.3).
        zip_filter_mode: autocomplete4 only; 0 is the value the spec shows.
    """

    target: Target
    zip_code: str = ""
    town_name: str = ""
    street_name: str = ""
    onrp: int = 0
    strid: int = 0
    house_no: str = ""
    house_no_addition: str = ""
    zip_addition: str = ""
    zip_order_mode: ZipOrderMode = ZipOrderMode.NUMERIC_ASCENDING
    zip_filter_mode: int = 0


def classify(query: AutocompleteQuery) -> AutocompleteVariant:
    """The §4.3 row that ``query`` maps to; raises :class:`AutocompleteQueryError` when none does."""
    street = bool(query.street_name.strip())
    town = bool(query.zip_code.strip() or query.town_name.strip())
    house = bool(query.house_no.strip() or query.house_no_addition.strip())
    if query.target == "towns":
        if street or house or query.onrp or query.strid:
            raise AutocompleteQueryError("a town search takes only a postcode and/or town name")
        if not town:
            raise AutocompleteQueryError(
                "a town search needs a postcode or a town name (or the start of one)"
            )
        return AutocompleteVariant.TOWNS
    if query.target == "streets":
        if house or query.strid:
            raise AutocompleteQueryError("a street search takes no house number and no STRID")
        if not street:
            raise AutocompleteQueryError("a street search needs a street name (or the start of one)")
        if query.onrp:
            return AutocompleteVariant.STREETS_ONE_TOWN
        return AutocompleteVariant.STREETS_TOWN_TERMS if town else AutocompleteVariant.STREETS_ANY_TOWN
    if not house:
        raise AutocompleteQueryError("a building search needs a house number or house number addition")
    if query.strid:
        return AutocompleteVariant.BUILDINGS_ONE_STREET
    if query.onrp:
        raise AutocompleteQueryError(
            "buildings cannot be restricted by ONRP; restrict them by STRID or by street/town terms"
        )
    if street and town:
        return AutocompleteVariant.BUILDINGS_STREET_AND_TOWN_TERMS
    if street:
        return AutocompleteVariant.BUILDINGS_STREET_TERMS
    if town:
        return AutocompleteVariant.BUILDINGS_TOWN_TERMS
    return AutocompleteVariant.BUILDINGS_ANY


def build_autocomplete_request(query: AutocompleteQuery, version: Literal[2, 3, 4] = 4) -> dict[str, Any]:
    """The JSON body for /autocomplete{version}, filling only the fields the chosen variant allows."""
    variant = classify(query)
    fields: dict[str, Any] = {
        "ONRP": 0,
        "ZipCode": "",
        "ZipAddition": "",
        "TownName": "",
        "STRID": 0,
        "StreetName": "",
        "HouseKey": 0,
        "HouseNo": "",
        "HouseNoAddition": "",
    }
    town_terms = variant in (
        AutocompleteVariant.TOWNS,
        AutocompleteVariant.STREETS_TOWN_TERMS,
        AutocompleteVariant.BUILDINGS_TOWN_TERMS,
        AutocompleteVariant.BUILDINGS_STREET_AND_TOWN_TERMS,
    )
    street_terms = variant in (
        AutocompleteVariant.STREETS_ANY_TOWN,
        AutocompleteVariant.STREETS_TOWN_TERMS,
        AutocompleteVariant.STREETS_ONE_TOWN,
        AutocompleteVariant.BUILDINGS_STREET_TERMS,
        AutocompleteVariant.BUILDINGS_STREET_AND_TOWN_TERMS,
    )
    if town_terms:
        fields["ZipCode"] = query.zip_code.strip()
        fields["TownName"] = query.town_name.strip()
        if query.zip_code.strip():
            fields["ZipAddition"] = query.zip_addition.strip()
    if street_terms:
        fields["StreetName"] = query.street_name.strip()
    if variant is AutocompleteVariant.STREETS_ONE_TOWN:
        fields["ONRP"] = query.onrp
    if variant is AutocompleteVariant.BUILDINGS_ONE_STREET:
        fields["STRID"] = query.strid
    if query.target == "buildings":
        fields["HouseNo"] = query.house_no.strip()
        fields["HouseNoAddition"] = query.house_no_addition.strip()

    if version == 2:
        renamed = {_V2_NAMES.get(name, name): value for name, value in fields.items()}
        return {"request": renamed, "zipOrderMode": int(query.zip_order_mode)}
    body: dict[str, Any] = {"request": fields, "zipOrderMode": int(query.zip_order_mode)}
    if version == 4:
        body["zipFilterMode"] = query.zip_filter_mode
    return body


_V2_NAMES = {
    "ONRP": "Onrp",
    "ZipCode": "Zipcode",
    "STRID": "StrId",
    "StreetName": "Streetname",
    "HouseNo": "HouseNumber",
    "HouseNoAddition": "HouseNumberAddition",
}
