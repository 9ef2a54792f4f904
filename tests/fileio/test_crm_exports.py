"""Address files as CRM exports write them: countries as names in the national languages and English, ISO
alpha-3 and vehicle codes, any case (read as the ISO alpha-2 code before any check, an unknown one rejected
once); a column left out with ``ignore``; c/o lines in columns of their own; households without a first
name."""

from __future__ import annotations

from pathlib import Path

import pytest

from fileio.address_service.record_checks import HOUSEHOLD_REASON
from fileio.address_service.records import AddressReading, read_address_file
from fileio.countries import ACCEPTED, country_code, iso_codes
from fileio.errors import InputError
from tests.fileio.test_address_records import assert_nothing_lost, write_text


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("Schweiz", "CH"),
        ("Suisse", "CH"),
        ("Svizzera", "CH"),
        ("Svizra", "CH"),
        ("Switzerland", "CH"),
        ("  SCHWEIZ ", "CH"),
        ("ch", "CH"),
        ("CHE", "CH"),
        ("Confédération suisse", "CH"),
        ("Confederation Suisse", "CH"),
        ("Liechtenstein", "LI"),
        ("Fürstentum  Liechtenstein", "LI"),
        ("FL", "LI"),
        ("LIE", "LI"),
        ("Deutschland", "DE"),
        ("Österreich", "AT"),
        ("Italia", "IT"),
        ("fr", "FR"),
        ("nl", "NL"),
    ],
)
def test_a_known_spelling_is_its_iso_code(value: str, code: str) -> None:
    assert country_code(value) == code


@pytest.mark.parametrize("value", ["Narnia", "XX", "C", "Schweizz", "CHX", ""])
def test_anything_else_names_no_country(value: str) -> None:
    assert country_code(value) is None


def test_the_codes_are_isos_alpha_2_list() -> None:
    codes = iso_codes()
    assert len(codes) == 249
    assert {"CH", "LI", "DE", "AT", "FR", "IT"} <= codes
    assert all(len(code) == 2 and code.isupper() for code in codes)


def test_a_crm_export_with_country_names_and_house_numbers_in_the_street_loses_no_row(tmp_path: Path) -> None:
    header = ["Kundennr", "Vorname", "Name", "Strasse", "PLZ", "Ort", "Land"]
    rows = [
        ["1001", "Anna", "Meier", "Bahnhofstrasse 12", "8001", "Zürich", "Schweiz"],
        ["1002", "Luc", "Favre", "Rue du Marché 4", "1204", "Genève", "Suisse"],
        ["1003", "Gianni", "Rossi", "Via Nassa 12", "6900", "Lugano", "Svizzera"],
        ["1004", "John", "Smith", "Seestrasse 7a", "6004", "Luzern", "Switzerland"],
        ["1005", "Maria", "Frick", "Städtle 20", "9490", "Vaduz", "FL"],
    ]
    result = read_address_file(write_text(tmp_path / "crm.csv", header, rows, ";", encoding="cp1252"))
    assert result.rejected.empty, result.rejected
    assert list(result.records["CountryCode"]) == ["CH", "CH", "CH", "CH", "LI"]
    assert list(result.records["HouseNo"]) == ["12", "4", "12", "7a", "20"]
    assert_nothing_lost(result)


def test_an_unknown_country_rejects_its_row_once_naming_the_spellings_understood(tmp_path: Path) -> None:
    header = ["Vorname", "Name", "Strasse", "Hausnummer", "PLZ", "Ort", "Land"]
    rows = [
        ["Anna", "Meier", "Bahnhofstrasse", "12", "8001", "Zürich", "Schweiz"],
        ["Tom", "Tumnus", "Lamp Post Lane", "1", "1234", "Cair Paravel", "Narnia"],
        ["Eva", "Keller", "Marktgasse", "3", "3011", "Bern", ""],
    ]
    result = read_address_file(write_text(tmp_path / "in.csv", header, rows, ";"))
    rejected = result.rejected
    assert rejected[["row", "field", "value"]].values.tolist() == [[2, "Land", "Narnia"]]
    assert rejected["reason"].iloc[0] == f"unknown country; write {ACCEPTED}"
    assert "Schweiz" in ACCEPTED and "CH" in ACCEPTED
    assert list(result.records["CountryCode"].fillna("")) == ["CH", ""]
    assert_nothing_lost(result)


def test_a_column_mapped_to_ignore_stays_out_of_the_address_and_is_passed_through(tmp_path: Path) -> None:
    header = ["Vorname", "Name", "Strasse", "PLZ", "Ort", "Land"]
    rows = [["Anna", "Meier", "Bahnhofstrasse 12", "8001", "Zürich", "Narnia"]]
    path = write_text(tmp_path / "in.csv", header, rows, ";")
    result = read_address_file(path, AddressReading(mapping={"land": "IGNORE"}))
    assert "CountryCode" not in result.address_columns
    assert result.passthrough_columns == ["Land"]
    assert result.rejected.empty
    assert result.records.loc[0, "Land"] == "Narnia"
    with pytest.raises(InputError, match="or ignore to leave the column out of the address"):
        read_address_file(path, AddressReading(mapping={"Land": "Nation"}))


def test_a_care_of_line_in_a_column_of_its_own_goes_to_the_care_of_field(tmp_path: Path) -> None:
    header = ["Firma", "Vorname", "Name", "Zusatz", "Strasse", "PLZ", "Ort"]
    rows = [
        ["", "Hans", "Brunner", "c/o Familie Brunner", "Dorfstrasse 3", "3000", "Bern"],
        ["c/o Gygax Consulting", "Eva", "Gygax", "", "Seestrasse 7", "8002", "Zürich"],
        ["", "Lea", "Keller", "p.A. Muster AG", "Marktgasse 3", "3011", "Bern"],
        ["", "Bei", "Co", "z.H. Frau Keller", "Marktgasse 4", "3011", "Bern"],
        ["", "Urs", "Frei", "", "Marktgasse 5", "3011", "Bern"],
    ]
    result = read_address_file(write_text(tmp_path / "in.csv", header, rows, ";"))
    records = result.records.set_index("RecordId")
    assert result.rejected.empty, result.rejected
    assert records["CoAddress"].fillna("").tolist() == [
        "c/o Familie Brunner",
        "c/o Gygax Consulting",
        "p.A. Muster AG",
        "z.H. Frau Keller",
        "",
    ]
    assert records["AddressAddition"].isna().all() and records["Company"].isna().all()
    assert (records.loc[4, "Prename"], records.loc[4, "Name"]) == ("Bei", "Co")
    assert_nothing_lost(result)


def test_a_file_without_care_of_lines_gets_no_care_of_column(tmp_path: Path) -> None:
    header = ["Vorname", "Name", "Strasse", "PLZ", "Ort"]
    result = read_address_file(
        write_text(tmp_path / "in.csv", header, [["Anna", "Meier", "Seestrasse 7", "8002", "Zürich"]], ";")
    )
    assert "CoAddress" not in result.records


def test_a_household_without_a_first_name_is_rejected_saying_what_the_service_needs(tmp_path: Path) -> None:
    header = ["Vorname", "Name", "Strasse", "PLZ", "Ort"]
    rows = [
        ["", "Familie Brunner", "Dorfstrasse 3", "3000", "Bern"],
        ["", "Fam. Meier", "Dorfstrasse 4", "3000", "Bern"],
        ["", "Keller", "Dorfstrasse 5", "3000", "Bern"],
        ["Hans", "Familie Brunner", "Dorfstrasse 6", "3000", "Bern"],
    ]
    result = read_address_file(write_text(tmp_path / "in.csv", header, rows, ";"))
    reasons = result.rejected.set_index("row")["reason"]
    assert reasons.loc[1] == reasons.loc[2] == HOUSEHOLD_REASON
    assert "§2.1" in HOUSEHOLD_REASON and "first name" in HOUSEHOLD_REASON
    assert reasons.loc[3] == "Prename missing (required unless Company is given)"
    assert list(result.records["RecordId"]) == [4]
    assert_nothing_lost(result)


@pytest.mark.parametrize("header", ["PLZ Ort", "PLZ/Ort", "NPA Localité", "CAP Località", "Zip City"])
def test_a_postcode_and_town_column_is_split_into_both(tmp_path: Path, header: str) -> None:
    rows = [
        ["1", "Anna", "Meier", "Bahnhofstrasse 12", "8001 Zürich"],
        ["2", "Luc", "Favre", "Rue du Marché 4", "CH-1204  Genève "],
        ["3", "Maria", "Frick", "Städtle 20", "FL-9490 Vaduz"],
        ["4", "Ida", "Lang", "Seeweg 3", "Zürich"],
    ]
    path = write_text(tmp_path / "crm.csv", ["Kundennr", "Vorname", "Name", "Strasse", header], rows, ";")
    result = read_address_file(path)
    assert result.address_columns["ZIPCode"] == result.address_columns["TownName"] == header
    assert list(result.records["ZIPCode"]) == ["8001", "1204", "9490"]
    assert list(result.records["TownName"]) == ["Zürich", "Genève", "Vaduz"]
    # A cell without a postcode rejects its row, naming the column.
    assert result.rejected_report["problems"].tolist() == [
        f"{header}: ZIPCode missing (or PoBoxZIP for a P.O. box)"
    ]
    assert_nothing_lost(result)


def test_a_postcode_and_town_column_is_left_alone_beside_a_postcode_column(tmp_path: Path) -> None:
    header = ["Vorname", "Name", "Strasse", "PLZ", "Ort", "PLZ Ort"]
    path = write_text(tmp_path / "k.csv", header, [["A", "B", "Seeweg 3", "8001", "Zürich", "x"]], ";")
    result = read_address_file(path)
    assert (result.address_columns["ZIPCode"], result.address_columns["TownName"]) == ("PLZ", "Ort")
    assert "PLZ Ort" in result.passthrough_columns


def test_a_column_mapped_to_postcode_and_town_is_split(tmp_path: Path) -> None:
    header = ["Vorname", "Name", "Strasse", "Wohnadresse"]
    path = write_text(tmp_path / "k.csv", header, [["A", "B", "Seeweg 3", "8001 Zürich"]], ";")
    result = read_address_file(path, AddressReading(mapping={"Wohnadresse": "ZIPCode+TownName"}))
    assert result.records[["ZIPCode", "TownName"]].values.tolist() == [["8001", "Zürich"]]
    with pytest.raises(InputError, match=r"ZIPCode\+TownName for postcode and town in one column"):
        read_address_file(path, AddressReading(mapping={"Wohnadresse": "Postcode-Town"}))
