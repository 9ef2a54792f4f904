"""Error-tolerant alignment of one input record against the reference data: finds the building, then the
person, household or company there, and decides QSTAT, the output values and the match probability.

Scores are 0..1; a result below :data:`MIN_SCORE` is never returned as a match (it becomes QSTAT 50 when
the address alone was found, 51 otherwise, with the input echoed). A record the detailed reference does not
find is, given a postcode directory, aligned by :mod:`sandbox.address_service.directory_matching` (outside
the detailed postcode areas).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sandbox.address_service.directory_matching import align_with_directory
from sandbox.address_service.fields import INPUT_FIELDS, OUTPUT_NAME_OF_INPUT, QUERY_OUTPUT_NAMES
from sandbox.address_service.normalize import compact, similarity, split_house_number
from sandbox.address_service.postcodes import PostcodeDirectory
from sandbox.address_service.reference import Address, ReferenceData, Resident
from sandbox.address_service.shortreport import build_short_report, correction_type, not_analysed_report

MIN_SCORE = 0.94
_CANDIDATE_STREET = 0.75
_LEGAL_FORMS = re.compile(r"\b(ag|gmbh|sa|sarl|sàrl|& co\.?|co\.?|ltd|kg)\s*$", re.IGNORECASE)


@dataclass
class AddressHit:
    address: Address
    score: float


@dataclass
class MatchResult:
    """Outcome of aligning one record. ``output`` is keyed by the §2.3 (query) field names."""

    qstat: str
    score: float
    output: dict[str, str]
    address: Address | None = None
    resident: Resident | None = None
    new_address: Address | None = None
    input_values: dict[str, str] = field(default_factory=dict)

    def identity(self) -> tuple[str, ...]:
        """What makes two batch rows the same addressee (for duplicate groups K/F)."""
        if self.resident is not None:
            return ("resident", str(self.resident.resident_id))
        values = self.input_values
        person = tuple(compact(values.get(name, "")) for name in ("Company", "Prename", "Name"))
        if self.address is not None:
            return ("address", str(self.address.building.house_key), *person)
        return ("input", *(compact(values.get(name, "")) for name in INPUT_FIELDS))


class Matcher:
    """Aligns records against one :class:`ReferenceData` and, for what it does not find, a postcode
    directory (when given); ``validation_only`` reports only QSTAT 1 and 3."""

    def __init__(
        self,
        reference: ReferenceData,
        *,
        validation_only: bool = False,
        directory: PostcodeDirectory | None = None,
    ) -> None:
        self.reference = reference
        self.validation_only = validation_only
        self.directory = directory

    def match(self, raw: Mapping[str, str]) -> MatchResult:
        """Align one record given as canonical input field -> value."""
        values = {name: str(raw.get(name, "") or "").strip() for name in INPUT_FIELDS}
        hit = self.find_address(values)
        if hit is not None and hit.score >= MIN_SCORE:
            result = self._match_addressee(values, hit)
        elif self.directory is not None:
            result = self._directory_result(values, self.directory)
        else:
            result = self._result("51", 0.0, values, None, None)
        if self.validation_only and result.qstat not in ("1", "3"):
            result = MatchResult("", 0.0, _echo(values), input_values=values)
            result.output["ShortReport"] = not_analysed_report()
        return result

    def find_address(self, values: Mapping[str, str]) -> AddressHit | None:
        """The best building for the address part of ``values``, with its score, or None."""
        street_in, house_in = values.get("Streetname", ""), values.get("HouseNo", "")
        if not street_in or not house_in:
            return None
        number, addition = split_house_number(house_in, values.get("HouseNoAddition", ""))
        best: AddressHit | None = None
        for town in self.reference.towns:
            if town.po_box:
                continue
            locality = _locality_score(
                values.get("ZIPCode", ""), values.get("TownName", ""), town.zip_code, town.town_name
            )
            if locality < 0.6:
                continue
            for street in self.reference.streets_of_town.get(town.onrp, []):
                street_score = similarity(street_in, street.street_name)
                if street_score < _CANDIDATE_STREET:
                    continue
                for building in self.reference.buildings_of_street.get(street.strid, []):
                    house_score = _house_score(
                        number, addition, building.house_no, building.house_no_addition
                    )
                    if house_score == 0.0:
                        continue
                    score = 0.45 * street_score + 0.2 * house_score + 0.35 * locality
                    if best is None or score > best.score:
                        best = AddressHit(Address(town, street, building), score)
        return best

    def _directory_result(self, values: dict[str, str], directory: PostcodeDirectory) -> MatchResult:
        outcome = align_with_directory(values, directory)
        if outcome.address is None:
            return self._result("51", 0.0, values, None, None)
        if outcome.new_address is not None:
            result = self._result(outcome.qstat, outcome.score, values, outcome.new_address, outcome.resident)
            result.address, result.new_address = outcome.address, outcome.new_address
            return result
        result = self._result(outcome.qstat, outcome.score, values, outcome.address, outcome.resident)
        if outcome.household:
            result.output["Name"] = outcome.household
        return result

    def _match_addressee(self, values: dict[str, str], hit: AddressHit) -> MatchResult:
        residents = self.reference.residents_at(hit.address.building.house_key)
        if values["Company"]:
            company = _best(
                residents, lambda r: _company_score(values["Company"], r) if r.is_company else 0.0
            )
            if company is not None:
                resident, score = company
                total = 0.5 * hit.score + 0.5 * score
                if total >= MIN_SCORE:
                    qstat = "25" if resident.status == "closed" else "3"
                    return self._result(qstat, total, values, hit.address, resident)
        person = _best(residents, lambda r: _person_score(values, r))
        if person is not None:
            resident, score = person
            total = 0.5 * hit.score + 0.5 * score
            if total >= MIN_SCORE:
                return self._person_result(values, hit.address, resident, total)
        household = _best(
            residents,
            lambda r: similarity(values["Name"], r.name) if r.status == "active" and r.name else 0.0,
        )
        if household is not None and values["Name"]:
            resident, score = household
            total = 0.5 * hit.score + 0.5 * score
            if total >= MIN_SCORE:
                result = self._result("2", total, values, hit.address, None)
                result.output["Name"] = resident.name
                return result
        return self._result("50", hit.score, values, hit.address, None)

    def _person_result(
        self, values: dict[str, str], address: Address, person: Resident, score: float
    ) -> MatchResult:
        if person.status == "moved" and person.new_house_key is not None:
            new_address = self.reference.address(person.new_house_key)
            result = self._result("4", score, values, new_address, person)
            result.address, result.new_address = address, new_address
            return result
        qstat = {"active": "1", "moved_unknown": "27", "deceased": "25"}.get(person.status, "1")
        return self._result(qstat, score, values, address, person)

    def _result(
        self,
        qstat: str,
        score: float,
        values: dict[str, str],
        address: Address | None,
        resident: Resident | None,
    ) -> MatchResult:
        output = _echo(values)
        if address is not None:
            output.update(_address_output(address))
        if resident is not None:
            output.update(_resident_output(resident))
        output["QSTAT"] = qstat
        output["TotalScore"] = f"{score * 100:.2f}"
        output["ShortReport"] = build_short_report(values, output, qstat, resident)
        output["CorrectionType"] = correction_type(output["ShortReport"], qstat)
        return MatchResult(qstat, score, output, address, resident, input_values=values)


def _echo(values: Mapping[str, str]) -> dict[str, str]:
    output = dict.fromkeys(QUERY_OUTPUT_NAMES, "")
    for name in INPUT_FIELDS:
        output[OUTPUT_NAME_OF_INPUT[name]] = values.get(name, "")
    return output


def _address_output(address: Address) -> dict[str, str]:
    town, street, building = address.town, address.street, address.building
    return {
        "Housekey": str(building.house_key),
        "Streetname": street.street_name,
        "HouseNo": building.house_no,
        "HouseNoAddition": building.house_no_addition,
        "ZIPcode": town.zip_code,
        "ZIPAddition": town.zip_addition,
        "TownName": town.town_name,
        "Canton": town.canton,
        "CountryCode": town.country_code,
    }


def _resident_output(resident: Resident) -> dict[str, str]:
    output = {"ValidFrom": resident.valid_from, "ValidTo": resident.valid_to}
    if resident.is_company:
        output["Company"] = resident.company
    else:
        output.update(Prename=resident.prename, Name=resident.name, Birthdate=resident.birthdate)
    return output


def _best(residents: list[Resident], score_of: Callable[[Resident], float]) -> tuple[Resident, float] | None:
    scored = [(resident, score_of(resident)) for resident in residents]
    scored = [(resident, score) for resident, score in scored if score > 0.0]
    if not scored:
        return None
    # Prefer the live record when a moved-away and a current record score alike.
    scored.sort(key=lambda item: (-item[1], item[0].status != "active", item[0].resident_id))
    return scored[0]


def _person_score(values: Mapping[str, str], resident: Resident) -> float:
    if resident.is_company or not values["Name"]:
        return 0.0
    name = similarity(values["Name"], resident.name)
    if name < 0.8:
        return 0.0
    if not values["Prename"]:
        return 0.0
    prename = similarity(values["Prename"], resident.prename)
    return 0.0 if prename < 0.8 else 0.5 * name + 0.5 * prename


def _company_score(given: str, resident: Resident) -> float:
    full = similarity(given, resident.company)
    bare = similarity(_LEGAL_FORMS.sub("", given), _LEGAL_FORMS.sub("", resident.company))
    return max(full, bare)


def _town_similarity(given: str, official: str) -> float:
    """Town names also match by one part of a bilingual name or without the canton suffix."""
    variants = {official, *official.split("/"), re.sub(r"\s+[A-Z]{2}$", "", official)}
    return max(similarity(given, variant) for variant in variants)


def _locality_score(zip_in: str, town_in: str, zip_code: str, town_name: str) -> float:
    zip_in = zip_in.strip()
    if zip_in and town_in:
        town_score = _town_similarity(town_in, town_name)
        if zip_in == zip_code:
            return 0.6 + 0.4 * town_score
        return 0.85 * town_score if town_score >= 0.9 else 0.0
    if zip_in:
        return 1.0 if zip_in == zip_code else 0.0
    if town_in:
        return _town_similarity(town_in, town_name)
    return 0.0


def _house_score(number: str, addition: str, house_no: str, house_addition: str) -> float:
    if number != house_no:
        return 0.0
    if addition == house_addition.lower():
        return 1.0
    return 0.8 if not addition else 0.0


def keep_standardized_as_given(result: MatchResult) -> MatchResult:
    """``result`` with every field its ShortReport marks ``2`` (spelling standardized, not corrected) given
    back as the input had it: the other answer of the guess ``address-service.correction-marks``."""
    report = result.output.get("ShortReport", "")
    for position, name in enumerate(INPUT_FIELDS):
        given = result.input_values.get(name, "")
        if position < len(report) and report[position] == "2" and given:
            result.output[OUTPUT_NAME_OF_INPUT[name]] = given
    return result
