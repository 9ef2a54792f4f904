"""Reference data of the newspaper sandbox: the customer's newspapers, gratis distribution and black lists,
and the countries international shipments may go to. Fixed, so every run answers the same.

Newspapers (``newspaperNumber``):

* ``4711`` Seetaler Bote — standard newspaper of the customer; orders are accepted.
* ``4712`` Wochenblatt Pfannenstiel — the customer's, but without a sort file: orders get ``0003``.
* ``5120`` Anzeiger Rigi — gratis newspaper, location categories A, B and C.
* ``5121`` Gratis-Post Seeland — gratis newspaper, categories A and B only (C gets ``0104``).
* ``9001`` Basler Abendblatt — belongs to another customer: every request naming it gets ``0001``.
* every other number from ``2000`` to ``8999`` — a standard newspaper of the customer with generated master
  data (title, publisher, printer and sending town drawn from the number, so always the same; orders are
  accepted; no distribution list).

Any other number (``1234``, ``9999``) gets ``0002``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

OTHER_CUSTOMER_NUMBER = 9001
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


_STANDARD_RANGES = {"district": (10, 2000), "locality": (10, 2000), "other": (20, 1500)}

NEWSPAPERS: dict[int, ReferenceNewspaper] = {
    paper.number: paper
    for paper in (
        ReferenceNewspaper(
            number=4711,
            newspaper_id=104711,
            title="Seetaler Bote",
            publisher="Seetal Medien AG",
            printer="Druckerei Hochdorf",
            region="Luzern",
            sending_zip=6280,
            sending_city="Hochdorf",
            weight_ranges=_STANDARD_RANGES,
        ),
        ReferenceNewspaper(
            number=4712,
            newspaper_id=104712,
            title="Wochenblatt Pfannenstiel",
            publisher="Pfannenstiel Verlag GmbH",
            printer="Druckzentrum Meilen",
            region="Zürich",
            sending_zip=8706,
            sending_city="Meilen",
            sort_file=False,
            weight_ranges=_STANDARD_RANGES,
        ),
        ReferenceNewspaper(
            number=5120,
            newspaper_id=105120,
            title="Anzeiger Rigi",
            publisher="Rigi Anzeiger AG",
            printer="Druckerei Küssnacht",
            region="Schwyz",
            sending_zip=6403,
            sending_city="Küssnacht am Rigi",
            gratis=True,
            text_quota=40,
            standard_weight=90,
            weight_ranges={"A": (10, 500), "B": (10, 500), "C": (10, 300)},
            distribution=(
                Distribution(6353, "Weggis", "LU", "A", 2150, "Weggis Post"),
                Distribution(6354, "Vitznau", "LU", "A", 780, "Vitznau Post"),
                Distribution(6405, "Immensee", "SZ", "B", 960, "Küssnacht Post"),
                Distribution(6410, "Goldau", "SZ", "B", 2480, "Goldau Post", po_box=True),
                Distribution(6440, "Brunnen", "SZ", "C", 1870, "Brunnen Post", unload_time="06:00:00"),
            ),
            black_list=(
                {"zipCode": 6353, "city": "Weggis", "street": "Seestrasse", "houseNumber": "12"},
                {"zipCode": 6410, "city": "Goldau", "street": "Parkstrasse", "houseNumber": "3a"},
            ),
        ),
        ReferenceNewspaper(
            number=5121,
            newspaper_id=105121,
            title="Gratis-Post Seeland",
            publisher="Seeland Medien AG",
            printer="Druckerei Biel",
            region="Bern",
            sending_zip=2502,
            sending_city="Biel/Bienne",
            gratis=True,
            text_quota=35,
            standard_weight=70,
            weight_ranges={"A": (10, 400), "B": (10, 400)},
            distribution=(
                Distribution(2502, "Biel/Bienne", "BE", "A", 5400, "Biel Briefzentrum"),
                Distribution(3250, "Lyss", "BE", "B", 3100, "Lyss Post"),
                Distribution(3270, "Aarberg", "BE", "B", 1650, "Aarberg Post"),
            ),
            black_list=({"zipCode": 3250, "city": "Lyss", "street": "Bahnhofstrasse", "houseNumber": "7"},),
        ),
        ReferenceNewspaper(
            number=OTHER_CUSTOMER_NUMBER,
            newspaper_id=109001,
            title="Basler Abendblatt",
            publisher="Rhein Verlag AG",
            printer="Druckerei Pratteln",
            region="Basel",
            sending_zip=4002,
            sending_city="Basel",
            own=False,
            weight_ranges=_STANDARD_RANGES,
        ),
    )
}

# (sending postcode, town, region, language) of the generated newspapers.
_PLACES: tuple[tuple[int, str, str, str], ...] = (
    (3600, "Thun", "Bern", "DE"), (3400, "Burgdorf", "Bern", "DE"), (3800, "Interlaken", "Bern", "DE"),
    (8400, "Winterthur", "Zürich", "DE"), (8610, "Uster", "Zürich", "DE"), (8800, "Thalwil", "Zürich", "DE"),
    (6300, "Zug", "Zug", "DE"), (6210, "Sursee", "Luzern", "DE"), (9000, "St. Gallen", "St. Gallen", "DE"),
    (9500, "Wil SG", "St. Gallen", "DE"), (7000, "Chur", "Graubünden", "DE"), (5000, "Aarau", "Aargau", "DE"),
    (4500, "Solothurn", "Solothurn", "DE"), (4600, "Olten", "Solothurn", "DE"),
    (8500, "Frauenfeld", "Thurgau", "DE"), (6460, "Altdorf UR", "Uri", "DE"), (3900, "Brig", "Wallis", "DE"),
    (8200, "Schaffhausen", "Schaffhausen", "DE"), (4410, "Liestal", "Basel-Landschaft", "DE"),
    (6430, "Schwyz", "Schwyz", "DE"), (8750, "Glarus", "Glarus", "DE"), (1700, "Fribourg", "Fribourg", "FR"),
    (2000, "Neuchâtel", "Neuchâtel", "FR"), (1950, "Sion", "Valais", "FR"),
    (1400, "Yverdon-les-Bains", "Vaud", "FR"), (1260, "Nyon", "Vaud", "FR"), (2800, "Delémont", "Jura", "FR"),
    (6500, "Bellinzona", "Ticino", "IT"), (6600, "Locarno", "Ticino", "IT"),
    (6850, "Mendrisio", "Ticino", "IT"),
)  # fmt: skip
_TITLES = {
    "DE": ("{} Anzeiger", "{}er Bote", "Tagblatt {}", "{} Nachrichten", "Rundschau {}", "Wochenzeitung {}"),
    "FR": ("Le Courrier de {}", "Journal de {}", "La Feuille d'avis de {}", "L'Écho de {}"),
    "IT": ("Il Corriere di {}", "Giornale di {}", "La Voce di {}"),
}
_PUBLISHER = {"DE": "{} Medien AG", "FR": "Éditions {} SA", "IT": "Edizioni {} SA"}
_PRINTER = {"DE": "Druckerei {}", "FR": "Imprimerie {}", "IT": "Tipografia {}"}


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
