"""The checks of an address file's rows before anything is sent: the §2.1 minimum input, Swiss postcodes,
the §2.3 field lengths, values the wire encoding cannot carry and control characters; each check gives the
rejected lines of the rows it finds (:func:`fileio.rejected_rows.problem_lines`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from connectors.address_service.codes import ADDRESS_FIELD_NAMES, MAX_LENGTH, PASSTHROUGH_MAX_LENGTH
from fileio.lazy import lazy_module
from fileio.rejected_rows import problem_lines
from fileio.textfiles import control_characters

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

Mode = Literal["batch", "query", "verification"]
SWISS_COUNTRY_CODES = ("CH", "LI")


def row_problems(
    frame: pd.DataFrame,
    ids: pd.Series,
    columns: Mapping[str, str],
    passthrough: Sequence[str],
    mode: Mode,
    wire_encoding: str,
    *,
    controls: bool = True,
    unsplit: frozenset[int] = frozenset(),
) -> list[pd.DataFrame]:
    """One frame of rejected lines per check that found something, the rows named by ``ids``; ``columns``
    maps each §2.3 field to its source header. ``controls`` False skips the search for control characters
    (the file is known to hold none); ``unsplit``: rows whose street line could not be split, rejected with
    that reason already (no second "HouseNo missing")."""

    def header(name: str) -> str:
        return columns.get(name, name)

    lines = _missing_fields(frame, ids, header, mode, "HouseNo" in columns, unsplit)
    lines += _postcode_problems(frame, ids, header)
    lines += _value_problems(frame, ids, header, passthrough, wire_encoding, controls=controls)
    return lines


def _missing_fields(
    frame: pd.DataFrame,
    ids: pd.Series,
    header: Callable[[str], str],
    mode: Mode,
    house_number_column: bool,
    unsplit: frozenset[int],
) -> list[pd.DataFrame]:
    """The §2.1 minimum input (see :mod:`fileio.address_service.records`): a line per field a row lacks."""
    empty = pd.Series(False, index=frame.index)
    lines: list[pd.DataFrame] = []

    def filled(name: str) -> pd.Series:
        return frame[name].notna() if name in frame else empty

    def missing(mask: pd.Series, name: str, reason: str) -> None:
        if mask.any():
            lines.append(problem_lines(ids.loc[mask], header(name), "", reason))

    company, name, prename = filled("Company"), filled("Name"), filled("Prename")
    person_needed = ~company
    missing(person_needed & ~name, "Name", "Name missing (required unless Company is given)")
    missing(person_needed & ~prename, "Prename", "Prename missing (required unless Company is given)")

    street = filled("Streetname")
    pobox = (filled("PoBoxNo") | filled("PoBoxTerm")) if mode != "verification" else empty
    pobox_only = pobox & ~street
    if mode == "verification":
        missing(~street, "Streetname", "Streetname missing")
    else:
        missing(~street & ~pobox, "Streetname", "Streetname (or a P.O. box) missing")
    missing(
        street & ~filled("HouseNo") & ~ids.isin(unsplit),
        "HouseNo",
        "HouseNo missing"
        if house_number_column
        else "HouseNo missing: no number in the street and no house number column",
    )
    zip_ok = filled("ZIPCode") | (pobox_only & filled("PoBoxZIP"))
    town_ok = filled("TownName") | (pobox_only & filled("PoBoxTownName"))
    missing(
        ~zip_ok,
        "ZIPCode",
        "ZIPCode missing" + (" (or PoBoxZIP for a P.O. box)" if mode != "verification" else ""),
    )
    missing(~town_ok, "TownName", "TownName missing")
    return lines


def _postcode_problems(
    frame: pd.DataFrame, ids: pd.Series, header: Callable[[str], str]
) -> list[pd.DataFrame]:
    """A line per Swiss postcode (CountryCode empty, CH or LI) that is not exactly 4 digits."""
    country = (
        frame["CountryCode"].fillna("").str.upper() if "CountryCode" in frame else pd.Series("", frame.index)
    )
    swiss = country.isin(("", *SWISS_COUNTRY_CODES))
    lines: list[pd.DataFrame] = []
    for postcode in ("ZIPCode", "PoBoxZIP"):
        if postcode in frame:
            values = frame[postcode]
            bad = swiss & values.notna() & ~values.fillna("").str.fullmatch(r"\d{4}")
            if bad.any():
                lines.append(problem_lines(ids.loc[bad], header(postcode), values[bad],
                                    "Swiss postcode must be exactly 4 digits"))  # fmt: skip
    return lines


def _value_problems(
    frame: pd.DataFrame,
    ids: pd.Series,
    header: Callable[[str], str],
    passthrough: Sequence[str],
    wire_encoding: str,
    *,
    controls: bool,
) -> list[pd.DataFrame]:
    """A line per value longer than its §2.3 length (customer columns: 450), per value the wire encoding
    cannot carry, and (unless ``controls`` is False) per value holding a control character."""
    limits = {name: MAX_LENGTH[name] for name in ADDRESS_FIELD_NAMES if name in frame}
    limits.update({name: PASSTHROUGH_MAX_LENGTH for name in passthrough})
    lines: list[pd.DataFrame] = []
    for column, limit in limits.items():
        lengths = frame[column].str.len()
        bad = lengths > limit
        if bad.any():
            reason = f"longer than {limit} characters (" + lengths[bad].astype("int64").astype(str) + ")"
            lines.append(problem_lines(ids.loc[bad], header(column), frame.loc[bad, column], reason))
    for column in limits:
        bad_chars = unencodable(frame[column], wire_encoding)
        if len(bad_chars):
            reason = "character " + bad_chars + f" cannot be written in {wire_encoding}"
            index = bad_chars.index
            lines.append(problem_lines(ids.loc[index], header(column), frame.loc[index, column], reason))
    for column in limits if controls else ():
        found = control_characters(frame[column])
        if len(found):
            index = found.index
            reason = "control character " + found.astype(str) + " in the value"
            lines.append(problem_lines(ids.loc[index], header(column), frame.loc[index, column], reason))
    return lines


def unencodable(values: pd.Series, encoding: str) -> pd.Series:
    """Per row whose value the encoding cannot carry, the first offending character as ``'Ł' (U+0141)``."""
    present = values.dropna()
    try:
        "\n".join(present.tolist()).encode(encoding)
        return pd.Series([], dtype=str)
    except UnicodeEncodeError:
        pass
    offending: dict[str, str] = {}
    for value in present.unique():  # only on this slow path, and only over distinct values
        try:
            value.encode(encoding)
        except UnicodeEncodeError as exc:
            char = value[exc.start]
            offending[value] = f"{char!r} (U+{ord(char):04X})"
    bad = present[present.isin(offending)]
    return bad.map(offending).astype(str)
