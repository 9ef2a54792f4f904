"""The commerce API's view of the sandbox's Swiss reference data: the address service's towns, streets and
buildings plus the few places the default commerce users live at (Bern, Zürich, Genève), and the lookups
of validation, auto-completion, delivery and pickup.

The supplement gets its own ONRPs, STRIDs and house keys (above the address service's ranges) so the
address service's data and keys stay as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from sandbox.address_service.normalize import compact, starts_a_word
from sandbox.address_service.postcodes import load_postcode_directory
from sandbox.address_service.reference import (
    Building,
    ReferenceData,
    Street,
    Town,
)
from sandbox.address_service.reference_seed import load_reference

# (ONRP, postcode, town, canton, P.O. box postcode)
SUPPLEMENT_TOWNS: tuple[tuple[int, str, str, str, bool], ...] = (
    (9001, "3030", "Bern", "BE", False),
    (9002, "3011", "Bern", "BE", False),
    (9003, "3008", "Bern", "BE", False),
    (9004, "3001", "Bern", "BE", True),
    (9010, "8001", "Zürich", "ZH", False),
    (9011, "8021", "Zürich", "ZH", True),
    (9020, "1204", "Genève", "GE", False),
    (9021, "1211", "Genève", "GE", True),
)
# (ONRP, street, ((house number, house key or 0 for a generated one), ...)); "12a" is 12 with addition "a".
SUPPLEMENT_STREETS: tuple[tuple[int, str, tuple[tuple[str, int], ...]], ...] = (
    (9001, "Wankdorfallee", (("1", 0), ("2", 0), ("4", 76543210), ("6", 0))),
    (9002, "Bahnhofplatz", (("1", 0), ("10", 0))),
    (9002, "Spitalgasse", (("2", 0), ("4", 0), ("12", 0), ("12a", 0))),
    (9003, "Schanzenstrasse", (("1", 0), ("4", 0), ("6", 0))),
    (9010, "Bahnhofstrasse", (("1", 12345678), ("3", 0), ("10", 0))),
    (9010, "Limmatquai", (("2", 0), ("4", 0))),
    (9020, "Rue du Rhône", (("8", 0), ("10", 87654321), ("12", 0))),
)
_FIRST_STRID = 90001
_FIRST_HOUSE_KEY = 900000001
_DIGITS = re.compile(r"\d+")


@cache
def commerce_reference() -> ReferenceData:
    """The address service's reference data with the commerce supplement (built once per process)."""
    base = load_reference()
    towns = [
        Town(onrp, zip_code, name, canton, po_box)
        for onrp, zip_code, name, canton, po_box in SUPPLEMENT_TOWNS
    ]
    streets: list[Street] = []
    buildings: list[Building] = []
    for onrp, name, numbers in SUPPLEMENT_STREETS:
        street = Street(_FIRST_STRID + len(streets), onrp, name)
        streets.append(street)
        for raw, key in numbers:
            digits = raw.rstrip("abcdefghijklmnopqrstuvwxyz")
            house_key = key or _FIRST_HOUSE_KEY + len(buildings)
            buildings.append(Building(house_key, street.strid, digits, raw[len(digits) :]))
    return ReferenceData(
        [*base.towns, *towns], [*base.streets, *streets], [*base.buildings, *buildings], base.residents
    )


def same_town(given: str, official: str) -> bool:
    """``given`` names the town ``official`` (normalised; ``Biel`` and ``Bienne`` name ``Biel/Bienne``)."""
    return compact(given) in {compact(official), *(compact(part) for part in official.split("/"))}


def towns_named(reference: ReferenceData, zip_code: str, city: str) -> list[Town]:
    """Towns whose postcode is ``zip_code`` (when given) and whose name is ``city`` (when given)."""
    zip_code, city = zip_code.strip(), city.strip()
    if not zip_code and not city:
        return []
    return [
        town
        for town in reference.towns
        if (not zip_code or town.zip_code == zip_code) and (not city or same_town(city, town.town_name))
    ]


def house_number(building: Building) -> str:
    """The house number as written in an address (``12a``)."""
    return f"{building.house_no}{building.house_no_addition}"


def house_label(building: Building) -> str:
    """The house number as the houses auto-completion lists it: number and suffix apart (``12 A``)."""
    if building.house_no_addition:
        return f"{building.house_no} {building.house_no_addition.upper()}"
    return building.house_no


def streets_named(reference: ReferenceData, towns: list[Town], name: str) -> list[tuple[Town, Street]]:
    """The streets of ``towns`` called ``name`` (normalised: case, umlauts, ``str.``, spaces)."""
    wanted = compact(name)
    return [
        (town, street)
        for town in towns
        for street in reference.streets_of_town.get(town.onrp, [])
        if compact(street.street_name) == wanted
    ]


def building_numbered(reference: ReferenceData, street: Street, number: str) -> Building | None:
    """The building of ``street`` with house number ``number`` (``12a``, ``12 A`` and ``12A`` alike)."""
    wanted = number.replace(" ", "").casefold()
    if not wanted:
        return None
    for building in reference.buildings_of_street.get(street.strid, []):
        if house_number(building).casefold() == wanted:
            return building
    return None


@cache
def every_town() -> tuple[Town, ...]:
    """The reference's towns and every other locality of the postcode directory (a postcode and town once)."""
    towns = list(commerce_reference().towns)
    known = {(town.zip_code, compact(town.town_name), town.po_box) for town in towns}
    towns += [
        town
        for town in load_postcode_directory().towns
        if (town.zip_code, compact(town.town_name), town.po_box) not in known
    ]
    return tuple(towns)


def find_zips(towns: Iterable[Town], term: str, *, po_box: bool) -> list[Town]:
    """Towns of the kind asked for whose postcode starts with ``term`` (digits) or whose name has a word
    starting with it, by postcode then name."""
    term = term.strip()
    if term.isdigit():
        hits = [town for town in towns if town.zip_code.startswith(term)]
    else:
        hits = [town for town in towns if starts_a_word(term, town.town_name)]
    return sorted((town for town in hits if town.po_box == po_box), key=lambda t: (t.zip_code, t.town_name))


def find_streets(reference: ReferenceData, term: str, zip_code: str) -> list[str]:
    """Street names with a word starting with ``term``, in the town(s) of ``zip_code`` when given."""
    towns = [town for town in reference.towns if not zip_code or town.zip_code == zip_code]
    names = {
        street.street_name
        for town in towns
        for street in reference.streets_of_town.get(town.onrp, [])
        if starts_a_word(term, street.street_name)
    }
    return sorted(names, key=str.casefold)


def find_houses(reference: ReferenceData, zip_code: str, street_name: str, number: str) -> list[str]:
    """House numbers of the street ``street_name`` in ``zip_code`` that start with ``number``."""
    towns = [town for town in reference.towns if town.zip_code == zip_code]
    prefix = number.replace(" ", "").casefold()
    buildings = [
        building
        for _, street in streets_named(reference, towns, street_name)
        for building in reference.buildings_of_street.get(street.strid, [])
        if house_number(building).casefold().startswith(prefix)
    ]
    buildings.sort(key=_numeric_order)
    return list(dict.fromkeys(house_label(building) for building in buildings))


def _numeric_order(building: Building) -> tuple[int, str]:
    digits = _DIGITS.match(building.house_no)
    return (int(digits.group()) if digits else 0, building.house_no_addition)


def first_building(reference: ReferenceData, town: Town) -> tuple[Street, Building] | None:
    """A street and building of ``town`` to stand for it (pickup and acceptance points), or None."""
    for street in reference.streets_of_town.get(town.onrp, []):
        buildings = reference.buildings_of_street.get(street.strid, [])
        if buildings:
            return street, buildings[0]
    return None
