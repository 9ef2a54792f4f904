"""Alignment beyond the detailed reference: an address in a real postcode/town (the postcode directory) with a
plausible street and a well-formed house number is taken to exist, and what is known of its addressee is
drawn from a hash of the normalised record, so the same record always gets the same answer.

There is no street directory, so "plausible" is all that can be checked: the street has letters and a
street-type word or ending (``…strasse``, ``…weg``, ``Rue …``, ``Via …``, …), the house number is a number
of up to four digits with at most two letters. The postcode areas of the detailed reference are excluded:
there the detailed records are the whole truth.

Shares (of plausible records): the building is unknown (QSTAT 51) for 5 %; at a known building a person is
a person hit (1) for 78 %, a household hit (2) for 6 %, moved with a new address (4) for 6 %, unknown (50)
for 10 %; a company is a company hit (3) for 84 %, moved (4) for 6 %, unknown (50) for 10 %; a record with a
last name only is a household hit for 90 %. About 85 % of plausible records with a name are hits (1-4).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from sandbox.address_service.normalize import compact, normalize
from sandbox.address_service.postcodes import PostcodeDirectory
from sandbox.address_service.reference import Address, Building, Resident, Street, Town

ADDRESS_UNKNOWN_SHARE = 0.05
PERSON_SHARES = (("1", 0.78), ("2", 0.06), ("4", 0.06))  # the rest: 50
COMPANY_SHARES = (("3", 0.84), ("4", 0.06))
HOUSEHOLD_SHARES = (("2", 0.90),)
# The share of hits (QSTAT 1-4) among plausible records of a person: what a clerk's well-formed file gets.
EXPECTED_HIT_SHARE = (1 - ADDRESS_UNKNOWN_SHARE) * sum(share for _, share in PERSON_SHARES)

_STREET_ENDINGS = (
    "strasse", "strase", "str", "gasse", "gass", "gaessli", "weg", "wegli", "platz", "plaetzli", "rain",
    "ring", "allee", "quai", "kai", "matte", "matt", "halde", "halden", "hof", "feld", "acker", "graben",
    "steig", "stieg", "pfad", "rank", "stutz", "park", "zelg", "promenade", "boden", "egg", "dorf", "berg",
    "buehl", "hoehe", "grund", "brunnen", "bach", "au", "hubel", "hang", "moos", "ried", "weid", "weide",
    "wiese", "garten", "gut", "tal", "rueti", "blick", "stadt", "markt", "brugg", "bruecke", "tor",
)  # fmt: skip
_STREET_WORDS = frozenset(
    {
        "rue", "route", "rte", "chemin", "ch", "avenue", "av", "boulevard", "bd", "place", "pl", "quai",
        "impasse", "allee", "sentier", "ruelle", "passage", "rampe", "promenade", "esplanade", "montee",
        "clos", "parc", "via", "viale", "vicolo", "piazza", "piazzale", "strada", "contrada", "salita",
        "lungolago", "riva", "sentiero", "carrale", "stradun", "plazza", "in", "im", "am", "an", "auf",
        "zum", "zur", "bei", "ob", "unter", "ober", "hinter", "vorder",
    }
)  # fmt: skip
_STREET_ABBREVIATIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<=[a-zäöü])str\.?$"), "strasse"),
    (re.compile(r"\bStr\.?$"), "Strasse"),
    (re.compile(r"^Av\.?\s+", re.IGNORECASE), "Avenue "),
    (re.compile(r"^Ch\.?\s+", re.IGNORECASE), "Chemin "),
    (re.compile(r"^Rte\.?\s+", re.IGNORECASE), "Route "),
)
# 12, 12a, 12 B, 3bis, 5 ter, 14-16, 14/16, 7.1: the number, then a letter or two, bis/ter/quater, a range
# or a sub-number.
_HOUSE_NO = re.compile(
    r"^0*([1-9]\d{0,3})\s*((?:bis|ter|quater)|[A-Za-z]{0,2}|[-/]\s*\d{1,4}[A-Za-z]?|\.\d{1,3})$",
    re.IGNORECASE,
)
_ADDITION = re.compile(r"^[A-Za-z0-9.]{1,6}$")
_LETTERS = re.compile(r"[a-z]")
_FRENCH_CANTONS = frozenset({"GE", "VD", "NE", "JU"})
_NEW_STREETS = {
    "de": ("Bahnhofstrasse", "Dorfstrasse", "Hauptstrasse", "Kirchweg", "Schulstrasse", "Gartenstrasse",
           "Rosenweg", "Bergstrasse", "Birkenweg", "Lindenstrasse", "Feldstrasse", "Sonnenweg"),
    "fr": ("Rue de la Gare", "Rue du Centre", "Chemin des Vignes", "Avenue de la Poste", "Rue du Lac",
           "Route de Lausanne", "Chemin du Moulin"),
    "it": ("Via Cantonale", "Via San Gottardo", "Via Stazione", "Via Principale", "Via ai Ronchi",
           "Via Lugano"),
}  # fmt: skip


def plausible_street(street: str) -> bool:
    """Letters and a street-type word or ending: ``Bahnhofstr.``, ``Im Grund``, ``Rue du Lac``, ``Via Motta``
    (no street directory says more)."""
    text = normalize(street)
    if len(_LETTERS.findall(text)) < 3:
        return False
    words = text.split()
    return any(word in _STREET_WORDS or word.endswith(_STREET_ENDINGS) for word in words)


def house_number(house_no: str, addition: str = "") -> tuple[str, str] | None:
    """(number, addition) of a well-formed house number (``12``, ``12a``, ``12 B``, ``3bis``, ``14-16``,
    ``7.1``; an addition field of up to six letters, digits or dots), or None."""
    match = _HOUSE_NO.match(house_no.strip())
    if match is None:
        return None
    letters, given = match.group(2).lower().replace(" ", ""), addition.strip()
    if not given:
        return match.group(1), letters
    if letters or not _ADDITION.match(given):
        return None
    return match.group(1), given.lower()


def official_street(street: str) -> str:
    """The street as the directory would spell it: spaces tidied, ``str.``/``Av.``/``Ch.``/``Rte`` spelt out,
    a name written all in lower case capitalised."""
    text = " ".join(street.split())
    for pattern, replacement in _STREET_ABBREVIATIONS:
        text = pattern.sub(replacement, text)
    return text[:1].upper() + text[1:] if text.islower() else text


def draw(*parts: str) -> int:
    """A stable 64-bit number for ``parts`` (the same on every machine and run)."""
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def share(number: int) -> float:
    """``number`` (from :func:`draw`) as a value in 0..1."""
    return number / 2**64


def synthetic_address(town: Town, street: str, number: str, addition: str) -> Address:
    """The building at ``street number addition`` in ``town``, with keys derived from the address."""
    street_key = compact(street)
    strid = 1_000_000 + draw(town.zip_code, street_key) % 9_000_000
    house_key = 200_000_000 + draw(town.zip_code, street_key, number, addition.lower()) % 600_000_000
    return Address(town, Street(strid, town.onrp, street), Building(house_key, strid, number, addition))


def known_address(town: Town, street: str, house_no: str, addition: str = "") -> Address | None:
    """The building a plausible address in a directory town stands for, or None when the street or number
    is not plausible or the draw says the building does not exist."""
    number = house_number(house_no, addition)
    if number is None or not plausible_street(street):
        return None
    address = synthetic_address(town, official_street(street), *number)
    if share(draw("building", str(address.building.house_key))) < ADDRESS_UNKNOWN_SHARE:
        return None
    return address


@dataclass(frozen=True)
class Outcome:
    """What the directory says of a record: the QSTAT, the score, the building found (the old one for a
    move), the person or company, the new address of a move, and the name of a household hit."""

    qstat: str
    score: float = 0.0
    address: Address | None = None
    resident: Resident | None = None
    new_address: Address | None = None
    household: str = ""


UNKNOWN = Outcome("51")


def align_with_directory(values: Mapping[str, str], directory: PostcodeDirectory) -> Outcome:
    """The outcome for one record (canonical input field -> value) outside the detailed areas."""
    zip_in = values.get("ZIPCode", "").strip()
    locality = directory.resolve(zip_in, values.get("TownName", ""))
    if locality is None or directory.is_detailed(zip_in) or directory.is_detailed(locality.town.zip_code):
        return UNKNOWN
    street_in = values.get("Streetname", "")
    address = known_address(
        locality.town, street_in, values.get("HouseNo", ""), values.get("HouseNoAddition", "")
    )
    if address is None:
        return UNKNOWN
    score = locality.score * (1.0 if compact(street_in) == compact(address.street.street_name) else 0.99)
    company, prename, name = (values.get(field, "").strip() for field in ("Company", "Prename", "Name"))
    person_key = compact(company) if company else f"{compact(prename)}|{compact(name)}"
    number = draw("addressee", str(address.building.house_key), person_key)
    if company:
        qstat = _pick(COMPANY_SHARES, number)
    elif prename and name:
        qstat = _pick(PERSON_SHARES, number)
    elif name:
        qstat = _pick(HOUSEHOLD_SHARES, number)
    else:
        qstat = "50"
    if qstat in ("50", "2"):
        return Outcome(qstat, score, address, household=name if qstat == "2" else "")
    resident = Resident(
        resident_id=1_000_000_000 + number % 10**15,
        house_key=address.building.house_key,
        prename="" if company else prename,
        name="" if company else name,
        company=company,
        birthdate="" if company else _birthdate(number),
    )
    if qstat != "4":
        return Outcome(qstat, score, address, resident)
    new_address = _new_address(directory, address.town, number)
    moved = replace(
        resident,
        status="moved",
        valid_from=_date(dt.date(2023, 1, 1), number // 7 % 1000),
        new_house_key=new_address.building.house_key,
    )
    return Outcome("4", score, address, moved, new_address)


def _pick(shares: tuple[tuple[str, float], ...], number: int) -> str:
    value, bound = share(number), 0.0
    for qstat, part in shares:
        bound += part
        if value < bound:
            return qstat
    return "50"


def _birthdate(number: int) -> str:
    return _date(dt.date(1935, 1, 1), number // 13 % (70 * 365))


def _date(start: dt.date, days: int) -> str:
    return (start + dt.timedelta(days=days)).strftime("%Y%m%d")


def _new_address(directory: PostcodeDirectory, old: Town, number: int) -> Address:
    """Where a mover went: another town of the same canton outside the detailed areas."""
    towns = [
        town
        for town in directory.by_canton.get(old.canton, [])
        if town != old and not directory.is_detailed(town.zip_code)
    ] or [old]
    town = towns[number // 17 % len(towns)]
    language = "it" if town.canton == "TI" else "fr" if town.canton in _FRENCH_CANTONS else "de"
    streets = _NEW_STREETS[language]
    return synthetic_address(town, streets[number // 19 % len(streets)], str(1 + number // 23 % 60), "")
