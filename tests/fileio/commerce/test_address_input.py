"""Reading a commerce address file: leaf names and batch aliases, pass-through columns, rows rejected with
their row and field before anything is sent."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fileio.commerce.address_input import commerce_columns, read_commerce_addresses
from fileio.errors import InputError
from fileio.input_format import InputFormat
from fileio.rejected_rows import write_rejected
from tests.outputs import EXCEL, read_output_csv


def _csv(tmp_path: Path, text: str, name: str = "in.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_leaf_field_names_in_any_case_and_spelling() -> None:
    headers = [
        "FIRSTNAME",
        "last_name",
        "Street",
        "house number",
        "AdditionalAddress",
        "ZIP",
        "city",
        "postBoxNumber",
    ]
    assert commerce_columns(headers) == {
        "firstName": "FIRSTNAME",
        "lastName": "last_name",
        "street": "Street",
        "houseNumber": "house number",
        "additionalAddress": "AdditionalAddress",
        "zip": "ZIP",
        "city": "city",
        "postBoxNumber": "postBoxNumber",
    }


def test_batch_headers_and_their_aliases() -> None:
    headers = [
        "Prename",
        "Name",
        "Streetname",
        "HouseNo",
        "HouseNoAddition",
        "AddressAddition",
        "ZIPCode",
        "TownName",
        "PoBoxNo",
    ]
    assert commerce_columns(headers) == {
        "firstName": "Prename",
        "lastName": "Name",
        "street": "Streetname",
        "houseNumber": "HouseNo",
        "houseNumberAddition": "HouseNoAddition",
        "additionalAddress": "AddressAddition",
        "zip": "ZIPCode",
        "city": "TownName",
        "postBoxNumber": "PoBoxNo",
    }
    german = commerce_columns(["Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort", "Postfach"])
    assert german == {
        "firstName": "Vorname",
        "lastName": "Nachname",
        "street": "Strasse",
        "houseNumber": "Hausnummer",
        "zip": "PLZ",
        "city": "Ort",
        "postBoxNumber": "Postfach",
    }
    assert commerce_columns(["PostBox"]) == {"postBoxNumber": "PostBox"}


def test_a_leaf_name_beats_an_alias_and_the_alias_column_passes_through(tmp_path: Path) -> None:
    path = _csv(tmp_path, "PLZ;zip;Ort\n1111;6010;Kriens\n")
    read = read_commerce_addresses(path, use="validation")
    assert read.columns["zip"] == ("zip",) and read.passthrough == ["PLZ"]
    assert read.records.loc[0, "zip"] == "6010" and read.records.loc[0, "PLZ"] == "1111"


def test_records_join_the_house_number_addition_and_keep_other_columns_unchanged(tmp_path: Path) -> None:
    text = "KundenNr;Prename;Name;Streetname;HouseNo;HouseNoAddition;ZIPCode;TownName;Postfach;Notiz\n"
    text += "007; Hans ;Muster;Lindenstrasse;14;a;6010;Kriens;;  bitte  prüfen\n"
    text += "008;Eva;Muster;;;;6010;Kriens;Postfach 12;\n"
    read = read_commerce_addresses(_csv(tmp_path, text), use="validation")

    first, second = read.records.to_dict("records")
    assert first["KundenNr"] == "007" and first["Notiz"] == "  bitte  prüfen"
    assert (first["firstName"], first["houseNumber"], first["postBoxNumber"]) == ("Hans", "14 a", None)
    assert second["postBoxNumber"] == "12" and second["street"] is None
    assert read.columns["houseNumber"] == ("HouseNo", "HouseNoAddition")
    assert read.passthrough == ["KundenNr", "Notiz"]


def test_rows_are_rejected_naming_row_field_value_and_reason(tmp_path: Path) -> None:
    text = "Kunde;Vorname;Strasse;PLZ;Ort\n"
    text += "1;Hans;Lindenstrasse;6010;Kriens\n"  # accepted
    text += "2;Anna;Lindenstrasse;;\n"  # neither zip nor city
    text += "3;Beat;Lindenstrasse;60100;Kriens\n"  # zip not 4 digits
    text += "4;Urs;" + "x" * 61 + ";6010;Kriens\n"  # street too long
    text += ";;;;\n"  # empty: skipped
    text += "6;Eva\x01;Lindenstrasse;;Kriens\n"  # a control character; a city alone is enough
    read = read_commerce_addresses(_csv(tmp_path, text), use="validation")

    assert read.records["row"].tolist() == [1]
    assert read.rejected[["row", "field", "value"]].values.tolist() == [
        [2, "PLZ", ""],
        [3, "PLZ", "60100"],
        [4, "Strasse", "x" * 61],
        [6, "Vorname", "Eva\\x01"],
    ]
    reasons = read.rejected["reason"].tolist()
    assert reasons[0] == "zip and city both missing: the service needs at least one of them"
    assert reasons[1] == "zip must be exactly 4 digits"
    assert reasons[2] == "longer than 60 characters (61)"
    assert reasons[3].startswith("control character U+0001")
    assert (read.accepted, read.rejected_rows, read.empty_rows, read.input_rows) == (1, 4, 1, 5)

    written = write_rejected(read.rejected_report, tmp_path / "rejected.csv", style=EXCEL)
    assert written is not None
    report = read_output_csv(written, dtype=str, keep_default_na=False)
    assert report[["Kunde", "line", "row"]].values.tolist() == [
        ["2", "3", "2"],
        ["3", "4", "3"],
        ["4", "5", "4"],
        ["6", "7", "6"],
    ]
    assert (
        report.loc[0, "problems"] == "PLZ: zip and city both missing: the service needs at least one of them"
    )
    assert report.loc[3, "values"] == "Vorname: Eva\\x01"


def test_a_delivery_query_needs_zip_and_city_on_every_row(tmp_path: Path) -> None:
    text = "zip,city,street\n6010,Kriens,\n6010,,Lindenstrasse\n,Kriens,\n"
    read = read_commerce_addresses(_csv(tmp_path, text), use="delivery")
    assert read.records["row"].tolist() == [1]
    assert read.rejected[["row", "field"]].values.tolist() == [[2, "city"], [3, "zip"]]

    with pytest.raises(InputError, match="missing address columns: city"):
        read_commerce_addresses(_csv(tmp_path, "zip,street\n6010,A\n", "nocity.csv"), use="delivery")


def test_a_pass_through_column_with_a_result_name_is_refused(tmp_path: Path) -> None:
    path = _csv(tmp_path, "zip,Quality\n6010,gut\n")
    with pytest.raises(InputError, match=r"field 'Quality': column name is reserved"):
        read_commerce_addresses(path, use="validation", reserved=("quality",))


def test_an_xlsx_input_is_read_like_a_csv(tmp_path: Path) -> None:
    path = tmp_path / "in.xlsx"
    frame = pd.DataFrame({"Vorname": ["Hans"], "PLZ": ["6010"], "Ort": ["Kriens"], "Kundennummer": ["0042"]})
    frame.to_excel(path, index=False, sheet_name="Adressen")
    read = read_commerce_addresses(path, use="validation", input_format=InputFormat(sheet="Adressen"))
    assert read.records[["firstName", "zip", "city"]].values.tolist() == [["Hans", "6010", "Kriens"]]
    assert read.records.loc[0, "Kundennummer"] == "0042"


@pytest.mark.parametrize("header", ["PLZ Ort", "NPA Localité", "Zip City"])
def test_a_postcode_and_town_column_gives_both_where_the_file_has_neither(
    tmp_path: Path, header: str
) -> None:
    text = f"Name;{header}\nMeier;8001 Zürich\nHuber;CH-6010  Kriens\nGerber;Bern\n"
    validation = read_commerce_addresses(_csv(tmp_path, text), use="validation")
    assert validation.columns["zip"] == validation.columns["city"] == (header,)
    assert validation.records[["zip", "city"]].values.tolist() == [
        ["8001", "Zürich"], ["6010", "Kriens"], [None, "Bern"]
    ]  # fmt: skip
    assert header not in validation.passthrough

    # A delivery query needs the postcode: the cell without one rejects its row, naming the column.
    delivery = read_commerce_addresses(_csv(tmp_path, text, "delivery.csv"), use="delivery")
    assert delivery.records["row"].tolist() == [1, 2]
    assert delivery.rejected[["row", "field"]].values.tolist() == [[3, header]]
    assert "no postcode before the town" in delivery.rejected.at[0, "reason"]


def test_a_postcode_and_town_column_is_a_pass_through_beside_postcode_and_town(tmp_path: Path) -> None:
    text = "PLZ;Ort;PLZ Ort\n8001;Zürich;8001 Zürich\n"
    read = read_commerce_addresses(_csv(tmp_path, text), use="delivery")
    assert read.columns["zip"] == ("PLZ",) and read.columns["city"] == ("Ort",)
    assert read.passthrough == ["PLZ Ort"]


def test_a_care_of_line_in_a_name_column_is_the_additional_address(tmp_path: Path) -> None:
    text = "Vorname;Name;Zusatz;PLZ;Ort\nHans;c/o Meier;;8001;Zürich\nAnna;z.H. Frick;Büro 3;8001;Zürich\n"
    read = read_commerce_addresses(_csv(tmp_path, text), use="validation")
    assert read.records[["lastName", "additionalAddress"]].values.tolist() == [
        [None, "c/o Meier"],
        ["z.H. Frick", "Büro 3"],  # the row has an addition already: the name stays as given
    ]
