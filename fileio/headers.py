"""Recognising the address columns of an input file by header: §2.3 names, §2.2 ``_in`` names, and German,
French and Italian header names as aliases, plus an explicit header → field mapping chosen by the user.

The aliases are kept in ``data/address_header_aliases.json``. A street-and-number column ("Adresse", "Strasse
und Nr.") is read as the street (its lines are split); a bare "Postfach" column normally holds the box number,
the term has its own, rarer, header.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
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


def resolve_address_columns(
    headers: Sequence[str], mapping: Mapping[str, str] | None, *, path: Path
) -> dict[str, str]:
    """Which source header supplies each canonical address field (canonical → header).

    Precedence: the explicit ``mapping`` (source header → field name, §2.3/§2.2 name or alias; an empty name
    keeps the column as a customer column), then an exact
    §2.3 or ``_in`` name (any case), then an alias. Among equals the leftmost column wins; a column that loses
    stays a pass-through customer column.

    Raises:
        InputError: a mapped header is not in the file, or a mapping target is not an address field.
    """
    chosen: dict[str, tuple[int, int, str]] = {}  # field → (precedence, position, header)

    def offer(field: str, precedence: int, position: int, header: str) -> None:
        current = chosen.get(field)
        if current is None or (precedence, position) < current[:2]:
            chosen[field] = (precedence, position, header)

    explicit: set[str] = set()
    for source, target in (mapping or {}).items():
        header = _find_header(headers, source)
        if header is None:
            raise InputError(f"mapped column {source!r} is not in the header {list(headers)}", path=path)
        explicit.add(header)
        if not target.strip():
            continue  # mapped to nothing: the column stays a customer column
        field = field_for_header(target) or (target if target in ADDRESS_FIELD_NAMES else None)
        if field is None:
            raise InputError(
                f"mapping target {target!r} for column {source!r} is not an address field "
                f"(expected one of {', '.join(ADDRESS_FIELD_NAMES)})",
                path=path,
            )
        offer(field, 0, headers.index(header), header)
    for position, header in enumerate(headers):
        if header in explicit:
            continue
        if (field := canonical_input_field(header)) is not None:
            offer(field, 1, position, header)
        elif (field := ALIASES.get(header_key(header))) is not None:
            offer(field, 2, position, header)
    # One header supplies one field; a header claimed twice keeps its strongest claim.
    by_header: dict[str, tuple[int, int, str]] = {}
    for field, (precedence, position, header) in chosen.items():
        if header not in by_header or precedence < by_header[header][0]:
            by_header[header] = (precedence, position, field)
    return {
        field: header
        for header, (_, _, field) in sorted(
            by_header.items(), key=lambda item: ADDRESS_FIELD_NAMES.index(item[1][2])
        )
    }


def _find_header(headers: Sequence[str], wanted: str) -> str | None:
    if wanted in headers:
        return wanted
    key = wanted.strip().casefold()
    return next((header for header in headers if header.strip().casefold() == key), None)
