"""The sandbox's reference database: towns, streets, buildings and the persons and companies living or
working in them, with the lookups the matcher and the address assistant need. Built once per process.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

ResidentStatus = Literal["active", "moved", "moved_unknown", "deceased", "closed"]


@dataclass(frozen=True)
class Town:
    """A postcode/town combination (ONRP). ``po_box`` marks P.O. box postcodes (no streets)."""

    onrp: int
    zip_code: str
    town_name: str
    canton: str
    po_box: bool = False
    zip_addition: str = "00"
    country_code: str = "CH"


@dataclass(frozen=True)
class Street:
    strid: int
    onrp: int
    street_name: str


@dataclass(frozen=True)
class Building:
    house_key: int
    strid: int
    house_no: str
    house_no_addition: str = ""


@dataclass(frozen=True)
class Resident:
    """A person (``prename``/``name``) or a company (``company``) known at a building.

    ``moved`` residents have ``new_house_key``; ``valid_from`` is the move date, ``valid_to`` the date of
    death or of closing; dates are ``YYYYMMDD``.
    """

    resident_id: int
    house_key: int
    status: ResidentStatus = "active"
    prename: str = ""
    name: str = ""
    company: str = ""
    birthdate: str = ""
    valid_from: str = ""
    valid_to: str = ""
    new_house_key: int | None = None

    @property
    def is_company(self) -> bool:
        return bool(self.company)


@dataclass(frozen=True)
class Address:
    """A building with its street and town resolved: what the matcher and the assistant hand back."""

    town: Town
    street: Street
    building: Building


@dataclass
class ReferenceData:
    """All reference records with their indexes."""

    towns: list[Town]
    streets: list[Street]
    buildings: list[Building]
    residents: list[Resident]
    town_by_onrp: dict[int, Town] = field(init=False)
    street_by_strid: dict[int, Street] = field(init=False)
    building_by_key: dict[int, Building] = field(init=False)
    streets_of_town: dict[int, list[Street]] = field(init=False)
    buildings_of_street: dict[int, list[Building]] = field(init=False)
    residents_of_building: dict[int, list[Resident]] = field(init=False)

    def __post_init__(self) -> None:
        self.town_by_onrp = {town.onrp: town for town in self.towns}
        self.street_by_strid = {street.strid: street for street in self.streets}
        self.building_by_key = {building.house_key: building for building in self.buildings}
        self.streets_of_town = defaultdict(list)
        for street in self.streets:
            self.streets_of_town[street.onrp].append(street)
        self.buildings_of_street = defaultdict(list)
        for building in self.buildings:
            self.buildings_of_street[building.strid].append(building)
        self.residents_of_building = defaultdict(list)
        for resident in self.residents:
            self.residents_of_building[resident.house_key].append(resident)

    def address(self, house_key: int) -> Address:
        """The building ``house_key`` with its street and town."""
        building = self.building_by_key[house_key]
        street = self.street_by_strid[building.strid]
        return Address(self.town_by_onrp[street.onrp], street, building)

    def residents_at(self, house_key: int) -> list[Resident]:
        return self.residents_of_building.get(house_key, [])
