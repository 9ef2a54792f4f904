"""The address assistant over the reference data: auto-complete (§4.3) for towns, streets and buildings,
and building verification (§4.4). Hard comparison only: no typing errors are tolerated.

Towns come from the postcode directory (every Swiss postcode), streets and buildings from the detailed
reference. Outside the detailed postcode areas a building is verified as the batch alignment would find it
(see :mod:`sandbox.address_service.directory_matching`): a plausible street and house number in a known
town exist unless the draw says otherwise.

Building verification PSTAT (the spec leaves the values open): 1 the building exists as written, 2 it exists
and the official spelling differs (returned), 3 the street exists but not the house number, 4 the town
exists but not the street, 5 neither postcode nor town is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.address_service.directory_matching import known_address
from sandbox.address_service.normalize import compact, starts_a_word
from sandbox.address_service.postcodes import PostcodeDirectory
from sandbox.address_service.reference import Building, ReferenceData, Street, Town

_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True)
class AutoCompleteQuery:
    """One auto-complete request, whatever version's field names it came with."""

    onrp: int = 0
    zip_code: str = ""
    zip_addition: str = ""
    town_name: str = ""
    strid: int = 0
    street_name: str = ""
    house_no: str = ""
    house_no_addition: str = ""
    zip_order_mode: int = 0


@dataclass(frozen=True)
class AutoCompleteHit:
    town: Town
    street: Street | None = None
    building: Building | None = None


def autocomplete(
    reference: ReferenceData, query: AutoCompleteQuery, directory: PostcodeDirectory | None = None
) -> list[AutoCompleteHit]:
    """The hits for ``query``; which fields are filled selects the variant of the §4.3 table. Towns are
    those of ``directory`` when given, else the reference's."""
    wants_buildings = bool(query.house_no.strip() or query.house_no_addition.strip())
    by_town_terms = bool(query.zip_code.strip() or query.town_name.strip())
    hits: list[AutoCompleteHit] = []
    if not wants_buildings:
        if query.street_name.strip():
            for town, street in _streets(reference, query, exact_town=query.onrp != 0):
                hits.append(AutoCompleteHit(town, street))
        elif by_town_terms:
            towns = directory.towns if directory is not None else reference.towns
            hits = [AutoCompleteHit(town) for town in towns if _town_matches(town, query)]
    else:
        if query.strid:
            chosen = reference.street_by_strid.get(query.strid)
            pairs = [(reference.town_by_onrp[chosen.onrp], chosen)] if chosen else []
        else:
            pairs = _streets(reference, query, exact_town=False)
        for town, street in pairs:
            for building in reference.buildings_of_street.get(street.strid, []):
                if _house_matches(building, query):
                    hits.append(AutoCompleteHit(town, street, building))
    return sorted(hits, key=lambda hit: _order(hit, query.zip_order_mode))


def _streets(
    reference: ReferenceData, query: AutoCompleteQuery, *, exact_town: bool
) -> list[tuple[Town, Street]]:
    if exact_town:
        town = reference.town_by_onrp.get(query.onrp)
        towns = [town] if town else []
    else:
        towns = [town for town in reference.towns if _town_matches(town, query)]
    return [
        (town, street)
        for town in towns
        for street in reference.streets_of_town.get(town.onrp, [])
        if starts_a_word(query.street_name, street.street_name)
    ]


def _town_matches(town: Town, query: AutoCompleteQuery) -> bool:
    return (
        town.zip_code.startswith(query.zip_code.strip())
        and town.zip_addition.startswith(query.zip_addition.strip())
        and starts_a_word(query.town_name, town.town_name)
    )


def _house_matches(building: Building, query: AutoCompleteQuery) -> bool:
    written = f"{building.house_no}{building.house_no_addition}".casefold()
    return written.startswith(
        query.house_no.strip().casefold()
    ) and building.house_no_addition.casefold().startswith(query.house_no_addition.strip().casefold())


def _order(hit: AutoCompleteHit, zip_order_mode: int) -> tuple[int, str, str, str, int, str]:
    if zip_order_mode == 1:
        zip_type = 1 if hit.town.po_box else 0
    elif zip_order_mode == 2:
        zip_type = 0 if hit.town.po_box else 1
    else:
        zip_type = 0
    street = hit.street.street_name if hit.street else ""
    building = hit.building
    digits = _NUMBER.match(building.house_no) if building else None
    number = int(digits.group()) if digits else 0
    addition = building.house_no_addition if building else ""
    return (zip_type, hit.town.zip_code, hit.town.town_name, street, number, addition)


@dataclass(frozen=True)
class BuildingVerification:
    pstat: int
    town: Town | None = None
    street: Street | None = None
    building: Building | None = None


def verify_building(
    reference: ReferenceData,
    street_name: str,
    house_no: str,
    house_no_addition: str,
    zip_code: str,
    town_name: str,
    directory: PostcodeDirectory | None = None,
) -> BuildingVerification:
    """Whether the (non-personal) address exists, with the official spelling when it does; towns are
    those of ``directory`` when given, else the reference's."""
    towns = [
        town
        for town in (directory.towns if directory is not None else reference.towns)
        if (not zip_code.strip() or town.zip_code == zip_code.strip())
        and (not town_name.strip() or _same_town(town_name, town.town_name))
        and (zip_code.strip() or town_name.strip())
    ]
    if not towns:
        return BuildingVerification(5)
    streets = [
        (town, street)
        for town in towns
        for street in reference.streets_of_town.get(town.onrp, [])
        if compact(street.street_name) == compact(street_name)
    ]
    if not streets:
        return _verify_in_directory(directory, towns, street_name, house_no, house_no_addition, town_name)
    wanted = f"{house_no.strip()}{house_no_addition.strip()}".casefold().replace(" ", "")
    for town, street in streets:
        for building in reference.buildings_of_street.get(street.strid, []):
            if f"{building.house_no}{building.house_no_addition}".casefold() != wanted:
                continue
            exact = (
                street.street_name == street_name.strip()
                and (not town_name.strip() or town.town_name == town_name.strip())
                and f"{building.house_no}{building.house_no_addition}"
                == f"{house_no.strip()}{house_no_addition.strip()}"
            )
            return BuildingVerification(1 if exact else 2, town, street, building)
    town, street = streets[0]
    return BuildingVerification(3, town, street)


def _verify_in_directory(
    directory: PostcodeDirectory | None,
    towns: list[Town],
    street_name: str,
    house_no: str,
    house_no_addition: str,
    town_name: str,
) -> BuildingVerification:
    """PSTAT 1/2 for a building the directory takes to exist in a town outside the detailed areas, else 4."""
    open_towns = [
        town for town in towns if directory is not None and not directory.is_detailed(town.zip_code)
    ]
    if not open_towns:
        return BuildingVerification(4, towns[0])
    town = open_towns[0]
    address = known_address(town, street_name, house_no, house_no_addition)
    if address is None:
        return BuildingVerification(4, town)
    building = address.building
    exact = (
        address.street.street_name == street_name.strip()
        and (not town_name.strip() or town.town_name == town_name.strip())
        and f"{building.house_no}{building.house_no_addition}"
        == f"{house_no.strip()}{house_no_addition.strip()}"
    )
    return BuildingVerification(1 if exact else 2, town, address.street, building)


def _same_town(given: str, official: str) -> bool:
    return compact(given) in {compact(official), *(compact(part) for part in official.split("/"))}
