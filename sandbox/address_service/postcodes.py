"""The sandbox's postcode directory: every Swiss postcode with its town(s) and canton, read from
``data/swiss_postcodes.csv``, and the resolution of a given postcode and town to an official locality.

Resolution (hard facts, no street directory): a town matches the postcode's town after normalisation (case,
umlauts and accents, ``St.``/``Sankt``, ``b.``/``bei``, hyphens and spaces, one part of a bilingual name, the
name without its canton suffix, bracket or trailing number); a town that names another postcode's town
corrects the postcode; a town within a small edit distance of the postcode's town is corrected; a missing
postcode or town is supplemented. An unknown postcode resolves to nothing.

The seed's towns are part of the directory with their own ONRPs; every other town gets ``postcode * 100 +
its place under that postcode``.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from sandbox.address_service.normalize import compact, normalize
from sandbox.address_service.reference import Town
from sandbox.address_service.reference_seed import load_reference

DATA_FILE = "swiss_postcodes.csv"
_ZIP = re.compile(r"^\d{4}$")
_CANTON_SUFFIX = re.compile(r"\s+[A-Z]{2}$")
_BRACKET = re.compile(r"\s*\([^)]*\)\s*")
_TRAILING_NUMBER = re.compile(r"\s+\d+$")
_WORD_ALIASES = {"st": "sankt", "ste": "sainte", "b": "bei"}
_VOWEL_SPELLINGS = (("ae", "a"), ("oe", "o"), ("ue", "u"))
# Score of a locality by how it was found (the matcher's TotalScore is built from it).
EXACT, SUPPLEMENTED, ZIP_CORRECTED, TOWN_CORRECTED = 1.0, 0.99, 0.97, 0.96


def town_key(text: str) -> str:
    """A town name compared loosely: normalised, ``St``/``b`` spelt out, umlauts as plain vowels, no spaces.

    ``Zürich``, ``Zurich`` and ``ZUERICH`` share a key, as do ``St. Gallen``, ``St Gallen`` and
    ``Sankt Gallen``.
    """
    words = [_WORD_ALIASES.get(word, word) for word in normalize(text).split()]
    joined = "".join(words)
    for spelled, plain in _VOWEL_SPELLINGS:
        joined = joined.replace(spelled, plain)
    return joined


def name_variants(official: str) -> set[str]:
    """The names a town is known by: the official one, each part of ``Biel/Bienne``, and the name without
    its canton suffix (``Stein AG``), bracket (``Bertschikon (Gossau ZH)``) or number (``Lausanne 25``)."""
    variants = {official, *official.split("/")}
    for pattern in (_CANTON_SUFFIX, _BRACKET, _TRAILING_NUMBER):
        variants |= {pattern.sub(" ", name).strip() for name in variants}
    return {variant for variant in variants if variant}


def edit_distance(left: str, right: str, limit: int) -> int:
    """Optimal string alignment distance (a swap of neighbours counts once), ``limit + 1`` once above it."""
    if abs(len(left) - len(right)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(right) + 1))
    for i, a in enumerate(left, start=1):
        current = [i] + [0] * len(right)
        for j, b in enumerate(right, start=1):
            cost = 0 if a == b else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a == right[j - 2] and left[i - 2] == b:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return min(previous[-1], limit + 1)


def typo_limit(key: str) -> int:
    """Edits a town name of this length may carry and still be recognised: 1 up to 5 letters, else 2."""
    return 1 if len(key) <= 5 else 2


@dataclass(frozen=True)
class Locality:
    """The official town a given postcode and town resolve to, and how sure that is (0..1)."""

    town: Town
    score: float


@dataclass
class PostcodeDirectory:
    """Every postcode/town combination, with lookups by postcode, by town key and by canton."""

    towns: list[Town]
    detailed_zips: frozenset[str] = frozenset()
    by_zip: dict[str, list[Town]] = field(init=False)
    by_key: dict[str, list[Town]] = field(init=False)
    by_canton: dict[str, list[Town]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_zip, self.by_key, self.by_canton = defaultdict(list), defaultdict(list), defaultdict(list)
        for town in self.towns:
            if town.po_box:
                continue
            self.by_zip[town.zip_code].append(town)
            self.by_canton[town.canton].append(town)
            for key in {town_key(variant) for variant in name_variants(town.town_name)}:
                self.by_key[key].append(town)

    def is_detailed(self, zip_code: str) -> bool:
        """Whether ``zip_code`` is a postcode area of the detailed reference (its records are the whole truth
        there)."""
        return zip_code.strip() in self.detailed_zips

    def resolve(self, zip_code: str, town_name: str) -> Locality | None:
        """The official locality of a given postcode and town, or None (unknown postcode, a town that
        neither belongs to it nor is a small typo of its town, or both missing)."""
        zip_code, town_name = zip_code.strip(), town_name.strip()
        key = town_key(town_name)
        if not zip_code:
            named = self.by_key.get(key, []) if key else []
            return Locality(named[0], SUPPLEMENTED) if named else None
        here = self.by_zip.get(zip_code, []) if _ZIP.match(zip_code) else []
        if not here:
            return None
        if not key:
            return Locality(here[0], SUPPLEMENTED)
        same = [town for town in here if town in self.by_key.get(key, [])]
        if same:
            return Locality(same[0], EXACT)
        elsewhere = self.by_key.get(key, [])
        if elsewhere:
            nearest = min(
                elsewhere, key=lambda town: (abs(int(town.zip_code) - int(zip_code)), town.zip_code)
            )
            return Locality(nearest, ZIP_CORRECTED)
        typo = self._nearest_name(key, here)
        return Locality(typo, TOWN_CORRECTED) if typo is not None else None

    @staticmethod
    def _nearest_name(key: str, towns: Iterable[Town]) -> Town | None:
        limit = typo_limit(key)
        scored = [
            (edit_distance(key, town_key(variant), limit), index, town)
            for index, town in enumerate(towns)
            for variant in name_variants(town.town_name)
        ]
        best = min(scored, key=lambda item: (item[0], item[1]), default=None)
        return best[2] if best is not None and best[0] <= limit else None


def read_rows(lines: Iterable[str]) -> list[tuple[str, str, str]]:
    """(postcode, town, canton) of the directory file's lines; ``#`` lines are comments."""
    reader = csv.DictReader(line for line in lines if not line.startswith("#"))
    return [(row["postcode"].strip(), row["town"].strip(), row["canton"].strip()) for row in reader]


def build_directory(rows: Iterable[tuple[str, str, str]], seed_towns: Iterable[Town]) -> PostcodeDirectory:
    """The directory of ``rows`` with the seed's towns in it (a row naming a seed town is that town)."""
    seed = list(seed_towns)
    known = {(town.zip_code, compact(town.town_name)) for town in seed}
    towns = list(seed)
    places: dict[str, int] = defaultdict(int)
    for zip_code, name, canton in rows:
        place = places[zip_code]
        places[zip_code] += 1
        if (zip_code, compact(name)) not in known:
            towns.append(Town(int(zip_code) * 100 + place, zip_code, name, canton))
    towns.sort(key=lambda town: (town.zip_code, town.onrp))
    return PostcodeDirectory(towns, frozenset(town.zip_code for town in seed))


@cache
def load_postcode_directory() -> PostcodeDirectory:
    """The shipped directory with the seed's towns (read once per process)."""
    text = resources.files("sandbox.address_service.data").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return build_directory(read_rows(text.splitlines()), load_reference().towns)
