"""Field names of the address web service: the input fields (§2.2), the output structure (§2.3) in its
two spellings (the spec table's for query responses, the one seen in delivered batch files) and lengths.
"""

from __future__ import annotations

# The sandbox's own copy of the §2.2 table (it never imports the connector: STYLE.md 10, 12).
# pylint: disable=duplicate-code
# Canonical input fields in §2.2 order; the lower-case key is what every spelling maps onto.
INPUT_FIELDS: tuple[str, ...] = (
    "Company",
    "Prename",
    "Prename2",
    "Name",
    "MaidenName",
    "AddressAddition",
    "CoAddress",
    "Streetname",
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
)
# pylint: enable=duplicate-code
_INPUT_BY_KEY = {name.lower(): name for name in INPUT_FIELDS}

# The 24 ShortReport positions (§2.5); 22-24 are address type, source type and address status.
REPORT_POSITIONS: tuple[str, ...] = (*INPUT_FIELDS, "AddressType", "SourceType", "AddressStatus")

# §2.3 output fields after the customer fields, in table order: (query spelling, batch-file spelling).
OUTPUT_FIELDS: tuple[tuple[str, str], ...] = (
    ("QSTAT", "QSTAT"),
    ("ShortReport", "ShortReport"),
    ("CorrectionType", "CorrectionType"),
    ("TotalScore", "TotalScore"),
    ("ValidFrom", "ValidFrom"),
    ("ValidTo", "ValidTo"),
    ("Birthdate", "BirthDate"),
    ("Housekey", "HouseKey"),
    ("Double_DoubleGroupNo", "Double_DoubleGroupNo"),
    ("Double_DSTAT", "Double_DSTAT"),
    ("Company", "Company"),
    ("Prename", "Prename"),
    ("Prename2", "Prename2"),
    ("Name", "Name"),
    ("MaidenName", "MaidenName"),
    ("AddressAddition", "AddressAddition"),
    ("CoAddress", "CoAddress"),
    ("Streetname", "StreetName"),
    ("HouseNo", "HouseNo"),
    ("HouseNoAddition", "HouseNoAddition"),
    ("Floor", "Floor"),
    ("ZIPcode", "ZIPCode"),
    ("ZIPAddition", "ZIPAddition"),
    ("TownName", "TownName"),
    ("Canton", "Canton"),
    ("CountryCode", "CountryCode"),
    ("PoBoxTerm", "POBoxTerm"),
    ("PoBoxNo", "POBoxNo"),
    ("PoBoxZIP", "POBoxZIP"),
    ("PoBoxZIPAddition", "POBoxZIPAddition"),
    ("PoBoxTownName", "POBoxTownName"),
)
QUERY_OUTPUT_NAMES: tuple[str, ...] = tuple(query for query, _ in OUTPUT_FIELDS)
FILE_OUTPUT_NAMES: tuple[str, ...] = tuple(file for _, file in OUTPUT_FIELDS)

# Output values are keyed by the query spelling; these map an input field onto its output column.
OUTPUT_NAME_OF_INPUT: dict[str, str] = {
    **{name: name for name in INPUT_FIELDS},
    "ZIPCode": "ZIPcode",
}

MAX_LENGTH: dict[str, int] = {
    "QSTAT": 2,
    "ShortReport": 24,
    "CorrectionType": 1,
    "TotalScore": 6,
    "ValidFrom": 8,
    "ValidTo": 8,
    "Birthdate": 8,
    "Housekey": 19,
    "Double_DoubleGroupNo": 10,
    "Double_DSTAT": 2,
    "Company": 105,
    "Prename": 75,
    "Prename2": 75,
    "Name": 75,
    "MaidenName": 75,
    "AddressAddition": 65,
    "CoAddress": 65,
    "Streetname": 60,
    "HouseNo": 40,
    "HouseNoAddition": 6,
    "Floor": 10,
    "ZIPcode": 4,
    "ZIPAddition": 2,
    "TownName": 27,
    "Canton": 2,
    "CountryCode": 2,
    "PoBoxTerm": 20,
    "PoBoxNo": 10,
    "PoBoxZIP": 4,
    "PoBoxZIPAddition": 2,
    "PoBoxTownName": 27,
}


def input_field(name: str) -> str | None:
    """The canonical input field for a column or FieldName in any accepted spelling, or None.

    Accepts the §2.3 names and the §2.2 ``_in`` names case-insensitively, so ``StreetName_in``,
    ``Streetname``, ``ZIPCode_in``, ``ZipCode_in`` and ``zipcode`` all resolve.
    """
    key = name.strip().lower()
    if key.endswith("_in"):
        key = key[: -len("_in")]
    return _INPUT_BY_KEY.get(key)
