"""Reading and checking a pickup registration file: headers in any case, defaults, and every bad row in
rejected-rows report before anything is sent."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fileio.commerce.pickup_input import pickup_columns, read_pickup_input
from fileio.errors import InputError

HEADER = (
    "Gender;FIRSTNAME;last_name;Language;Street;House Number;ZIP;City;countrycode;NotifyMode;Email;"
    "Mobile-Number;Kundennr"
)


def write(tmp_path: Path, *lines: str, name: str = "users.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    return path


def test_headers_match_in_any_case_and_spelling() -> None:
    columns = pickup_columns(HEADER.split(";"))
    assert columns["firstName"] == "FIRSTNAME"
    assert columns["lastName"] == "last_name"
    assert columns["houseNumber"] == "House Number"
    assert columns["mobileNumber"] == "Mobile-Number"
    assert "Kundennr" not in columns.values()


def test_good_row_becomes_the_request_with_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "male; Hans ;Muster;de;Bahnhofstrasse;1;8001;Zürich;;;hans@example.ch;;K-1")
    read = read_pickup_input(path)
    [row] = read.rows
    assert row.row == 1
    assert row.request.to_body() == {
        "userDetails": {"gender": "MALE", "firstName": "Hans", "lastName": "Muster", "language": "DE"},
        "address": {
            "house": {"street": "Bahnhofstrasse", "houseNumber": "1"},
            "zip": {"zip": "8001", "city": "Zürich", "countryCode": "CH"},
        },
        "notification": {"notifyMode": "EMAIL", "email": "hans@example.ch"},
        "service": "PICKUP",
        "verified": None,
    }
    assert read.rejected.empty and read.empty_rows == 0
    assert read.frame.loc[1, "Kundennr"] == "K-1"  # other columns are kept for the results


def test_every_bad_row_is_rejected_naming_row_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "MALE;;Muster;DE;Weg;1;8001;Zürich;CH;EMAIL;a@example.ch;;",  # 1 firstName missing
        "MALE;Hans;Muster;DE;Weg;1;801;Zürich;CH;EMAIL;a@example.ch;;",  # 2 zip of CH has 4 digits
        "MALE;Hans;Muster;DE;Weg;1;8001;Zürich;CH;EMAIL;;;",  # 3 EMAIL without e-mail
        "MALE;Hans;Muster;DE;Weg;1;8001;Zürich;Helvetien;EMAIL;a@example.ch;;",  # 4 country code
        ";;;;;;;;;;;;",  # 5 empty
        "FEMALE;Anna;Beispiel;FR;Rue;2;75001;Paris;fr;SMS;;+33600000000;",  # 6 good: foreign zip, SMS
        "MALE;Hans;Muster;DE;Weg;1;8001;Zürich;CH;SMS;;;",  # 7 SMS without mobile number
        "MALE;Hans;Muster;DE;Weg;1;8001;Zürich;CH;EMAIL;not-an-address;;",  # 8 malformed e-mail
        "MALE;Hans;Muster;DE;Weg;1;;Zürich;CH;EMAIL;a@example.ch;;",  # 9 zip missing
    )
    read = read_pickup_input(path)
    assert [row.row for row in read.rows] == [6]
    assert read.rows[0].request.address.zip.country_code == "FR"
    described = [(line.row, line.field) for line in read.rejected.itertuples()]
    assert described == [  # named by the file's own headers, as rejected.csv names them
        (1, "FIRSTNAME"),
        (2, "ZIP"),
        (3, "Email"),
        (4, "countrycode"),
        (7, "Mobile-Number"),
        (8, "Email"),
        (9, "ZIP"),
    ]
    reasons = dict(zip(read.rejected["row"], read.rejected["reason"], strict=True))
    assert reasons[3] == "missing: notifyMode EMAIL needs it"
    assert "4 digits" in reasons[2]
    assert read.rejected.loc[read.rejected["row"] == 4, "value"].item() == "Helvetien"
    assert read.empty_rows == 1 and read.rejected_rows == 7


def test_xlsx_input(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "firstname": ["Hans", "Anna"],
            "LASTNAME": ["Muster", ""],
            "zip": [8001, 3000],
            "email": ["hans@example.ch", "anna@example.ch"],
        }
    )
    path = tmp_path / "users.xlsx"
    frame.to_excel(path, index=False)
    read = read_pickup_input(path)
    assert [row.row for row in read.rows] == [1]
    assert read.rows[0].request.address.zip.zip == "8001"
    assert read.rejected[["row", "field"]].values.tolist() == [[2, "LASTNAME"]]


def test_control_character_rejects_the_row(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "MALE;Hans;Muster;DE;Weg;1;8001;Zürich;CH;EMAIL;a@example.ch;;",
        "MALE;Hans\x07;Muster;DE;Weg;1;8001;Zürich;CH;EMAIL;a@example.ch;;",
    )
    read = read_pickup_input(path)
    assert [row.row for row in read.rows] == [1]
    assert read.rejected[["row", "field"]].values.tolist() == [[2, "firstName"]]
    assert "control character U+0007" in read.rejected["reason"].item()


def test_missing_required_column_names_it(tmp_path: Path) -> None:
    path = tmp_path / "users.csv"
    path.write_text("firstName,lastName,city\nHans,Muster,Zürich\n", encoding="utf-8")
    with pytest.raises(InputError, match="column zip missing"):
        read_pickup_input(path)


def test_a_crm_export_is_read_as_the_address_batch_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "kunden.csv"
    path.write_text(
        "Kundennr;Vorname;Nachname;Strasse;PLZ;Ort;Land;E-Mail;Natel\n"
        "K-1;Hans;Muster;Bahnhofstrasse 12a;8001;Zürich;Schweiz;hans@example.ch;\n"
        "K-2;Anna;Frick;Städtle 20;9490;Vaduz;Fürstentum Liechtenstein;anna@example.ch;079 555 00 00\n"
        "K-3;Eva;Keller;Postfach 12;3000;Bern;CH;eva@example.ch;\n"
        "K-4;Ida;Lang;Seeweg 3;8001;Zürich;Narnia;ida@example.ch;\n",
        encoding="utf-8",
    )
    read = read_pickup_input(path)
    assert read.columns["firstName"] == "Vorname" and read.columns["countryCode"] == "Land"
    assert read.columns["email"] == "E-Mail" and read.columns["mobileNumber"] == "Natel"
    bodies = [row.request.to_body() for row in read.rows]
    assert [body["address"]["house"] for body in bodies[:2]] == [
        {"street": "Bahnhofstrasse", "houseNumber": "12a"},
        {"street": "Städtle", "houseNumber": "20"},
    ]
    assert [body["address"]["zip"]["countryCode"] for body in bodies] == ["CH", "LI", "CH"]
    # A line that holds no house number is sent as given: a pickup user's address needs none.
    assert bodies[2]["address"]["house"] == {"street": "Postfach 12"}
    problems = dict(zip(read.rejected_report["Kundennr"], read.rejected_report["problems"], strict=True))
    assert list(problems) == ["K-4"] and problems["K-4"].startswith(
        "Land: not a country: an ISO country code"
    )


def test_a_postcode_and_town_column_and_street_lines_kept_whole(tmp_path: Path) -> None:
    path = tmp_path / "kunden.csv"
    path.write_text(
        "Kundennr;Vorname;Nachname;Strasse;PLZ Ort;E-Mail\n"
        "K-1;Hans;Muster;Bahnhofstrasse 12a;8001 Zürich;hans@example.ch\n"
        "K-2;Anna;Frick;Städtle 20;FL-9490 Vaduz;anna@example.ch\n"
        "K-3;Eva;Keller;Seeweg 3;Bern;eva@example.ch\n",
        encoding="utf-8",
    )
    read = read_pickup_input(path)
    assert read.columns["zip"] == read.columns["city"] == "PLZ Ort"
    bodies = [row.request.to_body() for row in read.rows]
    assert [(body["address"]["zip"]["zip"], body["address"]["zip"]["city"]) for body in bodies] == [
        ("8001", "Zürich"),
        ("9490", "Vaduz"),
    ]
    assert bodies[0]["address"]["house"] == {"street": "Bahnhofstrasse", "houseNumber": "12a"}
    # The town without its postcode rejects the row, naming the column and the cell as given.
    assert read.rejected[["row", "field", "value"]].values.tolist() == [[3, "PLZ Ort", "Bern"]]
    assert "no postcode before the town" in read.rejected.at[0, "reason"]

    # Told not to split, every street line goes as it was written.
    whole = read_pickup_input(path, split_house_numbers=False)
    assert [row.request.to_body()["address"]["house"] for row in whole.rows] == [
        {"street": "Bahnhofstrasse 12a"},
        {"street": "Städtle 20"},
    ]
