"""The address web service's code tables as data: QSTAT (§2.4), ShortReport positions and characters
(§2.5), CorrectionType, TokenStatus names (§2.6), batch output fields and lengths (§2.3), input names (§2.2),
and the grammar of the two codes (QSTAT, ShortReport).

Lookups tolerate codes outside the tables: the service may add values the spec does not list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class QstatInfo:
    """One primary status (§2.4): the code, its November 2023 designation and its meaning."""

    code: str
    designation: str
    meaning: str


QSTAT: Mapping[str, QstatInfo] = MappingProxyType(
    {
        info.code: info
        for info in (
            QstatInfo("1", "Person hit", "person known at this address, items can be delivered"),
            QstatInfo("2", "Household hit", "household or last name known at this address"),
            QstatInfo("3", "Company hit", "company known at this address"),
            QstatInfo("4", "Relocation hit", "a movers' address exists"),
            QstatInfo("25", "Deceased / company no longer in business", ""),
            QstatInfo("26", "International relocation hit", "an unverified international address exists"),
            QstatInfo("27", "Relocated, unknown", "new address unknown or not disclosable"),
            QstatInfo("50", "Person unknown at this address", ""),
            QstatInfo(
                "51",
                "Address unknown",
                "address incorrect or incomplete (the building combination does not exist)",
            ),
            QstatInfo(
                "K",
                "Original (header duplicate)",
                "address occurs several times and matches the group best",
            ),
            QstatInfo(
                "F",
                "Duplicate (subsequent duplicate)",
                "address occurs several times with lower congruity",
            ),
        )
    }
)


def normalize_qstat(code: object) -> str:
    """The table key for a delivered QSTAT value: ``"01"``/``1``/``" 1 "`` → ``"1"``, ``"k"`` → ``"K"``."""
    if code is None:
        return ""
    text = str(code).strip().upper()
    digits = text.removesuffix(".0")  # a spreadsheet turned 1 into 1.0
    # ASCII digits only: "²" and "١" are digits to str.isdigit but no number int() reads.
    if digits and digits.isascii() and digits.isdigit():
        return str(int(digits))
    return text


def qstat_info(code: object) -> QstatInfo | None:
    """The table entry for a QSTAT code, or None for an empty or unknown code."""
    return QSTAT.get(normalize_qstat(code))


# §2.5 position names, in order; positions 22-24 have no input field and get descriptive names.
SHORT_REPORT_POSITIONS: tuple[str, ...] = (
    "Company",
    "Prename",
    "Prename2",
    "Name",
    "MaidenName",
    "AddressAddition",
    "coAddress",
    "StreetName",
    "HouseNo",
    "HouseNoAddition",
    "Floor",
    "ZIPCode",
    "ZIPAddition",
    "TownName",
    "Canton",
    "CountryCode",
    "PoBoxTerm",
    "PoBoxNo",
    "PoBoxZIP",
    "PoBoxZIPAddition",
    "PoBoxTownName",
    "AddressType",
    "SourceType",
    "AddressStatus",
)
SHORT_REPORT_LENGTH = len(SHORT_REPORT_POSITIONS)


def short_report_column(position: int) -> str:
    """Column name of a 1-based ShortReport position: ``1`` → ``SR01_Company``, ``24`` →
    ``SR24_AddressStatus``."""
    return f"SR{position:02d}_{SHORT_REPORT_POSITIONS[position - 1]}"


@dataclass(frozen=True)
class ShortReportChar:
    """What one ShortReport character says: a short label for tables and the spec's full meaning."""

    label: str
    meaning: str


SHORT_REPORT_CHARS: Mapping[str, ShortReportChar] = MappingProxyType(
    {
        "-": ShortReportChar("no statement", "no statement; content not analysed"),
        "1": ShortReportChar("compliance", "compliance (complete)"),
        "2": ShortReportChar(
            "hit with discrepancy", "hit with discrepancy; spelling standardized, not corrected"
        ),
        "3": ShortReportChar("changed", "changed; corrected or replaced by official designation"),
        "4": ShortReportChar("supplemented", "supplemented; missing information completed"),
        "5": ShortReportChar("new information", "new information; move information found"),
        "6": ShortReportChar(
            "blocked forwarding information",
            "blocked forwarding information; new address may not be forwarded",
        ),
        "9": ShortReportChar("deleted", "deleted; no longer valid"),
        "0": ShortReportChar("no hit", "no hit in the reference data"),
    }
)
_SPECIAL = ShortReportChar("special", "special; defined per field (e.g. address type) or product")
_NOT_DELIVERED = ShortReportChar("", "")


def short_report_char(char: str) -> ShortReportChar:
    """Label and meaning of one ShortReport character; letters A-Z are "special", others are flagged unknown.

    An empty string or a blank (a ShortReport shorter than 24 characters) has no label and no meaning.
    """
    if char in ("", " ", "\x00"):
        return _NOT_DELIVERED
    known = SHORT_REPORT_CHARS.get(char)
    if known is not None:
        return known
    if len(char) == 1 and "A" <= char.upper() <= "Z":
        return _SPECIAL
    return ShortReportChar("unknown", f"character {char!r} is not in the ShortReport table")


def short_report_meaning(char: str) -> str:
    """The spec's meaning of one ShortReport character (§2.5); see :func:`short_report_char`."""
    return short_report_char(char).meaning


CORRECTION_TYPES: Mapping[int, str] = MappingProxyType(
    {0: "no correction required", 1: "correction required"}
)

TOKEN_STATUS_NAMES: Mapping[int, str] = MappingProxyType(
    {
        0: "New",
        1: "Error",
        2: "Waiting",
        3: "Running",
        4: "Finished",
        5: "Failed",
        6: "Canceled",
        7: "Unknown",
    }
)


def token_status_name(code: int) -> str:
    """Name of a batch TokenStatus (§2.6); a value outside the table reads ``"Unknown (<code>)"``."""
    return TOKEN_STATUS_NAMES.get(code, f"Unknown ({code})")


@dataclass(frozen=True)
class OutputField:
    """One field of the batch output structure (§2.3)."""

    name: str
    meaning: str
    max_length: int
    note: str = ""


# Status fields the service adds, then the address fields; the spec's "ZIPcode" is written ZIPCode, the
# spelling of the delivered files and of §2.5.
STATUS_FIELDS: tuple[OutputField, ...] = (
    OutputField("QSTAT", "primary status", 2),
    OutputField("ShortReport", "secondary status", 24),
    OutputField("CorrectionType", "0 = no correction required; 1 = correction required", 1),
    OutputField("TotalScore", "match probability", 6),
    OutputField("ValidFrom", "valid-from date", 8),
    OutputField("ValidTo", "date of death / expired", 8),
    OutputField("Birthdate", "date of birth", 8),
    OutputField("Housekey", "unique building key", 19),
    OutputField("Double_DoubleGroupNo", "duplicate group number", 10),
    OutputField("Double_DSTAT", "duplicate status", 2),
)
ADDRESS_FIELDS: tuple[OutputField, ...] = (
    OutputField("Company", "company name", 105),
    OutputField("Prename", "first name", 75),
    OutputField("Prename2", "first name", 75),
    OutputField("Name", "last name", 75),
    OutputField("MaidenName", "maiden name", 75),
    OutputField("AddressAddition", "additional address", 65),
    OutputField("CoAddress", "c/o", 65),
    OutputField("Streetname", "street", 60, note="35 in the September 2021 edition"),
    OutputField("HouseNo", "house number", 40),
    OutputField("HouseNoAddition", "house number addition", 6),
    OutputField("Floor", "floor", 10),
    OutputField("ZIPCode", "four-digit postcode", 4),
    OutputField("ZIPAddition", "postcode addition", 2),
    OutputField("TownName", "town (long)", 27),
    OutputField("Canton", "canton abbreviation", 2),
    OutputField("CountryCode", "ISO country code", 2),
    OutputField("PoBoxTerm", "P.O. box term", 20),
    OutputField("PoBoxNo", "P.O. box number", 10),
    OutputField("PoBoxZIP", "P.O. box postcode", 4),
    OutputField("PoBoxZIPAddition", "P.O. box postcode addition", 2),
    OutputField("PoBoxTownName", "P.O. box town", 27),
)
PASSTHROUGH_MAX_LENGTH = 450  # "Customer fields 1-x"

ADDRESS_FIELD_NAMES: tuple[str, ...] = tuple(field.name for field in ADDRESS_FIELDS)
STATUS_FIELD_NAMES: tuple[str, ...] = tuple(field.name for field in STATUS_FIELDS)
MAX_LENGTH: Mapping[str, int] = MappingProxyType(
    {field.name: field.max_length for field in (*STATUS_FIELDS, *ADDRESS_FIELDS)}
)

# §2.2 FieldName values in spec order, then the alternative spellings the spec mentions.
INPUT_FIELD_NAMES: tuple[str, ...] = (
    "Company_in",
    "Prename_in",
    "Prename2_in",
    "Name_in",
    "MaidenName_in",
    "AddressAddition_in",
    "coAddress_in",
    "Streetname_in",
    "HouseNo_in",
    "HouseNoAddition_in",
    "Floor_in",
    "ZipCode_in",
    "ZIPAddition_in",
    "TownName_in",
    "Canton_in",
    "CountryCode_in",
    "PoBoxTerm_in",
    "PoBoxNo_in",
    "PoBoxZIP_in",
    "PoBoxZIPAddition_in",
    "PoBoxTownName_in",
)
INPUT_FIELD_SPELLINGS: tuple[str, ...] = (*INPUT_FIELD_NAMES, "StreetName_in", "ZIPCode_in")

# Every spelling of an output field, lower-cased, to its canonical name: the spec's own, the batch file's
# (StreetName, POBoxTerm, BirthDate, HouseKey) and the §2.2 input names.
_CANONICAL_BY_KEY: dict[str, str] = {
    name.lower(): name for name in (*STATUS_FIELD_NAMES, *ADDRESS_FIELD_NAMES)
}
INPUT_FIELD_CANONICAL: Mapping[str, str] = MappingProxyType(
    {spelling: _CANONICAL_BY_KEY[spelling[: -len("_in")].lower()] for spelling in INPUT_FIELD_SPELLINGS}
)


def canonical_output_field(name: str) -> str | None:
    """The canonical §2.3 name for a header in any spelling or case, or None when it is not a §2.3 field.

    ``StreetName`` → ``Streetname``, ``POBoxTerm`` → ``PoBoxTerm``, ``ZIPcode`` → ``ZIPCode``,
    ``HouseKey`` → ``Housekey``.
    """
    return _CANONICAL_BY_KEY.get(name.strip().lower())


def canonical_input_field(name: str) -> str | None:
    """The canonical §2.3 address field for a §2.3 name or a §2.2 ``_in`` name, case-insensitively."""
    key = name.strip().lower()
    if key.endswith("_in"):
        key = key[: -len("_in")]
    canonical = _CANONICAL_BY_KEY.get(key)
    return canonical if canonical in ADDRESS_FIELD_NAMES else None
