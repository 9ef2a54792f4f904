"""The 24-character ShortReport (§2.5) and CorrectionType of an aligned record.

Sandbox conventions where the spec leaves the value open: position 22 (address type) is ``P`` for a person,
``F`` for a company and ``-`` without a hit; 23 (source type) is ``-``; 24 (address status) is ``H`` for a
notification of move, ``1`` for a known address and ``0`` for an unknown one. Fields the service does not
analyse (AddressAddition, CoAddress, Floor, Prename2, MaidenName, P.O. box fields) are ``-``.
"""

from __future__ import annotations

from collections.abc import Mapping

from sandbox.address_service.fields import INPUT_FIELDS, OUTPUT_NAME_OF_INPUT
from sandbox.address_service.normalize import compact, spelling_class, split_house_number
from sandbox.address_service.reference import Resident

REPORT_LENGTH = 24
_PERSON_FIELDS = ("Company", "Prename", "Name")
_ADDRESS_FIELDS = ("Streetname", "HouseNo", "HouseNoAddition", "ZIPCode", "ZIPAddition", "TownName")
_SUPPLEMENTARY_FIELDS = ("Canton", "CountryCode")
_HIT_QSTATS = ("1", "3", "4", "25", "27")
# Positions whose 3/4/5/9 means the customer's record must change (ZIPAddition, Canton and CountryCode are
# only ever supplemented and do not count).
_CORRECTION_POSITIONS = tuple(
    i
    for i, name in enumerate(INPUT_FIELDS)
    if name in (*_PERSON_FIELDS, *_ADDRESS_FIELDS) and name != "ZIPAddition"
)


def not_analysed_report() -> str:
    return "-" * REPORT_LENGTH


def build_short_report(
    values: Mapping[str, str], output: Mapping[str, str], qstat: str, resident: Resident | None
) -> str:
    """The ShortReport for input ``values`` aligned to ``output`` (keyed by query output names)."""
    address_known = qstat not in ("51", "")
    chars: list[str] = []
    for name in INPUT_FIELDS:
        given = values.get(name, "")
        official = output.get(OUTPUT_NAME_OF_INPUT[name], "")
        if name in _PERSON_FIELDS:
            chars.append(_person_char(name, given, official, qstat, resident))
        elif name in _ADDRESS_FIELDS or name in _SUPPLEMENTARY_FIELDS:
            chars.append(_address_char(name, values, official, qstat) if address_known else _no_hit(given))
        else:
            chars.append("-")
    if resident is not None:
        chars.append("F" if resident.is_company else "P")
    else:
        chars.append("P" if qstat == "2" else "-")
    chars.append("-")
    chars.append({"4": "H", "51": "0", "": "-"}.get(qstat, "1"))
    return "".join(chars)


def correction_type(report: str, qstat: str) -> str:
    """``1`` when a value was corrected, supplemented, moved or deleted, else ``0``."""
    if qstat in ("51", ""):
        return "0"
    return "1" if any(report[i] in "3459" for i in _CORRECTION_POSITIONS) else "0"


def _no_hit(given: str) -> str:
    return "0" if given else "-"


def _person_char(name: str, given: str, official: str, qstat: str, resident: Resident | None) -> str:
    if resident is None:
        if qstat == "2" and name == "Name":
            return spelling_class(given, official)
        return _no_hit(given) if qstat != "3" else "-"
    if resident.is_company != (name == "Company"):
        return "-" if not given else "0"
    if qstat == "25":
        return "9"
    return spelling_class(given, official)


def _address_char(name: str, values: Mapping[str, str], official: str, qstat: str) -> str:
    given = values.get(name, "")
    if name in ("HouseNo", "HouseNoAddition"):
        char = _house_char(name, values, official)
    else:
        char = spelling_class(given, official)
    if qstat == "4" and official and compact(given) != compact(official) and name in _ADDRESS_FIELDS:
        return "5"
    return char


def _house_char(name: str, values: Mapping[str, str], official: str) -> str:
    given_no, given_addition = values.get("HouseNo", ""), values.get("HouseNoAddition", "")
    number, addition = split_house_number(given_no, given_addition)
    if name == "HouseNo":
        if given_no.strip() == official:
            return "1"
        return "2" if number == official else spelling_class(given_no, official)
    if given_addition:
        return spelling_class(given_addition, official)
    if addition:
        return "2" if addition == official.lower() else "3"
    return spelling_class("", official)
