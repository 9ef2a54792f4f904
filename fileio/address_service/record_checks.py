"""The checks of an address file's rows (:mod:`fileio.address_service.records` reads the file and calls
them): the §2.1 minimum input, countries and Swiss postcodes, street lines that could not be split, and the
values that break their §2.3 length or the wire encoding or hold a control character. Each check returns or
adds the rejected lines (row, field as the file names it, value, reason).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from connectors.address_service.codes import ADDRESS_FIELD_NAMES, MAX_LENGTH, PASSTHROUGH_MAX_LENGTH
from fileio.countries import ACCEPTED, iso_codes
from fileio.lazy import lazy_module
from fileio.rejected_rows import RejectedRows, no_problems, problem_lines
from fileio.street_lines import SplitColumn

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

SWISS_COUNTRY_CODES = ("CH", "LI")


@dataclass(frozen=True)
class CheckedRows:
    """The rows a check looks at.

    Attributes:
        frame: the rows by canonical field (address fields stripped, empty None) and customer column.
        ids: each row's record id (its 1-based data row in the file), aligned with ``frame``.
        columns: canonical §2.3 field → the file's header, to name a field as the user knows it.
    """

    frame: pd.DataFrame
    ids: pd.Series
    columns: Mapping[str, str]

    def header(self, name: str) -> str:
        """The file's header of the field ``name`` (its own name when the file has no such column)."""
        return self.columns.get(name, name)

    def filled(self, name: str) -> pd.Series:
        """Which rows have a value in ``name`` (none when the column is missing)."""
        frame = self.frame
        return frame[name].notna() if name in frame else pd.Series(False, index=frame.index)


def row_problems(
    rows: CheckedRows, *, verification: bool, unsplit: frozenset[int] = frozenset()
) -> list[pd.DataFrame]:
    """One frame of rejected lines per check of the minimum input and the postcodes that found something.

    ``verification``: the rule of a verification key (street and house number; a P.O. box is no street);
    ``unsplit``: rows whose street line could not be split, rejected with that reason already (no second
    "HouseNo missing")."""
    filled = rows.filled
    lines: list[pd.DataFrame] = []

    def missing(mask: pd.Series, name: str, reason: str) -> None:
        if mask.any():
            lines.append(problem_lines(rows.ids[mask], rows.header(name), "", reason))

    person_needed = ~filled("Company")
    missing(person_needed & ~filled("Name"), "Name", "Name missing (required unless Company is given)")
    no_prename = person_needed & ~filled("Prename")
    household = no_prename & _households(rows)
    missing(household, "Prename", HOUSEHOLD_REASON)
    missing(no_prename & ~household, "Prename", "Prename missing (required unless Company is given)")
    street = filled("Streetname")
    none = pd.Series(False, index=rows.frame.index)
    pobox = none if verification else filled("PoBoxNo") | filled("PoBoxTerm")
    pobox_only = pobox & ~street
    if verification:
        missing(~street, "Streetname", "Streetname missing")
    else:
        missing(~street & ~pobox, "Streetname", "Streetname (or a P.O. box) missing")
    missing(
        street & ~filled("HouseNo") & ~rows.ids.isin(unsplit),
        "HouseNo",
        "HouseNo missing"
        if "HouseNo" in rows.columns
        else "HouseNo missing: no number in the street and no house number column",
    )
    zip_ok = filled("ZIPCode") | (pobox_only & filled("PoBoxZIP"))
    town_ok = filled("TownName") | (pobox_only & filled("PoBoxTownName"))
    missing(~zip_ok, "ZIPCode", "ZIPCode missing" + ("" if verification else " (or PoBoxZIP for a P.O. box)"))
    missing(~town_ok, "TownName", "TownName missing")
    return lines + _country_problems(rows) + _postcode_problems(rows)


def _country_problems(rows: CheckedRows) -> list[pd.DataFrame]:
    """The rejected lines of countries no ISO code could be found for (the reader has written every known
    one as its code, :mod:`fileio.countries`): one reason, naming what is understood."""
    if "CountryCode" not in rows.frame:
        return []
    values = rows.frame["CountryCode"]
    unknown = values.notna() & ~values.fillna("").isin(iso_codes())
    if not unknown.any():
        return []
    reason = f"unknown country; write {ACCEPTED}"
    return [problem_lines(rows.ids[unknown], rows.header("CountryCode"), values[unknown], reason)]


# "Familie Brunner", "Famille Favre", "Famiglia Rossi", "Fam. Meier": a household named as a whole.
_HOUSEHOLD = r"^(?:familie|famille|famiglia|fam\.|family|ehepaar|eheleute|couple)\s+\S"
HOUSEHOLD_REASON = (
    "a household without a first name ('Familie …'): the service's minimum input (§2.1) is a first and a "
    "last name, or a company; write one person's first name in the first-name column and the family name "
    "in the name column"
)


def _households(rows: CheckedRows) -> pd.Series:
    """Which rows name a household as a whole in their name column ("Familie Brunner")."""
    if "Name" not in rows.frame:
        return pd.Series(False, index=rows.frame.index)
    names = rows.frame["Name"].astype("string")
    return names.str.match(_HOUSEHOLD, case=False).fillna(False).astype(bool)


def _postcode_problems(rows: CheckedRows) -> list[pd.DataFrame]:
    """The rejected lines of Swiss postcodes (CountryCode empty, CH or LI) that are not exactly 4 digits."""
    frame = rows.frame
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
                lines.append(problem_lines(rows.ids[bad], rows.header(postcode), values[bad],
                                    "Swiss postcode must be exactly 4 digits"))  # fmt: skip
    return lines


def check_values(
    rejected: RejectedRows, rows: CheckedRows, passthrough: Sequence[str], wire_encoding: str
) -> None:
    """Every value fits its §2.3 length (customer columns 450) and the wire encoding, and holds no control
    character; the rows that break it are added to ``rejected``."""
    frame = rows.frame
    # A country is an ISO code or its row is rejected already (_country_problems): no second reason.
    limits = {
        name: MAX_LENGTH[name] for name in ADDRESS_FIELD_NAMES if name in frame and name != "CountryCode"
    }
    limits.update({name: PASSTHROUGH_MAX_LENGTH for name in passthrough})
    for column, limit in limits.items():
        rejected.check_lengths(rows.header(column), frame[column], limit)
    for column in limits:
        bad_chars = unencodable(frame[column], wire_encoding)
        if len(bad_chars):
            reason = "character " + bad_chars + f" cannot be written in {wire_encoding}"
            index = bad_chars.index
            rejected.add(
                problem_lines(rows.ids.loc[index], rows.header(column), frame.loc[index, column], reason)
            )
    for column in limits if rejected.table.control_characters else ():
        rejected.check_controls(rows.header(column), frame[column])


def refused_splits(split: SplitColumn, rows: CheckedRows) -> pd.DataFrame:
    """The rejected lines of the rows whose street line could not be split with certainty."""
    if not split.refused:
        return no_problems()
    refused = rows.ids.isin(split.refused)
    ids = rows.ids[refused]
    reason = (
        "house number not split: "
        + ids.map(split.refused)
        + "; give the number in a house number column, or correct the line (--no-split keeps lines as given)"
    )
    return problem_lines(ids, rows.header("Streetname"), rows.frame.loc[refused, "Streetname"], reason)


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
