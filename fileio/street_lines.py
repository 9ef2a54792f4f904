"""Splitting a street-and-number line (``Bahnhofstr. 1a``, ``Rue du Rhône 5``, ``5, rue du Rhône``, ``Via
Nassa 12``) into street and house number, by rules for the Swiss German, French and Italian forms.

A line is split only when its form leaves no doubt: the house number is the line's last token (or, in the
French and Italian form, its first, followed by a comma or by a street word such as ``rue`` or ``via``), the
number has one of the usual shapes (``12``, ``1a``, ``12 B``, ``3bis``, ``14-16``, ``14/16``, ``7.1``), and
what remains is a street name (letters, more than a street word alone). P.O. box lines (``Postfach 123``,
``Case postale 12``, ``Casella postale 7``) and c/o lines are recognised as such. Every other line is
refused with a reason; nothing is guessed.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

Kind = Literal["street", "po_box", "care_of", "refused"]

_NUMBER = r"\d{1,5}(?:\s?(?:bis|ter|quater)\b|\s?[A-Za-z](?![A-Za-z])|\.\d{1,3}|\s?[-/–]\s?\d{1,5}[A-Za-z]?)?"
_TRAILING = re.compile(rf"^(?P<street>.*?[^\W\d_].*?)(?:\s*,\s*|\s+|(?<=[.]))(?P<number>{_NUMBER})$")
# "Lindenstrasse12": letters run straight into the number.
_GLUED = re.compile(r"^(?P<street>.*[^\W\d_]{3})(?P<number>\d{1,5}(?:[A-Za-z]|bis|ter)?)$")
_STREET_WORDS = (
    "rue", "avenue", "av", "chemin", "ch", "route", "rte", "place", "pl", "boulevard", "bd", "quai",
    "impasse", "allée", "allee", "sentier", "ruelle", "passage", "promenade", "esplanade", "cours",
    "faubourg", "rampe", "square", "via", "viale", "vicolo", "piazza", "piazzetta", "strada", "contrada",
    "salita", "riva", "largo", "corso", "carraia",
)  # fmt: skip
_LEADING = re.compile(
    rf"^(?P<number>{_NUMBER})\s*(?:,\s*(?P<any>\S.*)|\s+(?P<worded>(?:{'|'.join(_STREET_WORDS)})\b\.?.*))$",
    re.IGNORECASE,
)
# A street name may not be a street word alone ("Via 12"), nor end in a bare number ("Route 66 12").
_GENERIC = frozenset(
    {*_STREET_WORDS, "strasse", "str", "weg", "gasse", "platz", "allee", "ring", "hof", "street"}
)
_PO_BOX = re.compile(
    r"^(?P<term>postfach|postlagernd|case postale|casella postale|boite postale|bo[iî]te postale|c\.?\s?p\.?"
    r"|pf|p\.?\s?o\.?\s?box|post office box)\s*\.?\s*(?P<number>\d{1,10})?$",
    re.IGNORECASE,
)
# A number standing as a word of its own inside the street ("Seestrasse 23 Postfach", "Route 66"); numbers
# glued into a name ("Rue du 31-Décembre", "Rue du 1er-Mars") are part of it.
_INNER_NUMBER = re.compile(rf"(?<![\w-])(?:{_NUMBER})(?![\w-])")
_INNER_BOX = re.compile(r"\b(?:postfach|case postale|casella postale|boite postale|po box)\b")
_CARE_OF = re.compile(
    r"^(?:c/o|c\.\s?o\.|co\.|chez|bei|p\.\s?a\.|presso|a/c|z\.\s?h\.\s?v\.?)\s+\S", re.IGNORECASE
)
# A c/o line in a column of its own (a name, company or addition column): the unambiguous terms only, so a
# name such as "Bei" or "Co" stays a name.
CARE_OF_VALUE = re.compile(
    r"^(?:c/o|c\.\s?o\.|p\.\s?a\.|z\.\s?h(?:d|\.\s?v)?\.?|chez|presso|a/c)\s+\S", re.IGNORECASE
)


@dataclass(frozen=True)
class StreetLine:
    """What a street line holds.

    Attributes:
        kind: ``street`` (split), ``po_box``, ``care_of`` or ``refused``.
        street: the street name, as written (trimmed).
        house_no: the house number with its addition, as written without inner spaces at its edges.
        po_box_term: the P.O. box word (``Postfach``, ``Case postale``).
        po_box_no: the P.O. box number, when given.
        care_of: the whole c/o line.
        reason: why a line was refused.
    """

    kind: Kind
    street: str = ""
    house_no: str = ""
    po_box_term: str = ""
    po_box_no: str = ""
    care_of: str = ""
    reason: str = ""


def split_street_line(text: str) -> StreetLine:
    """Split one street line; see the module docstring for the forms."""
    line = " ".join(text.split())
    if not line:
        return StreetLine("refused", reason="the street is empty")
    if _CARE_OF.match(line):
        return StreetLine("care_of", care_of=line)
    if box := _PO_BOX.match(line):
        return StreetLine("po_box", po_box_term=box["term"], po_box_no=box["number"] or "")
    found = _LEADING.match(line)
    if found is not None:
        street = (found["any"] or found["worded"]).strip()
        number = found["number"]
    else:
        found = _TRAILING.match(line) or _GLUED.match(line)
        if found is None:
            return StreetLine("refused", reason=_why_not(line))
        street, number = found["street"].strip().rstrip(","), found["number"]
    problem = _street_problem(street)
    if problem:
        return StreetLine("refused", reason=problem)
    return StreetLine("street", street=street, house_no=_tidy(number))


def _why_not(line: str) -> str:
    if not re.search(r"\d", line):
        return "no house number in the street"
    if re.fullmatch(_NUMBER, line):
        return "no street name before the house number"
    if re.search(r"\d", line) and not re.search(r"\d[\w.]*\s*$", line):
        return "text after the house number: which part is the number is not certain"
    return "the house number's form is not one that can be split with certainty"


def _street_problem(street: str) -> str:
    words = street.split()
    if not words or not any(char.isalpha() for char in street):
        return "no street name before the house number"
    if re.fullmatch(r"[\d\-/.]+", words[-1]):
        return "two numbers at the end: which is the house number is not certain"
    plain = _plain(street).replace(".", " ").split()
    if all(word in _GENERIC for word in plain):
        return f"'{street}' is a street word without a name"
    if _INNER_NUMBER.search(street):
        return "a second number in the line: which is the house number is not certain"
    if _INNER_BOX.search(_plain(street)):
        return "a P.O. box in the street line: the street and the box belong in their own columns"
    return ""


def _tidy(number: str) -> str:
    """``12 B`` → ``12B``-style spacing kept as written, dashes unified, spaces around a range dropped."""
    number = number.replace("–", "-")
    return re.sub(r"\s*([-/])\s*", r"\1", number).strip()


def _plain(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()


@dataclass
class SplitColumn:
    """What splitting a file's street column did.

    Attributes:
        split: one line per row split or recognised: the row's RecordId, the line as given, and the fields
            it filled (Streetname, HouseNo, PoBoxTerm, PoBoxNo, CoAddress).
        refused: RecordId → the reason a row's line could not be split with certainty.
    """

    split: list[dict[str, str | int]]
    refused: dict[int, str]


def split_street_column(frame: pd.DataFrame, *, record_id: str) -> SplitColumn:
    """Split, in place, the ``Streetname`` of every row of ``frame`` that has no ``HouseNo``.

    A street line gives Streetname and HouseNo; a P.O. box line gives PoBoxTerm and PoBoxNo, a c/o line
    CoAddress (each only where that field is empty), and leaves Streetname empty. A line that cannot be
    split with certainty is left as it is, and its row is returned in ``refused`` with the reason (a line
    without any number is left to the check that the row has a house number).
    """
    result = SplitColumn(split=[], refused={})
    if "Streetname" not in frame:
        return result

    def empty(field: str) -> pd.Series:
        return frame[field].isna() if field in frame else pd.Series(True, index=frame.index)

    wanted = frame.index[frame["Streetname"].notna() & empty("HouseNo")]
    chosen = frame.loc[wanted]
    updates: dict[str, dict[object, str | None]] = {}
    for index, line, row, box_free, co_free, term_free in zip(
        wanted,
        chosen["Streetname"].astype(str).tolist(),
        chosen[record_id].astype("int64").tolist(),
        empty("PoBoxNo")[wanted].tolist(),
        empty("CoAddress")[wanted].tolist(),
        empty("PoBoxTerm")[wanted].tolist(),
        strict=True,
    ):
        found = split_street_line(line)
        filled: dict[str, str] = {}
        if found.kind == "street":
            filled = {"Streetname": found.street, "HouseNo": found.house_no}
        elif found.kind == "po_box" and box_free:
            filled = {"Streetname": "", "PoBoxNo": found.po_box_no}
            if term_free:
                filled["PoBoxTerm"] = found.po_box_term
        elif found.kind == "care_of" and co_free:
            filled = {"Streetname": "", "CoAddress": found.care_of}
        elif found.kind == "refused":
            if any(char.isdigit() for char in line):  # no number at all: the row's house number is missing
                result.refused[row] = found.reason
            continue
        else:
            what = "P.O. box" if found.kind == "po_box" else "c/o"
            result.refused[row] = f"a {what} line in the street column while the {what} column has one too"
            continue
        for field, value in filled.items():
            updates.setdefault(field, {})[index] = value or None
        result.split.append({record_id: row, "line": line, **{k: v for k, v in filled.items() if v}})
    for field, values in updates.items():
        if field not in frame:
            frame[field] = pd.Series(pd.NA, index=frame.index, dtype=object)
        frame.loc[list(values), field] = pd.Series(values, dtype=object).where(lambda v: v.notna(), pd.NA)
    return result
