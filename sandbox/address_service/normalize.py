"""Text comparison used by the sandbox matcher: relative normalisation (case, umlauts, special characters,
common abbreviations), a similarity ratio for typing errors, and the assistant's word-prefix rule.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from functools import lru_cache

_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "æ": "ae", "œ": "oe"})
_ABBREVIATIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"str\."), "strasse"),
    (re.compile(r"\bst\."), "sankt"),
)
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_WORD_SEPARATORS = frozenset(" -/.,'()")
_HOUSE_NO = re.compile(r"^\s*(\d+)\s*([A-Za-z]{0,6})\s*$")


def normalize(text: str) -> str:
    """Lower-case ASCII form with umlauts spelled out, accents and punctuation removed, spaces collapsed."""
    lowered = text.strip().lower().translate(_UMLAUTS)
    decomposed = unicodedata.normalize("NFKD", lowered)
    ascii_only = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    for pattern, replacement in _ABBREVIATIONS:
        ascii_only = pattern.sub(replacement, ascii_only)
    return _NON_ALNUM.sub(" ", ascii_only).strip()


@lru_cache(maxsize=1 << 16)
def compact(text: str) -> str:
    """Normalised text without spaces, so ``Linden strasse`` and ``Lindenstrasse`` compare equal."""
    return normalize(text).replace(" ", "")


# Reference names and the values of a batch repeat a lot: comparing each pair once keeps the matcher fast.
@lru_cache(maxsize=1 << 18)
def similarity(left: str, right: str) -> float:
    """Match probability of two values in 0..1 after normalisation; 1.0 when equal, 0.0 if one is empty."""
    a, b = compact(left), compact(right)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    return SequenceMatcher(None, a, b).ratio()


def spelling_class(given: str, official: str) -> str:
    """ShortReport character comparing an input value with the official one it was matched to.

    ``1`` identical, ``2`` equal after normalisation (standardized), ``3`` corrected, ``4`` supplemented.
    """
    if not given.strip():
        return "4" if official else "-"
    if given.strip() == official:
        return "1"
    if compact(given) == compact(official):
        return "2"
    return "3"


def starts_a_word(term: str, reference: str) -> bool:
    """The assistant's hard rule: ``term`` occurs at the beginning of a word of ``reference`` (any case).

    ``Linden`` matches ``Lindenweg``, ``Ausser-Lindenegg`` and ``In der Linden``, not ``Dorflindenstrasse``.
    """
    needle = term.strip().casefold()
    if not needle:
        return True
    haystack = reference.casefold()
    start = haystack.find(needle)
    while start != -1:
        if start == 0 or haystack[start - 1] in _WORD_SEPARATORS:
            return True
        start = haystack.find(needle, start + 1)
    return False


def split_house_number(house_no: str, addition: str = "") -> tuple[str, str]:
    """(number, addition) of a house number such as ``12a`` or ``12 A``; other forms are kept as given."""
    match = _HOUSE_NO.match(house_no)
    if match and not addition.strip():
        return match.group(1), match.group(2).lower()
    return house_no.strip().lstrip("0") or house_no.strip(), addition.strip().lower()
