"""Country values of a customer's file as the services take them: the ISO 3166-1 alpha-2 code.

CRM exports write the country as a name ("Schweiz", "Suisse", "Fürstentum Liechtenstein"), as a code of
another kind ("CHE", "FL") or in lower case. :func:`country_code` turns the spellings of :data:`SPELLINGS`
and every ISO alpha-2 code into the code; anything else is unknown, and the row's rejection names the
spellings that are understood (:data:`ACCEPTED`). The list of codes is IANA's ``iso3166.tab``, shipped by the
``tzdata`` package.
"""

from __future__ import annotations

import functools
import unicodedata
from importlib import resources

# Spelling (compared case- and accent-insensitively, spaces collapsed) → ISO alpha-2 code: Switzerland and
# Liechtenstein in the four national languages and English, their ISO alpha-3 and vehicle codes, and the
# neighbouring countries a subscriber list meets most.
_NAMES: dict[str, tuple[str, ...]] = {
    "CH": (
        "CHE", "Schweiz", "Suisse", "Svizzera", "Svizra", "Switzerland",
        "Schweizerische Eidgenossenschaft", "Confédération suisse", "Confederazione Svizzera",
        "Confederaziun svizra", "Swiss Confederation",
    ),
    "LI": (
        "LIE", "FL", "Liechtenstein", "Fürstentum Liechtenstein", "Fuerstentum Liechtenstein",
        "Principauté de Liechtenstein", "Principato del Liechtenstein", "Principality of Liechtenstein",
    ),
    "DE": ("DEU", "Deutschland", "Allemagne", "Germania", "Germany"),
    "AT": ("AUT", "Österreich", "Oesterreich", "Autriche", "Austria"),
    "FR": ("FRA", "Frankreich", "France", "Francia"),
    "IT": ("ITA", "Italien", "Italie", "Italia", "Italy"),
}  # fmt: skip
ACCEPTED = (
    "an ISO country code (CH, LI, DE …) or a name such as Schweiz, Suisse, Svizzera, Svizra, Switzerland, "
    "Liechtenstein or Fürstentum Liechtenstein"
)


def _folded(text: str) -> str:
    """``text`` without case, accents or repeated spaces, for comparing spellings."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


SPELLINGS: dict[str, str] = {_folded(name): code for code, names in _NAMES.items() for name in names}


@functools.cache
def iso_codes() -> frozenset[str]:
    """Every ISO 3166-1 alpha-2 code (IANA's ``iso3166.tab``)."""
    text = resources.files("tzdata").joinpath("zoneinfo", "iso3166.tab").read_text(encoding="utf-8")
    return frozenset(
        line.split("\t", 1)[0] for line in text.splitlines() if line and not line.startswith("#")
    )


def country_code(value: str) -> str | None:
    """The ISO alpha-2 code ``value`` means (an ISO code in any case, or one of :data:`SPELLINGS`); None when
    it names no country this module knows."""
    folded = _folded(value)
    if len(folded) == 2 and folded.upper() in iso_codes():
        return folded.upper()
    return SPELLINGS.get(folded)
