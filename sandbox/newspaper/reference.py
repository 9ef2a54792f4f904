"""Reference data of the newspaper sandbox: the customer's newspapers, gratis distribution and black lists,
and the countries international shipments may go to. Fixed, so every run answers the same.

Newspapers (``newspaperNumber``):

* ``4711`` Seetaler Bote — standard newspaper of the customer; orders are accepted.
* ``4712`` Wochenblatt Pfannenstiel — the customer's, but without a sort file: orders get ``0003``.
* ``5120`` Anzeiger Rigi — gratis newspaper, location categories A, B and C.
* ``5121`` Gratis-Post Seeland — gratis newspaper, categories A and B only (C gets ``0104``).
* ``4713`` Zuger Tagblatt — standard newspaper of the customer taking every kind of copies §7 has a code
  for (large print runs, inserts lighter and heavier than it, unaddressed, military and unsorted copies);
  ``4711`` takes none of those (each gets its "not possible" code), ``5121`` takes gratis inserts lighter
  than it, ``5120`` none.
* ``9001`` Basler Abendblatt — belongs to another customer: every request naming it gets ``0001``.
* every other number from ``2000`` to ``8999`` — a standard newspaper of the customer with generated master
  data (title, publisher, printer and sending town drawn from the number, so always the same; orders are
  accepted; no distribution list).

Any other number (``1234``, ``9999``) gets ``0002``.

The newspapers and the places, titles, publishers and printers generated ones are drawn from are kept in
``data/newspapers.json``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

OTHER_CUSTOMER_NUMBER = 9001
NEWSPAPERS_FILE = "newspapers.json"
GENERATED_NUMBERS = range(2000, 9000)


@dataclass(frozen=True)
class Distribution:
    """One row of a gratis newspaper's distribution list."""

    zip_code: int
    city: str
    canton: str
    location_category: str
    count: int
    unload_place: str
    unload_time: str = "05:30:00"
    po_box: bool = False


@dataclass(frozen=True)
class ReferenceNewspaper:
    """Master data of one newspaper and the rules its orders are checked against."""

    number: int
    newspaper_id: int
    title: str
    publisher: str
    printer: str
    region: str
    sending_zip: int
    sending_city: str
    own: bool = True
    gratis: bool = False
    sort_file: bool = True
    periodicity: int = 52
    language: str = "DE"
    text_quota: int = 60
    standard_weight: int = 180
    # grams, per bundle kind (district/locality/other) or gratis location category (A/B/C)
    weight_ranges: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    distribution: tuple[Distribution, ...] = ()
    black_list: tuple[Mapping[str, Any], ...] = ()

    def summary(self) -> dict[str, Any]:
        """The newspaper summary resource (spec 2.4)."""
        return {
            "newspaperNumber": self.number,
            "newspaperID": self.newspaper_id,
            "title": self.title,
            "publisherName": self.publisher,
            "printerName": self.printer,
            "postCustomerService": "CENTRAL",
            "region": self.region,
            "periodicity": self.periodicity,
            "format": "TALLER_THAN_B_5",
            "language": self.language,
            "textQuota": self.text_quota,
            "addressMethod": "UNADDRESSED" if self.gratis else "ADDRESSED",
            "sendingZipCode": self.sending_zip,
            "sendingCity": self.sending_city,
            "postagePaidImpression": "AZA",
            "postagePaidImpressionZipCode": self.sending_zip,
            "postagePaidImpressionCity": self.sending_city,
        }


def _load_reference() -> dict[str, Any]:
    text = resources.files("sandbox.newspaper.data").joinpath(NEWSPAPERS_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _ranges(ranges: Mapping[str, list[int]]) -> dict[str, tuple[int, int]]:
    return {name: (low, high) for name, (low, high) in ranges.items()}


def _reference_newspaper(
    entry: Mapping[str, Any], standard: Mapping[str, tuple[int, int]]
) -> ReferenceNewspaper:
    """A newspaper of the data file: its fields by name, ``weight_ranges`` "standard" for the standard
    newspaper's ranges."""
    ranges = entry.get("weight_ranges", {})
    fields = {
        **entry,
        "weight_ranges": standard if ranges == "standard" else _ranges(ranges),
        "distribution": tuple(Distribution(**row) for row in entry.get("distribution", ())),
        "black_list": tuple(entry.get("black_list", ())),
    }
    return ReferenceNewspaper(**fields)


_REFERENCE = _load_reference()
_STANDARD_RANGES = _ranges(_REFERENCE["standard_weight_ranges"])
NEWSPAPERS: dict[int, ReferenceNewspaper] = {
    paper.number: paper
    for paper in (_reference_newspaper(entry, _STANDARD_RANGES) for entry in _REFERENCE["newspapers"])
}
# (sending postcode, town, region, language) of the generated newspapers, and their names per language.
_PLACES: tuple[tuple[int, str, str, str], ...] = tuple(
    (int(zip_code), town, region, language)
    for zip_code, town, region, language in _REFERENCE["generated"]["places"]
)
_TITLES: dict[str, tuple[str, ...]] = {
    language: tuple(titles) for language, titles in _REFERENCE["generated"]["titles"].items()
}
_PUBLISHER: dict[str, str] = _REFERENCE["generated"]["publishers"]
_PRINTER: dict[str, str] = _REFERENCE["generated"]["printers"]


def newspaper(number: int) -> ReferenceNewspaper | None:
    """The newspaper with this number: one of :data:`NEWSPAPERS`, else generated master data for a number
    in :data:`GENERATED_NUMBERS`, else None (unknown)."""
    paper = NEWSPAPERS.get(number)
    if paper is None and number in GENERATED_NUMBERS:
        paper = generated_newspaper(number)
    return paper


def is_own_newspaper_id(newspaper_id: int) -> bool:
    """Whether ``newspaper_id`` (``newspaperID`` of the summary: 100000 + the number) is the customer's."""
    paper = newspaper(newspaper_id - 100_000)
    return paper is not None and paper.own and paper.newspaper_id == newspaper_id


@cache
def generated_newspaper(number: int) -> ReferenceNewspaper:
    """A standard weekly (or twice-weekly) newspaper of the customer, its master data drawn from
    ``number``."""
    rng = random.Random(number)
    zip_code, town, region, language = rng.choice(_PLACES)
    name = town.removesuffix(" UR").removesuffix(" SG")
    return ReferenceNewspaper(
        number=number,
        newspaper_id=100_000 + number,
        title=rng.choice(_TITLES[language]).format(name),
        publisher=_PUBLISHER[language].format(name),
        printer=_PRINTER[language].format(name),
        region=region,
        sending_zip=zip_code,
        sending_city=town,
        periodicity=rng.choice((52, 52, 104)),
        language=language,
        weight_ranges=_STANDARD_RANGES,
    )


# ISO codes accepted for international shipments; contract prices exist only for the neighbouring countries.
LIST_PRICE_COUNTRIES = frozenset(
    {"AT", "BE", "DE", "DK", "ES", "FR", "GB", "IT", "LI", "LU", "NL", "PT", "SE", "US"}
)
CONTRACT_PRICE_COUNTRIES = frozenset({"AT", "DE", "FR", "IT", "LI"})
INTERNATIONAL_RANGES = {"list": (1, 2000), "contract": (1, 1000)}
COMMENT_MAX_CHARS = 50
INSERT_DESCRIPTION_MAX_CHARS = 60
# The tariff groups an international lane may name per country ("*": every other country); a guess, as §2.1
# shows no tariff group (see sandbox.newspaper.order_models).
TARIFF_GROUPS: dict[str, frozenset[int]] = {
    **dict.fromkeys(CONTRACT_PRICE_COUNTRIES, frozenset({1, 2})),
    "*": frozenset({2, 3}),
}


def distribution_list(paper: ReferenceNewspaper) -> dict[str, Any]:
    """The distribution list resource (spec 2.5) of a gratis newspaper."""
    return {
        "distributionType": ["OFFICIAL_PLUS"],
        "startDate": "2024-01-01",
        "lastDistributionDataUpdate": "2025-01-06",
        "depositDay": ["WEDNESDAY"],
        "distributionDay": ["THURSDAY"],
        "periodicity": paper.periodicity,
        "distributionListDetails": [
            {
                "zipCode": row.zip_code,
                "city": row.city,
                "canton": row.canton,
                "locationCategory": row.location_category,
                "count": row.count,
                "poBox": row.po_box,
                "distributionType": "OFFICIAL_PLUS",
                "packedInSacks": row.location_category == "C",
                "bundlesInSB": row.location_category != "C",
                "deliveryZipCode": row.zip_code,
                "unloadZipCode": row.zip_code,
                "unloadPlace": row.unload_place,
                "unloadTime": row.unload_time,
                "containerTargetId": f"CT-{row.zip_code}",
            }
            for row in paper.distribution
        ],
    }


def black_list(paper: ReferenceNewspaper) -> dict[str, Any]:
    """The black list of a gratis newspaper: households that refuse it (shape not in the spec)."""
    return {
        "newspaperNumber": paper.number,
        "lastBlackListUpdate": "2025-01-06",
        "blackListDetails": [dict(entry) for entry in paper.black_list],
    }


def circulation(paper: ReferenceNewspaper, category: str) -> int:
    """Copies the distribution list holds for one location category (the gratis "current circulation")."""
    return sum(row.count for row in paper.distribution if row.location_category == category)
