"""The upload file: default tab/CRLF/Windows-1252 bytes, column order, sanitising, other formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.address_service.records import AddressInput, read_address_file
from tasks.address_service.wire import WireFormat, write_upload_file
from tasks.errors import InputError


def address_input(tmp_path: Path, text: str, **options: object) -> AddressInput:
    path = tmp_path / "input.csv"
    path.write_text(text, encoding="utf-8")
    return read_address_file(path, **options)  # type: ignore[arg-type]


# Address columns deliberately out of §2.3 order, customer columns around them.
SOURCE = (
    "Ort;Kundennummer;PLZ;Nachname;Vorname;Strasse;Hausnummer;Segment\n"
    "Genève;00042;1204;Bär;René;Rue de la Tour;3;A\n"
    "Zürich;00043;8001;Ødegård;Åsa;Limmatquai;5;B\n"
)


def test_default_wire_bytes(tmp_path: Path) -> None:
    upload = write_upload_file(address_input(tmp_path, SOURCE), tmp_path / "upload.txt")
    assert upload.read_bytes() == (
        b"RecordId\tKundennummer\tSegment\tPrename\tName\tStreetname\tHouseNo\tZIPCode\tTownName\r\n"
        b"1\t00042\tA\tRen\xe9\tB\xe4r\tRue de la Tour\t3\t1204\tGen\xe8ve\r\n"
        b"2\t00043\tB\t\xc5sa\t\xd8deg\xe5rd\tLimmatquai\t5\t8001\tZ\xfcrich\r\n"
    )


def test_only_accepted_records_are_written(tmp_path: Path) -> None:
    text = SOURCE + "Bern;00044;300;Muster;Max;Weg;1;C\n"
    records = address_input(tmp_path, text)
    assert len(records.rejected) == 1
    lines = write_upload_file(records, tmp_path / "upload.txt").read_bytes().split(b"\r\n")
    assert len(lines) == 4 and lines[-1] == b""


def test_delimiters_and_line_breaks_inside_values_become_spaces(tmp_path: Path) -> None:
    text = (
        'Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort;Notiz\n"Eva\tMaria";"Meier";"Weg";1;3000;Bern;"zwei\r\nZeilen"\n'
        'Otto;"Kurz ""der Kleine""";Weg;2;3000;Bern;"a\tb"\n'
    )
    upload = write_upload_file(address_input(tmp_path, text), tmp_path / "upload.txt")
    lines = upload.read_bytes().decode("cp1252").split("\r\n")
    assert lines[1].split("\t") == ["1", "zwei Zeilen", "Eva Maria", "Meier", "Weg", "1", "3000", "Bern"]
    # quotes are not special on the wire: written as they are, never quoted
    assert lines[2].split("\t") == ["2", "a b", "Otto", 'Kurz "der Kleine"', "Weg", "2", "3000", "Bern"]


def test_configurable_delimiter_encoding_line_end_and_header(tmp_path: Path) -> None:
    fmt = WireFormat(
        delimiter=";", encoding="utf-8", line_terminator="\n", header=False, record_id_column="Id"
    )
    upload = write_upload_file(address_input(tmp_path, SOURCE), tmp_path / "upload.csv", fmt)
    assert upload.read_text(encoding="utf-8") == (
        "1;00042;A;René;Bär;Rue de la Tour;3;1204;Genève\n2;00043;B;Åsa;Ødegård;Limmatquai;5;8001;Zürich\n"
    )
    with_header = write_upload_file(
        address_input(tmp_path, SOURCE), tmp_path / "h.csv", WireFormat(record_id_column="Id")
    )
    assert with_header.read_bytes().startswith(b"Id\tKundennummer\t")


def test_fixed_width_layout(tmp_path: Path) -> None:
    layout = (
        ("RecordId", 4),
        ("Kundennummer", 6),
        ("Segment", 2),
        ("Prename", 8),
        ("Name", 10),
        ("Streetname", 16),
        ("HouseNo", 3),
        ("ZIPCode", 4),
        ("TownName", 8),
        ("Floor", 3),
    )
    upload = write_upload_file(
        address_input(tmp_path, SOURCE), tmp_path / "fixed.txt", WireFormat(fixed_widths=layout)
    )
    lines = upload.read_bytes().decode("cp1252").split("\r\n")
    assert lines[0] == "RecoKundenSePrename Name      Streetname      HouZIPCTownNameFlo"
    assert lines[1] == "1   00042 A René    Bär       Rue de la Tour  3  1204Genève     "
    assert lines[2] == "2   00043 B Åsa     Ødegård   Limmatquai      5  8001Zürich     "
    assert lines[3] == ""
    assert all(len(line) == sum(width for _, width in layout) for line in lines[:3])


def test_fixed_width_refuses_to_truncate_or_drop(tmp_path: Path) -> None:
    records = address_input(tmp_path, SOURCE)
    narrow = (("RecordId", 4), ("Kundennummer", 6), ("Segment", 2), ("Prename", 8), ("Name", 10),
              ("Streetname", 10), ("HouseNo", 3), ("ZIPCode", 4), ("TownName", 8))  # fmt: skip
    with pytest.raises(InputError, match="row 1, field 'Streetname': value 'Rue de la Tour' is wider"):
        write_upload_file(records, tmp_path / "f.txt", WireFormat(fixed_widths=narrow))
    with pytest.raises(ValueError, match="leaves out columns that would be sent: \\['Segment'\\]"):
        without_segment = narrow[:2] + narrow[3:]
        write_upload_file(records, tmp_path / "f.txt", WireFormat(fixed_widths=without_segment))
    with pytest.raises(ValueError, match="no 'RecordId' column"):
        write_upload_file(records, tmp_path / "f.txt", WireFormat(fixed_widths=narrow[1:]))
    assert not (tmp_path / "f.txt").exists()


def test_value_outside_the_wire_encoding_is_an_error_naming_row_and_field(tmp_path: Path) -> None:
    text = (
        "Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n"
        "Eva;Meier;Weg;1;3000;Bern\nŁucja;Nowak;Weg;1;3000;Bern\n"
    )
    records = address_input(tmp_path, text, wire_encoding="utf-8")
    with pytest.raises(
        InputError, match="row 2, field 'Prename': character 'Ł' \\(U\\+0141\\) cannot be written"
    ):
        write_upload_file(records, tmp_path / "upload.txt")
    assert not (tmp_path / "upload.txt").exists()
    written = write_upload_file(records, tmp_path / "upload.txt", WireFormat(encoding="utf-8"))
    assert "Łucja" in written.read_text(encoding="utf-8")
