"""The upload file of an agreed alignment: only the profile's columns, our id, the agreed bytes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fileio.address_service.profile_upload import (
    check_upload,
    profile_frame,
    split_house_numbers,
    write_profile_upload,
)
from fileio.address_service.profiles import BUILTIN, ProfileError
from fileio.address_service.records import read_address_file
from fileio.errors import InputError

INPUT = (
    "Kundennummer;Telefon;Notiz;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n"
    "K-981;044 111 22 33;geheim: VIP;Anna;Muster;Hauptstrasse;7b;6280;Hochdorf\n"
    "K-982;044 444 55 66;zahlt spät;Beat;Keller;Seestrasse;12;6353;Weggis\n"
    "K-983;;;Carla;Rossi;Via Nassa;7-9;6900;Lugano\n"
)


@pytest.fixture
def addresses(tmp_path: Path) -> Path:
    path = tmp_path / "kunden.csv"
    path.write_text(INPUT, encoding="utf-8")
    return path


def test_only_the_profiles_columns_leave_the_machine_and_the_id_is_ours(
    addresses: Path, tmp_path: Path
) -> None:
    records = read_address_file(addresses, wire_encoding="utf-8")
    upload = write_profile_upload(records, BUILTIN["standard"], tmp_path / "upload.txt")
    data = upload.read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf")  # no byte-order mark
    text = data.decode("utf-8")
    lines = text.split("\r\n")
    assert lines[0].split("\t") == list(BUILTIN["standard"].upload.columns)
    for private in ("K-981", "044 111 22 33", "geheim", "zahlt spät", "Kundennummer", "Telefon"):
        assert private not in text
    rows = [line.split("\t") for line in lines[1:] if line]
    assert [row[0] for row in rows] == ["1", "2", "3"]  # CustomID_01_in carries our row number
    assert all(len(row) == len(lines[0].split("\t")) for row in rows)


def test_a_house_number_is_split_when_the_profile_has_both_columns(addresses: Path) -> None:
    frame = profile_frame(read_address_file(addresses, wire_encoding="utf-8"), BUILTIN["standard"])
    assert frame[["HouseNo_in", "HouseNoAddition_in"]].values.tolist() == [
        ["7", "b"],
        ["12", ""],
        ["7", "-9"],
    ]
    legacy = profile_frame(read_address_file(addresses), BUILTIN["legacy-de"])
    assert legacy["Hausnummer"].tolist() == ["7b", "12", "7-9"]  # one column agreed: sent as given


@pytest.mark.parametrize(
    ("given", "number", "addition"),
    [
        ("7b", "7", "b"),
        ("7 b", "7", "b"),
        ("7-9", "7", "-9"),
        ("12", "12", ""),
        ("b7", "b7", ""),
        ("", "", ""),
    ],
)
def test_split_house_numbers(given: str, number: str, addition: str) -> None:
    numbers, additions = split_house_numbers(pd.Series([given]))
    assert (numbers.iloc[0], additions.iloc[0]) == (number, addition)


def test_the_legacy_profile_writes_windows_1252_with_its_german_header(
    addresses: Path, tmp_path: Path
) -> None:
    records = read_address_file(addresses)
    upload = write_profile_upload(records, BUILTIN["legacy-de"], tmp_path / "upload.txt")
    lines = upload.read_bytes().decode("cp1252").split("\r\n")
    assert lines[0] == "KDNR (QSTAT)\tFirma\tVorname\tNachname\tc/o\tStrasse\tHausnummer\tPostfach\tPLZ\tOrt"
    assert lines[1].split("\t") == [
        "1",
        "",
        "Anna",
        "Muster",
        "",
        "Hauptstrasse",
        "7b",
        "",
        "6280",
        "Hochdorf",
    ]


def test_a_pass_through_slot_is_empty_unless_mapped(addresses: Path) -> None:
    records = read_address_file(addresses, wire_encoding="utf-8")
    assert profile_frame(records, BUILTIN["standard"])["PassThrough_01"].eq("").all()
    mapped = profile_frame(records, BUILTIN["standard"], extra={"PassThrough_01": "Kundennummer"})
    assert mapped["PassThrough_01"].tolist() == ["K-981", "K-982", "K-983"]
    with pytest.raises(InputError, match="PassThrough_99"):
        profile_frame(records, BUILTIN["standard"], extra={"PassThrough_99": "Kundennummer"})
    with pytest.raises(InputError, match="Fax"):
        profile_frame(records, BUILTIN["standard"], extra={"PassThrough_01": "Fax"})


def test_a_value_too_long_for_a_pass_through_slot_never_reaches_the_upload(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text(INPUT.replace("geheim: VIP", "x" * 451), encoding="utf-8")
    records = read_address_file(path, wire_encoding="utf-8")
    assert records.rejected[["row", "field"]].values.tolist() == [[1, "Notiz"]]
    frame = profile_frame(records, BUILTIN["standard"], extra={"PassThrough_02": "Notiz"})
    assert frame["CustomID_01_in"].tolist() == ["2", "3"] and frame["PassThrough_02"].str.len().max() <= 450


def test_upload_options_override_the_profile_and_are_validated() -> None:
    legacy = BUILTIN["legacy-de"]
    overridden = legacy.with_upload(delimiter=";", encoding="utf-8")
    assert (overridden.upload.delimiter, overridden.upload.encoding) == (";", "utf-8")
    assert overridden.fingerprint() != legacy.fingerprint() and legacy.upload.delimiter == "\t"
    assert legacy.with_upload() is legacy
    with pytest.raises(ProfileError, match="upload override: encoding"):
        legacy.with_upload(encoding="ebcdic")


def test_the_written_upload_is_checked_against_the_profile(addresses: Path, tmp_path: Path) -> None:
    profile = BUILTIN["legacy-de"]
    upload = write_profile_upload(read_address_file(addresses), profile, tmp_path / "upload.txt")
    check_upload(upload, profile)  # as written: agrees
    lines = upload.read_bytes().decode("cp1252").split("\r\n")
    broken = {
        "header": "\r\n".join(["KDNR\tFirma", *lines[1:]]),
        "fields": "\r\n".join([*lines[:2], lines[2] + "\textra", *lines[3:]]),
        "line endings": "\n".join(lines),
    }
    expected = {"header": "header", "fields": "line 3", "line endings": "line endings"}
    for problem, text in broken.items():
        upload.write_bytes(text.encode("cp1252"))
        with pytest.raises(InputError, match=expected[problem]):
            check_upload(upload, profile)
    standard = BUILTIN["standard"]
    written = write_profile_upload(
        read_address_file(addresses, wire_encoding="utf-8"), standard, tmp_path / "u8.txt"
    )
    written.write_bytes(written.read_bytes().replace(b"Hauptstrasse", "Hauptstraße".encode("cp1252")))
    with pytest.raises(InputError, match="not utf-8 at byte"):
        check_upload(written, standard)
    upload.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode("cp1252"))
    with pytest.raises(InputError, match="byte-order mark"):
        check_upload(upload, profile)
