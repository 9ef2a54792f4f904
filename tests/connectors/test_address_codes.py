"""The address service code tables: QSTAT, ShortReport, CorrectionType, TokenStatus, fields, lengths."""

from __future__ import annotations

import pytest

from connectors.address_service import codes

SPEC_QSTAT = {
    "1": "Person hit",
    "2": "Household hit",
    "3": "Company hit",
    "4": "Relocation hit",
    "25": "Deceased / company no longer in business",
    "26": "International relocation hit",
    "27": "Relocated, unknown",
    "50": "Person unknown at this address",
    "51": "Address unknown",
    "K": "Original (header duplicate)",
    "F": "Duplicate (subsequent duplicate)",
}


@pytest.mark.parametrize(("code", "designation"), SPEC_QSTAT.items())
def test_every_qstat_of_the_spec_is_in_the_table(code: str, designation: str) -> None:
    info = codes.qstat_info(code)
    assert info is not None
    assert info.code == code
    assert info.designation == designation


def test_qstat_table_has_exactly_the_spec_codes_in_spec_order() -> None:
    assert list(codes.QSTAT) == list(SPEC_QSTAT)


def test_qstat_meanings() -> None:
    assert codes.qstat_info("1").meaning == "person known at this address, items can be delivered"  # type: ignore[union-attr]
    assert codes.qstat_info("K").meaning.startswith("address occurs several times")  # type: ignore[union-attr]
    assert codes.qstat_info("25").meaning == ""  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("raw", "key"), [("01", "1"), (" 3 ", "3"), (4, "4"), ("k", "K"), ("f ", "F"), ("1.0", "1")]
)
def test_delivered_qstat_spellings_are_normalised(raw: object, key: str) -> None:
    assert codes.normalize_qstat(raw) == key
    assert codes.qstat_info(raw) is codes.QSTAT[key]


@pytest.mark.parametrize("unknown", ["77", "X", "", None, "  "])
def test_unknown_or_empty_qstat_is_tolerated(unknown: object) -> None:
    assert codes.qstat_info(unknown) is None


def test_short_report_has_24_named_positions() -> None:
    assert codes.SHORT_REPORT_LENGTH == 24
    assert codes.SHORT_REPORT_POSITIONS[0] == "Company"
    assert codes.SHORT_REPORT_POSITIONS[7] == "StreetName"
    assert codes.SHORT_REPORT_POSITIONS[20] == "PoBoxTownName"
    assert codes.SHORT_REPORT_POSITIONS[21:] == ("AddressType", "SourceType", "AddressStatus")


@pytest.mark.parametrize(
    ("position", "column"),
    [
        (1, "SR01_Company"),
        (7, "SR07_coAddress"),
        (12, "SR12_ZIPCode"),
        (22, "SR22_AddressType"),
        (24, "SR24_AddressStatus"),
    ],
)
def test_short_report_column_names(position: int, column: str) -> None:
    assert codes.short_report_column(position) == column


@pytest.mark.parametrize(
    ("char", "label", "meaning_start"),
    [
        ("-", "no statement", "no statement; content not analysed"),
        ("1", "compliance", "compliance (complete)"),
        ("2", "hit with discrepancy", "hit with discrepancy; spelling standardized"),
        ("3", "changed", "changed; corrected or replaced by official designation"),
        ("4", "supplemented", "supplemented; missing information completed"),
        ("5", "new information", "new information; move information found"),
        ("6", "blocked forwarding information", "blocked forwarding information; new address may not"),
        ("9", "deleted", "deleted; no longer valid"),
        ("0", "no hit", "no hit in the reference data"),
    ],
)
def test_each_short_report_character(char: str, label: str, meaning_start: str) -> None:
    assert codes.short_report_char(char).label == label
    assert codes.short_report_meaning(char).startswith(meaning_start)


@pytest.mark.parametrize("letter", ["A", "H", "Z", "m"])
def test_letters_are_special(letter: str) -> None:
    assert codes.short_report_char(letter).label == "special"
    assert "defined per field" in codes.short_report_meaning(letter)


@pytest.mark.parametrize("char", ["7", "8", "*", "ä"])
def test_characters_outside_the_table_are_flagged_unknown(char: str) -> None:
    assert codes.short_report_char(char).label == "unknown"
    assert repr(char) in codes.short_report_meaning(char)


@pytest.mark.parametrize("blank", ["", " "])
def test_missing_short_report_position_has_no_meaning(blank: str) -> None:
    assert codes.short_report_meaning(blank) == ""


def test_correction_types_and_token_status_names() -> None:
    assert codes.CORRECTION_TYPES == {0: "no correction required", 1: "correction required"}
    names = [codes.token_status_name(code) for code in range(8)]
    assert names == ["New", "Error", "Waiting", "Running", "Finished", "Failed", "Canceled", "Unknown"]
    assert codes.token_status_name(12) == "Unknown (12)"


def test_output_fields_and_lengths() -> None:
    assert codes.ADDRESS_FIELD_NAMES == (
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
    assert codes.MAX_LENGTH["Streetname"] == 60
    street = next(field for field in codes.ADDRESS_FIELDS if field.name == "Streetname")
    assert "35" in street.note and "2021" in street.note
    expected = {
        "Company": 105,
        "Prename": 75,
        "CoAddress": 65,
        "HouseNo": 40,
        "HouseNoAddition": 6,
        "ZIPCode": 4,
        "TownName": 27,
        "PoBoxTerm": 20,
        "PoBoxNo": 10,
        "QSTAT": 2,
        "ShortReport": 24,
        "TotalScore": 6,
        "Housekey": 19,
    }
    assert {name: codes.MAX_LENGTH[name] for name in expected} == expected
    assert codes.PASSTHROUGH_MAX_LENGTH == 450


@pytest.mark.parametrize(
    ("header", "canonical"),
    [
        ("StreetName", "Streetname"),
        ("POBoxTerm", "PoBoxTerm"),
        ("ZIPcode", "ZIPCode"),
        ("HouseKey", "Housekey"),
        ("BirthDate", "Birthdate"),
        ("qstat", "QSTAT"),
        (" TownName ", "TownName"),
        ("Kundennummer", None),
    ],
)
def test_output_header_spellings_fold_onto_the_canonical_name(header: str, canonical: str | None) -> None:
    assert codes.canonical_output_field(header) == canonical


def test_both_spellings_of_the_input_names_resolve() -> None:
    assert "Streetname_in" in codes.INPUT_FIELD_NAMES
    assert {"StreetName_in", "ZIPCode_in", "ZipCode_in"} <= set(codes.INPUT_FIELD_SPELLINGS)
    assert codes.INPUT_FIELD_CANONICAL["StreetName_in"] == codes.INPUT_FIELD_CANONICAL["Streetname_in"]
    assert codes.INPUT_FIELD_CANONICAL["ZipCode_in"] == codes.INPUT_FIELD_CANONICAL["ZIPCode_in"] == "ZIPCode"
    assert codes.INPUT_FIELD_CANONICAL["coAddress_in"] == "CoAddress"
    for spelling in codes.INPUT_FIELD_SPELLINGS:
        assert codes.canonical_input_field(spelling) in codes.ADDRESS_FIELD_NAMES
    assert codes.canonical_input_field("QSTAT") is None


@pytest.mark.parametrize("raw", ["²", "١", "1²", "².0"])
def test_digits_other_than_ascii_are_an_unknown_qstat_not_a_crash(raw: str) -> None:
    assert codes.normalize_qstat(raw) == raw.upper()
    assert codes.qstat_info(raw) is None
