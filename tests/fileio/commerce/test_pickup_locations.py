"""Reading a file of locations to ask for pickup points near: only the zip is required, the pickup user's
fields are sent when given (no name made up, no notification mode unless given), and every bad row is in the
rejected-rows report with its line, before anything is sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from fileio.commerce.pickup_input import read_pickup_locations
from fileio.errors import InputError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "locations.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_location_alone_is_a_request_without_names_or_notification(tmp_path: Path) -> None:
    path = write(tmp_path, "Kundennr,ZIP,City,Street\nK-1,8001,Zürich,Bahnhofstrasse\n")
    read = read_pickup_locations(path)
    [row] = read.rows
    assert row.request.to_body() == {
        "userDetails": {},
        "address": {
            "house": {"street": "Bahnhofstrasse"},
            "zip": {"zip": "8001", "city": "Zürich", "countryCode": "CH"},
        },
        "notification": {},
        "service": "PICKUP",
        "verified": None,
    }
    assert read.id_column == "Kundennr" and read.lines == {1: 2}


def test_the_users_fields_go_along_when_given(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "firstName,lastName,language,zip,countryCode,notifyMode,email\nHans,Muster,de,9490,li,email,h@example.li\n",
    )
    [row] = read_pickup_locations(path).rows
    body = row.request.to_body()
    assert body["userDetails"] == {"firstName": "Hans", "lastName": "Muster", "language": "DE"}
    assert body["address"]["zip"] == {"zip": "9490", "countryCode": "LI"}
    assert body["notification"] == {"notifyMode": "EMAIL", "email": "h@example.li"}


def test_bad_rows_are_rejected_with_their_line_and_the_others_kept(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "id,zip,countryCode,notifyMode,email\n"
        "A,8001,,,\n"  # kept: the zip alone
        ",,,,\n"  # empty
        "B,,CH,,\n"  # zip missing
        "C,80,LI,,\n"  # not a postcode of LI
        "D,8001,CH,EMAIL,\n"  # a notification mode given needs its address
        "E,8001,CH,,not-an-address\n",  # an e-mail given must be one
    )
    read = read_pickup_locations(path)
    assert [row.row for row in read.rows] == [1]
    assert read.empty_rows == 1
    report = read.rejected_report
    assert report["id"].tolist() == ["B", "C", "D", "E"]
    assert report["line"].tolist() == [4, 5, 6, 7]
    problems = report["problems"].tolist()
    assert problems[0] == "zip: missing"
    assert problems[1].startswith("zip: not a postcode of LI")
    assert problems[2] == "email: missing: notifyMode EMAIL needs it"
    assert problems[3].startswith("email:")


def test_a_file_without_a_zip_column_is_refused_naming_it(tmp_path: Path) -> None:
    path = write(tmp_path, "street,city\nBahnhofstrasse,Zürich\n")
    with pytest.raises(InputError, match="column zip missing"):
        read_pickup_locations(path)


def test_a_file_of_which_no_row_passes_has_no_rows_and_no_lines(tmp_path: Path) -> None:
    read = read_pickup_locations(write(tmp_path, "zip,city\n12,Bern\n"))
    assert (read.rows, read.lines, read.rejected_rows) == ([], {}, 1)
