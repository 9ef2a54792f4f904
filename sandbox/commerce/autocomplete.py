"""Auto-completion of postcodes, streets and house numbers (§4.1 ``zips``, ``streets``, ``houses``; §2.4).

Refusals: 400 when a required parameter is missing or shorter than :data:`MIN_TERM` characters, a ``zip`` is
not four digits or ``type`` is neither DOMICILE nor POSTBOX; 404 when nothing matches (§7 "no results").
Zips carry ``city39`` beside ``city18`` and ``city27``, as real responses do.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request

from sandbox.address_service.reference import Town
from sandbox.commerce.errors import INVALID_SEARCH, NO_RESULTS, CommerceError
from sandbox.commerce.reference import commerce_reference, every_town, find_houses, find_streets, find_zips

ZIPS = "/address/v1/zips"
STREETS = "/address/v1/streets"
HOUSES = "/address/v1/houses"
MIN_TERM = 2
_ZIP = re.compile(r"^\d{4}$")


def autocomplete_router() -> APIRouter:
    router = APIRouter()

    @router.get(ZIPS)
    def zips(request: Request) -> dict[str, Any]:
        term = _term(request, "zipCity")
        kind = request.query_params.get("type", "DOMICILE").strip().upper() or "DOMICILE"
        if kind not in ("DOMICILE", "POSTBOX"):
            raise CommerceError(400, INVALID_SEARCH, f"type must be DOMICILE or POSTBOX, not {kind!r}")
        towns = find_zips(every_town(), term, po_box=kind == "POSTBOX")
        return {"zips": [_zip_entry(town) for town in _found(towns, f"zipCity {term!r}")]}

    @router.get(STREETS)
    def streets(request: Request) -> dict[str, Any]:
        term = _term(request, "name")
        zip_code = _zip(request, required=False)
        names = find_streets(commerce_reference(), term, zip_code)
        return {"streets": _found(names, f"name {term!r}")}

    @router.get(HOUSES)
    def houses(request: Request) -> dict[str, Any]:
        zip_code = _zip(request, required=True)
        street = _term(request, "streetname")
        number = request.query_params.get("number", "").strip()
        found = find_houses(commerce_reference(), zip_code, street, number)
        return {"houses": _found(found, f"{street!r} {number!r} in {zip_code}")}

    return router


def _term(request: Request, name: str) -> str:
    term = request.query_params.get(name, "").strip()
    if len(term) < MIN_TERM:
        raise CommerceError(400, INVALID_SEARCH, f"parameter {name} needs at least {MIN_TERM} characters")
    return term


def _zip(request: Request, *, required: bool) -> str:
    zip_code = request.query_params.get("zip", "").strip()
    if not zip_code and not required:
        return ""
    if not _ZIP.match(zip_code):
        raise CommerceError(400, INVALID_SEARCH, f"parameter zip must be 4 digits, not {zip_code!r}")
    return zip_code


def _found(hits: list[Any], what: str) -> list[Any]:
    if not hits:
        raise CommerceError(404, NO_RESULTS, f"no results for {what}")
    return hits


def _zip_entry(town: Town) -> dict[str, str]:
    return {
        "zip": town.zip_code,
        "city18": town.town_name[:18],
        "city27": town.town_name[:27],
        "city39": town.town_name[:39],
    }
