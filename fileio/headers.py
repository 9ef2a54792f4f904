"""Recognising the columns of an input file by header: the one resolver of every reader
(:func:`resolve_columns`), and the address columns: §2.3 names, §2.2 ``_in`` names, German, French and Italian
header names as aliases, plus an explicit header → field mapping chosen by the user.

The aliases are kept in ``data/address_header_aliases.json``. A street-and-number column ("Adresse", "Strasse
und Nr.") is read as the street (its lines are split); a bare "Postfach" column normally holds the box number,
the term has its own, rarer, header.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from importlib import resources
from pathlib import Path

from connectors.address_service.codes import ADDRESS_FIELD_NAMES, canonical_input_field
from fileio.errors import InputError

ALIASES_FILE = "address_header_aliases.json"


def _load_aliases() -> dict[str, tuple[str, ...]]:
    """Per address field, its aliases in :func:`header_key` form (accents dropped, case folded, only letters
    and digits kept)."""
    text = resources.files("fileio.data").joinpath(ALIASES_FILE).read_text(encoding="utf-8")
    return {field: tuple(aliases) for field, aliases in json.loads(text).items()}


_ALIASES = _load_aliases()
ALIASES: Mapping[str, str] = {alias: field for field, aliases in _ALIASES.items() for alias in aliases}


def header_key(header: str) -> str:
    """A header reduced for matching: ``"Haus-Nr."`` → ``"hausnr"``, ``"Prénom"`` → ``"prenom"``, ``"c/o"`` →
    ``"co"``, ``"Straße"`` → ``"strasse"``."""
    decomposed = unicodedata.normalize("NFKD", header)
    plain = "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()
    return "".join(char for char in plain if char.isalnum())


def field_for_header(header: str) -> str | None:
    """The canonical address field a header names, by §2.3/§2.2 name first, then by alias; None if none."""
    return canonical_input_field(header) or ALIASES.get(header_key(header))


ColumnNames = Mapping[str, str] | Callable[[str], str | None]
"""How one tier of :func:`resolve_columns` names fields: a mapping from :func:`header_key` forms to fields,
or a function from a header to its field (None when it names none)."""


def resolve_columns(headers: Sequence[str], aliases: Sequence[ColumnNames]) -> dict[str, str]:
    """Which header supplies each field (field → header): the one header resolver of every input reader.

    ``aliases`` are tiers, strongest first. A header claims the field of the first tier that names it (so it
    supplies one field at most); among the headers claiming one field the stronger tier wins, then the
    leftmost column. The others stay pass-through columns. Fields come in the order their headers won: by
    tier, then by column.
    """
    chosen: dict[str, tuple[int, int, str]] = {}  # field → (tier, position, header)
    for position, header in enumerate(headers):
        for tier, names in enumerate(aliases):
            field = names(header) if callable(names) else names.get(header_key(header))
            if field is None:
                continue
            current = chosen.get(field)
            if current is None or (tier, position) < current[:2]:
                chosen[field] = (tier, position, header)
            break
    return {field: header for field, (_, _, header) in sorted(chosen.items(), key=lambda item: item[1][:2])}


IGNORE = "ignore"
"""The mapping target that leaves a column out of the address (``--map Land=ignore``), passed through."""
ZIP_TOWN = "ZIPCode+TownName"
"""The mapping target of a column holding postcode and town in one ("8001 Zürich"), as in
``--map "Wohnort=ZIPCode+TownName"``."""
ZIP_TOWN_HEADERS = frozenset(
    {
        "plzort", "plzundort", "plzwohnort", "plzstadt", "postleitzahlort", "postleitzahlundort",
        "npalocalite", "npaville", "npalieu", "caplocalita", "capcitta", "capluogo",
        "zipcity", "ziptown", "postcodetown", "postcodecity", "postalcodecity", "zipcodecity", "zipcodetown",
    }
)  # fmt: skip
"""Headers (in :func:`header_key` form) of a column that holds postcode and town in one."""


def zip_town_header(headers: Sequence[str], *, taken: Collection[str] = ()) -> str | None:
    """The leftmost header not in ``taken`` that names a column holding postcode and town in one (``PLZ
    Ort``, ``NPA Localité``, ``Zip City`` …: :data:`ZIP_TOWN_HEADERS`), or None."""
    return next((h for h in headers if h not in taken and header_key(h) in ZIP_TOWN_HEADERS), None)


def with_zip_town(
    resolved: dict[str, str], headers: Sequence[str], fields: tuple[str, str], *, taken: Collection[str] = ()
) -> dict[str, str]:
    """``resolved`` (field → header) with a postcode-and-town column (:func:`zip_town_header`, not one of
    ``resolved``'s or ``taken``) supplying both ``fields`` (postcode, town) where the file has neither."""
    if fields[0] in resolved or fields[1] in resolved:
        return resolved
    combined = zip_town_header(headers, taken={*resolved.values(), *taken})
    return resolved if combined is None else resolved | dict.fromkeys(fields, combined)


def resolve_address_columns(
    headers: Sequence[str], mapping: Mapping[str, str] | None, *, path: Path
) -> dict[str, str]:
    """Which source header supplies each canonical address field (canonical → header), in §2.3 order.

    Precedence: the explicit ``mapping`` (source header → field name, §2.3/§2.2 name or alias; ``ignore`` or
    an empty name leaves the column out of the address, a customer column passed through), then an exact
    §2.3 or ``_in`` name (any case), then an alias. Among equals the leftmost column wins; a column that loses
    stays a pass-through customer column (see :func:`resolve_columns`). A column that holds postcode and town
    in one (mapped to :data:`ZIP_TOWN`, or named as one, such as "PLZ Ort", where the file has neither a
    postcode nor a town column) supplies both ZIPCode and TownName.

    Raises:
        InputError: a mapped header is not in the file, or a mapping target is not an address field.
    """
    explicit: dict[str, str] = {}  # header → field, "" for a column kept as a customer column
    for source, target in (mapping or {}).items():
        header = _find_header(headers, source)
        if header is None:
            raise InputError(f"mapped column {source!r} is not in the header {list(headers)}", path=path)
        if header_key(target) == header_key(ZIP_TOWN):
            explicit.setdefault(header, ZIP_TOWN)
            continue
        if not target.strip() or target.strip().casefold() == IGNORE:
            explicit.setdefault(header, "")  # mapped to nothing: the column stays a customer column
            continue
        field = field_for_header(target) or (target if target in ADDRESS_FIELD_NAMES else None)
        if field is None:
            raise InputError(
                f"mapping target {target!r} for column {source!r} is not an address field "
                f"(expected one of {', '.join(ADDRESS_FIELD_NAMES)}; {ZIP_TOWN} for postcode and town in one "
                f"column; or {IGNORE} to leave the column out of the address)",
                path=path,
            )
        explicit.setdefault(header, field)
    kept = {header for header, field in explicit.items() if not field}
    resolved = resolve_columns(
        [header for header in headers if header not in kept], (explicit.get, canonical_input_field, ALIASES)
    )
    combined = resolved.pop(ZIP_TOWN, None)
    if combined is not None:
        resolved |= {"ZIPCode": combined, "TownName": combined}
    resolved = with_zip_town(resolved, headers, ("ZIPCode", "TownName"), taken=kept)
    return {field: resolved[field] for field in ADDRESS_FIELD_NAMES if field in resolved}


def _find_header(headers: Sequence[str], wanted: str) -> str | None:
    if wanted in headers:
        return wanted
    key = wanted.strip().casefold()
    return next((header for header in headers if header.strip().casefold() == key), None)
