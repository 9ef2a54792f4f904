"""The synthetic Swiss-like reference data: the test-environment postcode areas plus Kriens and
Kastanienbaum, a fixed set of curated records that tests and examples rely on, and seeded filler.

Curated records come first, so their STRIDs and house keys never change when the filler does. The towns,
the curated records and the names the filler is drawn from are kept in ``data/reference_seed.json``.
"""

from __future__ import annotations

import json
import random
from functools import cache
from importlib import resources
from typing import Any, cast

from sandbox.address_service.reference import Building, ReferenceData, Resident, ResidentStatus, Street, Town

SEED = 20231101

SEED_FILE = "reference_seed.json"
_RESIDENT_FIELDS = (
    "street", "house_no", "prename", "name", "company", "birthdate", "status", "valid_from", "valid_to",
    "new_address",
)  # fmt: skip


def _load_seed() -> dict[str, Any]:
    text = resources.files("sandbox.address_service.data").joinpath(SEED_FILE).read_text(encoding="utf-8")
    seed: dict[str, Any] = json.loads(text)
    return seed


def _resident(row: dict[str, str]) -> tuple[str, str, str, str, str, str, ResidentStatus, str, str, str]:
    street, house_no, prename, name, company, birth, status, valid_from, valid_to, new = (
        row.get(field, "") for field in _RESIDENT_FIELDS
    )
    return (
        street,
        house_no,
        prename,
        name,
        company,
        birth,
        cast(ResidentStatus, status),
        valid_from,
        valid_to,
        new,
    )


_SEED = _load_seed()
# (ONRP, postcode, town, canton, P.O. box postcode)
TOWNS: tuple[tuple[int, str, str, str, bool], ...] = tuple(
    (town["onrp"], town["zip_code"], town["town"], town["canton"], town["po_box_zip"])
    for town in _SEED["towns"]
)
# (ONRP, street, house numbers; "12a" means number 12 with addition "a")
CURATED_STREETS: tuple[tuple[int, str, tuple[str, ...]], ...] = tuple(
    (street["onrp"], street["street"], tuple(street["house_numbers"])) for street in _SEED["curated_streets"]
)
# (street, house number, prename, name, company, birthdate, status, valid_from, valid_to, new address)
CURATED_RESIDENTS: tuple[tuple[str, str, str, str, str, str, ResidentStatus, str, str, str], ...] = tuple(
    _resident(row) for row in _SEED["curated_residents"]
)
_STREET_POOL: tuple[str, ...] = tuple(_SEED["filler"]["streets"])
_PRENAMES: tuple[str, ...] = tuple(_SEED["filler"]["prenames"])
_NAMES: tuple[str, ...] = tuple(_SEED["filler"]["names"])
_TRADES: tuple[str, ...] = tuple(_SEED["filler"]["trades"])
_FORMS: tuple[str, ...] = tuple(_SEED["filler"]["forms"])


class _Builder:
    def __init__(self, towns: list[Town]) -> None:
        self.towns = towns
        self.streets: list[Street] = []
        self.buildings: list[Building] = []
        self.residents: list[Resident] = []
        self.building_index: dict[tuple[str, str], Building] = {}

    def add_street(self, onrp: int, name: str, numbers: tuple[str, ...]) -> Street:
        street = Street(strid=10001 + len(self.streets), onrp=onrp, street_name=name)
        self.streets.append(street)
        for raw in numbers:
            digits = raw.rstrip("abcdefghijklmnopqrstuvwxyz")
            building = Building(100000001 + len(self.buildings), street.strid, digits, raw[len(digits) :])
            self.buildings.append(building)
            self.building_index[(name, raw)] = building
        return street

    def add_resident(
        self, house_key: int, status: ResidentStatus = "active", **values: str | int | None
    ) -> None:
        resident = Resident(len(self.residents) + 1, house_key, status, **values)  # type: ignore[arg-type]
        self.residents.append(resident)


def build_reference(seed: int = SEED) -> ReferenceData:
    """Curated records first, then seeded filler (a few thousand records in all)."""
    builder = _Builder(
        [Town(onrp, zip_code, name, canton, po_box) for onrp, zip_code, name, canton, po_box in TOWNS]
    )
    for onrp, street_name, numbers in CURATED_STREETS:
        builder.add_street(onrp, street_name, numbers)
    for (
        street_name,
        number,
        prename,
        name,
        company,
        birth,
        status,
        valid_from,
        valid_to,
        new,
    ) in CURATED_RESIDENTS:
        new_key = builder.building_index[tuple(new.rsplit(" ", 1))].house_key if new else None  # type: ignore[index]
        builder.add_resident(
            builder.building_index[(street_name, number)].house_key,
            status,
            prename=prename,
            name=name,
            company=company,
            birthdate=birth,
            valid_from=valid_from,
            valid_to=valid_to,
            new_house_key=new_key,
        )
    _add_filler(builder, random.Random(seed))
    return ReferenceData(builder.towns, builder.streets, builder.buildings, builder.residents)


def _add_filler(builder: _Builder, rng: random.Random) -> None:
    curated_keys = {building.house_key for building in builder.buildings}
    taken = {(street.onrp, street.street_name) for street in builder.streets}
    for town in builder.towns:
        if town.po_box:
            continue
        names = [name for name in rng.sample(_STREET_POOL, 5) if (town.onrp, name) not in taken]
        for street_name in names:
            count = rng.randint(3, 10)
            numbers = tuple(str(n) + ("a" if rng.random() < 0.1 else "") for n in range(1, count + 1))
            builder.add_street(town.onrp, street_name, numbers)
    filler_keys = [b.house_key for b in builder.buildings if b.house_key not in curated_keys]
    for house_key in filler_keys:
        for _ in range(rng.choice((0, 1, 1, 2, 2, 3))):
            _add_filler_resident(builder, rng, house_key, filler_keys)


def _add_filler_resident(builder: _Builder, rng: random.Random, house_key: int, keys: list[int]) -> None:
    birth = f"{rng.randint(1930, 2004)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    roll = rng.random()
    if roll < 0.08:
        company = f"{rng.choice(_TRADES)} {rng.choice(_NAMES)} {rng.choice(_FORMS)}"
        status: ResidentStatus = "closed" if rng.random() < 0.15 else "active"
        valid_to = "20221231" if status == "closed" else ""
        builder.add_resident(house_key, status, company=company, valid_to=valid_to)
        return
    person: dict[str, str | int | None] = {
        "prename": rng.choice(_PRENAMES),
        "name": rng.choice(_NAMES),
        "birthdate": birth,
    }
    if roll < 0.14:
        new_key = rng.choice(keys)
        builder.add_resident(house_key, "moved", valid_from="20240115", new_house_key=new_key, **person)
        builder.add_resident(new_key, "active", valid_from="20240115", **person)
    elif roll < 0.17:
        builder.add_resident(house_key, "moved_unknown", valid_from="20231001", **person)
    elif roll < 0.20:
        builder.add_resident(house_key, "deceased", valid_to="20230630", **person)
    else:
        builder.add_resident(house_key, "active", **person)


@cache
def load_reference() -> ReferenceData:
    """The reference data set (deterministic, generated on first use and shared by all app instances)."""
    return build_reference()
