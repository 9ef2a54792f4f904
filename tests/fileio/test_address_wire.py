"""The upload file: default tab/CRLF/Windows-1252 bytes, column order, sanitising, other formats."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from fileio.address_service import wire
from fileio.address_service.records import AddressInput, read_address_file
from fileio.address_service.wire import WireFormat, write_upload_file
from fileio.errors import InputError


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


# Text the upload must carry as it is or refuse: Windows-1252 letters, characters outside it, the delimiter
# and line ends (replaced by spaces), quotes and backslashes (written as they are), a vertical tab.
_PIECES = ["a", "Z", "1", " ", "ä", "é", "€", "Œ", "ß", "\t", "\r", "\n", "\r\n", '"', "'", ";", "|", "\\",
           "\x0b", "Ł", "😀"]  # fmt: skip
_FORMATS = [
    WireFormat(),
    WireFormat(delimiter=";", encoding="utf-8", line_terminator="\n", header=False),
    WireFormat(encoding="utf-8-sig"),
    WireFormat(delimiter="|", line_terminator="\r"),
]


def _random_frame(rng: random.Random, rows: int) -> pd.DataFrame:
    def value() -> str | None:
        return None if rng.random() < 0.15 else "".join(rng.choices(_PIECES, k=rng.randint(0, 6)))

    columns: dict[str, object] = {
        "RecordId": pd.array(range(1, rows + 1), dtype=rng.choice(["int64", "Int64"]))
    }
    for number in range(rng.randint(1, 4)):
        columns[f"Field{number}"] = pd.Series(
            [value() for _ in range(rows)], dtype=rng.choice(["str", object])
        )
    return pd.DataFrame(columns)


def _outcome(write: Callable[..., Path], frame: pd.DataFrame, path: Path, fmt: WireFormat) -> bytes | str:
    try:
        return write(frame, Path("in.csv"), path, fmt).read_bytes()
    except InputError as exc:
        return str(exc)


@pytest.mark.parametrize("seed", range(4))
def test_arrow_writer_writes_the_bytes_of_the_csv_module(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    for case in range(60):
        frame, fmt = _random_frame(rng, rng.randint(0, 6)), rng.choice(_FORMATS)
        assert _arrow_path_takes(frame, fmt), case
        fast = _outcome(wire.write_frame, frame, tmp_path / "fast.txt", fmt)
        reference = _outcome(wire.write_with_csv_module, frame, tmp_path / "reference.txt", fmt)
        assert fast == reference, (case, fmt, frame.to_dict("list"))


def _arrow_path_takes(frame: pd.DataFrame, fmt: WireFormat) -> bool:
    try:
        return wire._delimited_bytes(frame, fmt) is not None
    except UnicodeEncodeError:
        return True  # it refused a value: write_frame names it


def test_text_with_gaps_in_an_object_column_is_sanitised_and_checked(tmp_path: Path) -> None:
    # An object column (as a spreadsheet's cells can give) with a missing value: its tab is replaced as in
    # any text column, and a character outside Windows-1252 is named with its row and field.
    frame = pd.DataFrame({"RecordId": [1, 2], "Note": pd.Series([None, "a\tb"], dtype=object)})
    for write in (wire.write_frame, wire.write_with_csv_module):
        written = write(frame, Path("in.csv"), tmp_path / "upload.txt", WireFormat())
        assert written.read_bytes() == b"RecordId\tNote\r\n1\t\r\n2\ta b\r\n"
    bad = pd.DataFrame({"RecordId": [1, 2], "Note": pd.Series([None, "Łódź"], dtype=object)})
    for write in (wire.write_frame, wire.write_with_csv_module):
        with pytest.raises(InputError, match="row 2, field 'Note': character 'Ł'"):
            write(bad, Path("in.csv"), tmp_path / "upload.txt", WireFormat())


def test_columns_other_than_text_and_integers_are_written_by_the_csv_module(tmp_path: Path) -> None:
    frame = pd.DataFrame({"RecordId": [1], "Score": [1.5], "Mixed": pd.Series([5], dtype=object)})
    assert wire._delimited_bytes(frame, WireFormat()) is None
    written = wire.write_frame(frame, Path("in.csv"), tmp_path / "upload.txt", WireFormat())
    assert written.read_bytes() == b"RecordId\tScore\tMixed\r\n1\t1.5\t5\r\n"
