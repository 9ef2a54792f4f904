"""The synthetic Swiss-like reference data: the test-environment postcode areas plus Kriens and
Kastanienbaum, a fixed set of curated records that tests and examples rely on, and seeded filler.

Curated records come first, so their STRIDs and house keys never change when the filler does.
"""

from __future__ import annotations

import random

from sandbox.address_service.reference import Building, ReferenceData, Resident, ResidentStatus, Street, Town

SEED = 20231101

# (ONRP, postcode, town, canton, P.O. box postcode)
TOWNS: tuple[tuple[int, str, str, str, bool], ...] = (
    (1001, "2501", "Biel/Bienne", "BE", True),
    (1002, "2502", "Biel/Bienne", "BE", False),
    (1003, "2503", "Biel/Bienne", "BE", False),
    (1004, "2504", "Biel/Bienne", "BE", False),
    (1005, "2505", "Biel/Bienne", "BE", False),
    (1006, "2510", "Biel/Bienne", "BE", True),
    (1010, "3333", "Musterwil", "BE", False),
    (1020, "4322", "Mumpf", "AG", False),
    (1021, "4324", "Obermumpf", "AG", False),
    (1022, "4325", "Schupfart", "AG", False),
    (1023, "4332", "Stein AG", "AG", False),
    (1024, "4333", "Münchwilen AG", "AG", False),
    (1025, "4334", "Sisseln AG", "AG", False),
    (1030, "5026", "Densbüren", "AG", False),
    (1031, "5027", "Herznach", "AG", False),
    (1032, "5028", "Ueken", "AG", False),
    (1033, "5070", "Frick", "AG", False),
    (1034, "5072", "Oeschgen", "AG", False),
    (1035, "5073", "Gipf-Oberfrick", "AG", False),
    (1036, "5074", "Eiken", "AG", False),
    (1037, "5075", "Hornussen", "AG", False),
    (1038, "5076", "Bözen", "AG", False),
    (1039, "5077", "Elfingen", "AG", False),
    (1040, "5078", "Effingen", "AG", False),
    (1041, "5082", "Kaisten", "AG", False),
    (1042, "5083", "Ittenthal", "AG", False),
    (1043, "5085", "Sulz AG", "AG", False),
    (1044, "5225", "Bözberg", "AG", False),
    (1045, "5237", "Mönthal", "AG", False),
    (1046, "5272", "Gansingen", "AG", False),
    (1047, "5277", "Hottwil", "AG", False),
    (1050, "6614", "Brissago", "TI", False),
    (1060, "8154", "Oberglatt ZH", "ZH", False),
    (1061, "8165", "Schöfflisdorf", "ZH", False),
    (1062, "8165", "Oberweningen", "ZH", False),
    (1070, "6010", "Kriens", "LU", False),
    (1071, "6047", "Kastanienbaum", "LU", False),
)

# (ONRP, street, house numbers; "12a" means number 12 with addition "a")
CURATED_STREETS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (1070, "Lindenstrasse", ("1", "2", "3", "5", "10", "12", "14", "14a", "16")),
    (1070, "Dorflindenstrasse", ("1", "3", "5")),
    (1070, "Obernauerstrasse", ("1", "3", "7")),
    (1071, "Lindenweg", ("1", "2", "4")),
    (1071, "Ausser-Lindenegg", ("1", "3")),
    (1071, "In der Linden", ("2", "6")),
    (1071, "St. Niklausenstrasse", ("10", "12")),
    (1033, "Hauptstrasse", ("1", "3", "5", "7", "9")),
    (1033, "Bahnhofstrasse", ("2", "4", "6", "8", "10")),
    (1020, "Dorfstrasse", ("1", "3", "5")),
    (1041, "Industriestrasse", ("4", "10", "12")),
    (1050, "Via Leoncavallo", ("2", "4", "6")),
    (1035, "Mühleweg", ("3", "5", "7")),
    (1002, "Zentralstrasse", ("38", "40", "42", "42b")),
    (1061, "Wehntalerstrasse", ("19", "21", "23")),
    (1010, "Rue du Marché", ("1", "2", "3")),
    (1003, "Seevorstadt", ("5", "7")),
    (1060, "Rütistrasse", ("2", "4")),
)

# (street, house number, prename, name, company, birthdate, status, valid_from, valid_to, new address)
CURATED_RESIDENTS: tuple[tuple[str, str, str, str, str, str, ResidentStatus, str, str, str], ...] = (
    ("Lindenstrasse", "12", "Hans", "Muster", "", "19750314", "active", "", "", ""),
    ("Lindenstrasse", "12", "Anna", "Muster", "", "19781102", "active", "", "", ""),
    ("Lindenstrasse", "14a", "Sabine", "Graf", "", "19820706", "active", "", "", ""),
    ("Obernauerstrasse", "3", "", "", "Muster Informatik AG", "", "active", "", "", ""),
    ("Hauptstrasse", "5", "", "", "Bäckerei Huber AG", "", "active", "", "", ""),
    ("Bahnhofstrasse", "8", "Peter", "Meier", "", "19680521", "moved", "20240301", "", "Zentralstrasse 40"),
    ("Zentralstrasse", "40", "Peter", "Meier", "", "19680521", "active", "20240301", "", ""),
    ("Zentralstrasse", "40", "Claire", "Dubois", "", "19910130", "active", "", "", ""),
    ("Dorfstrasse", "3", "Rosa", "Keller", "", "19350607", "deceased", "", "20230115", ""),
    ("Industriestrasse", "10", "", "", "Schreinerei Frei GmbH", "", "closed", "", "20221231", ""),
    ("Via Leoncavallo", "4", "Marco", "Rossi", "", "19590912", "moved_unknown", "20230901", "", ""),
    ("Mühleweg", "7", "Jürg", "Zürcher", "", "19640228", "active", "", "", ""),
    ("Wehntalerstrasse", "21", "Thomas", "Brunner", "", "19700419", "active", "", "", ""),
    ("Wehntalerstrasse", "21", "Eva", "Brunner", "", "19720823", "active", "", "", ""),
    ("Rue du Marché", "2", "Léa", "Favre", "", "19990311", "active", "", "", ""),
    ("Rue du Marché", "1", "Émile", "Rochat", "", "19310417", "deceased", "", "20240210", ""),
    ("Hauptstrasse", "9", "Verena", "Lüscher", "", "19800102", "moved", "20231115", "", "Lindenweg 4"),
    ("Lindenweg", "4", "Verena", "Lüscher", "", "19800102", "active", "20231115", "", ""),
    ("Dorfstrasse", "5", "Ernst", "Wälti", "", "19520930", "moved_unknown", "20240501", "", ""),
    ("Seevorstadt", "5", "Marianne", "Schenk", "", "19860214", "active", "", "", ""),
    ("Seevorstadt", "7", "", "", "Uhrenatelier Kummer GmbH", "", "active", "", "", ""),
    ("Rütistrasse", "2", "Daniel", "Frey", "", "19770618", "active", "", "", ""),
    ("Rütistrasse", "2", "Ruth", "Frey", "", "19790303", "active", "", "", ""),
    ("Lindenweg", "2", "Markus", "Achermann", "", "19650725", "active", "", "", ""),
    ("St. Niklausenstrasse", "12", "", "", "Seehotel Kastanienbaum AG", "", "active", "", "", ""),
    ("Industriestrasse", "4", "", "", "Kaister Metallbau AG", "", "active", "", "", ""),
)

_STREET_POOL = (
    "Bachstrasse", "Bergstrasse", "Buchenweg", "Dorfplatz", "Feldstrasse", "Gartenstrasse", "Hofmattweg",
    "Juraweg", "Kirchweg", "Mattenweg", "Oberdorfstrasse", "Poststrasse", "Quellenweg", "Rebbergstrasse",
    "Rosenweg", "Schulstrasse", "Sonnenrain", "Talstrasse", "Unterdorf", "Waldweg", "Weiherstrasse",
    "Zelgliweg", "Rütiweg", "Brückenstrasse", "Chilegass",
)  # fmt: skip
_PRENAMES = (
    "Andreas", "Barbara", "Christian", "Daniela", "Erich", "Franziska", "Gabriel", "Heidi", "Ivo", "Jana",
    "Karin", "Lukas", "Monika", "Nicole", "Oliver", "Patrick", "Regula", "Stefan", "Tanja", "Urs", "Verena",
    "Walter", "Yvonne", "Zoé", "Beat", "Ruth", "Reto", "Silvia", "Martin", "Ursula",
)  # fmt: skip
_NAMES = (
    "Ammann", "Bachmann", "Baumann", "Bühler", "Egli", "Fischer", "Gerber", "Hofmann", "Kaufmann", "Koch",
    "Lüthi", "Marti", "Moser", "Müller", "Roth", "Schmid", "Schneider", "Schwarz", "Steiner", "Suter",
    "Vogel", "Weber", "Widmer", "Wyss", "Zimmermann", "Bianchi", "Girard", "Schäfer", "Hürlimann", "Odermatt",
)  # fmt: skip
_TRADES = ("Garage", "Coiffeur", "Metzgerei", "Elektro", "Malerei", "Treuhand", "Gärtnerei", "Sanitär")
_FORMS = ("AG", "GmbH", "& Co.", "Sàrl")


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
