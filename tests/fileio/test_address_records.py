"""Reading customer address files: formats, encodings, header recognition, minimum input and rejections."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from fileio.address_service.records import AddressInput, AddressReading, read_address_file
from fileio.errors import InputError
from fileio.input_format import InputFormat
from fileio.rejected_rows import problem_lines, write_rejected
from tests.outputs import EXCEL, UNGUARDED, read_output_csv

GERMAN_HEADER = [
    "Kundennummer",
    "Firma",
    "Vorname",
    "Nachname",
    "c/o",
    "Strasse",
    "Hausnummer",
    "Postfach",
    "PLZ",
    "Ort",
]
GERMAN_ROWS = [
    ["00017", "", "Jürg", "Müller", "", "Bahnhofstrasse", "12", "", "3000", "Bern"],
    ["00018", "Bäckerei Zürcher AG", "", "", "", "Seestrasse", "7a", "", "8002", "Zürich"],
]


def write_text(
    path: Path, header: list[str], rows: list[list[str]], sep: str, encoding: str = "utf-8"
) -> Path:
    lines = [sep.join(header), *(sep.join(row) for row in rows)]
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode(encoding))
    return path


def assert_nothing_lost(result: AddressInput) -> None:
    assert len(result.records) + result.rejected_rows == result.input_rows
    assert set(result.records["RecordId"]).isdisjoint(set(result.rejected["row"]))


def test_german_headers_in_a_semicolon_csv(tmp_path: Path) -> None:
    result = read_address_file(write_text(tmp_path / "kunden.csv", GERMAN_HEADER, GERMAN_ROWS, ";"))
    assert result.address_columns == {
        "Company": "Firma",
        "Prename": "Vorname",
        "Name": "Nachname",
        "CoAddress": "c/o",
        "Streetname": "Strasse",
        "HouseNo": "Hausnummer",
        "ZIPCode": "PLZ",
        "TownName": "Ort",
        "PoBoxNo": "Postfach",
    }
    assert result.passthrough_columns == ["Kundennummer"]
    records = result.records
    assert list(records.columns) == [
        "RecordId",
        "Kundennummer",
        "Company",
        "Prename",
        "Name",
        "CoAddress",
        "Streetname",
        "HouseNo",
        "ZIPCode",
        "TownName",
        "PoBoxNo",
    ]
    assert records["RecordId"].tolist() == [1, 2]
    assert records["Kundennummer"].tolist() == ["00017", "00018"]  # leading zeros kept
    assert records.loc[0, "Name"] == "Müller"
    assert pd.isna(records.loc[0, "Company"])  # empty → missing
    assert records.loc[1, "Company"] == "Bäckerei Zürcher AG"  # company row without first name is accepted
    assert result.rejected.empty
    assert_nothing_lost(result)


def test_french_headers_in_a_comma_csv(tmp_path: Path) -> None:
    header = ["No client", "Entreprise", "Prénom", "Nom", "Rue", "Numéro", "NPA", "Localité"]
    rows = [["A-1", "", "Hélène", "Dupré", "Rue du Marché", "3", "1204", "Genève"]]
    result = read_address_file(write_text(tmp_path / "clients.csv", header, rows, ","))
    assert result.address_columns == {
        "Company": "Entreprise",
        "Prename": "Prénom",
        "Name": "Nom",
        "Streetname": "Rue",
        "HouseNo": "Numéro",
        "ZIPCode": "NPA",
        "TownName": "Localité",
    }
    assert result.records.loc[0, "TownName"] == "Genève"
    assert result.passthrough_columns == ["No client"]


def test_italian_headers_in_a_tab_separated_txt(tmp_path: Path) -> None:
    header = ["Cliente", "Ditta", "Nome", "Cognome", "Via", "Numero civico", "NAP", "Località", "Cantone"]
    rows = [["9", "", "Lucía", "Bernasconi", "Via Cantonale", "2", "6900", "Lugano", "TI"]]
    result = read_address_file(write_text(tmp_path / "clienti.txt", header, rows, "\t"))
    assert result.address_columns["Prename"] == "Nome"
    assert result.address_columns["Name"] == "Cognome"
    assert result.address_columns["HouseNo"] == "Numero civico"
    assert result.address_columns["Canton"] == "Cantone"
    assert result.records.loc[0, "TownName"] == "Lugano"


def test_in_names_and_case_insensitive_canonical_names(tmp_path: Path) -> None:
    header = [
        "ID",
        "prename_in",
        "NAME_IN",
        "StreetName_in",
        "houseno",
        "ZipCode_in",
        "TOWNNAME",
        "coAddress_in",
    ]
    rows = [["1", "Eva", "Meier", "Weg", "1", "4000", "Basel", "bei Huber"]]
    result = read_address_file(write_text(tmp_path / "in.csv", header, rows, "|"))
    assert result.address_columns == {
        "Prename": "prename_in",
        "Name": "NAME_IN",
        "CoAddress": "coAddress_in",
        "Streetname": "StreetName_in",
        "HouseNo": "houseno",
        "ZIPCode": "ZipCode_in",
        "TownName": "TOWNNAME",
    }
    other = read_address_file(
        write_text(
            tmp_path / "in2.csv",
            ["Name_in", "Prename_in", "Streetname_in", "HouseNo_in", "ZIPCode_in", "TownName_in"],
            [["A", "B", "C", "1", "3000", "Bern"]],
            ";",
        )
    )
    assert other.address_columns["Streetname"] == "Streetname_in"
    assert other.address_columns["ZIPCode"] == "ZIPCode_in"


def test_explicit_mapping_overrides_recognition(tmp_path: Path) -> None:
    header = ["Nr", "Vorname", "Nachname", "Adresse", "Hnr", "PLZ", "Wohnort", "Name"]
    rows = [["5", "Max", "Muster", "Dorfstrasse", "1", "3000", "Bern", "Max Muster"]]
    path = write_text(tmp_path / "map.csv", header, rows, ";")
    result = read_address_file(path, AddressReading(mapping={"adresse": "Streetname", "Nr": "", "Name": ""}))
    assert result.address_columns["Streetname"] == "Adresse"
    assert result.address_columns["Name"] == "Nachname"
    assert result.address_columns["HouseNo"] == "Hnr"
    assert result.passthrough_columns == ["Nr", "Name"]
    assert result.records.loc[0, "Name"] == "Muster"
    with pytest.raises(InputError, match="mapped column 'Telefon'"):
        read_address_file(path, AddressReading(mapping={"Telefon": "Name"}))
    with pytest.raises(InputError, match="'Nickname' for column 'Adresse' is not an address field"):
        read_address_file(path, AddressReading(mapping={"Adresse": "Nickname"}))


def test_canonical_name_beats_alias_and_the_loser_passes_through(tmp_path: Path) -> None:
    header = ["Nachname", "Name", "Vorname", "Strasse", "Hausnummer", "PLZ", "Ort"]
    rows = [["Alias", "Canonical", "X", "Weg", "1", "3000", "Bern"]]
    result = read_address_file(write_text(tmp_path / "dup.csv", header, rows, ";"))
    assert result.address_columns["Name"] == "Name"
    assert result.passthrough_columns == ["Nachname"]


def test_xlsx_input_keeps_text_and_reads_numbers_as_strings(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Adressen"
    sheet.append(GERMAN_HEADER)
    sheet.append(["00017", None, "Jürg", "Müller", None, "Bahnhofstrasse", 12, None, 3000, "Bern"])
    sheet.append([None] * len(GERMAN_HEADER))  # a blank row is not a record
    sheet.append(["00019", None, "Anna", "Keller", None, None, None, 4711, 3001, "Bern"])
    path = tmp_path / "kunden.xlsx"
    workbook.save(path)
    result = read_address_file(path, AddressReading(InputFormat(sheet="Adressen")))
    assert result.records["Kundennummer"].tolist() == ["00017", "00019"]
    assert result.records["ZIPCode"].tolist() == ["3000", "3001"]
    assert result.records["HouseNo"].tolist()[0] == "12"
    assert result.records["RecordId"].tolist() == [1, 3]
    assert result.records.loc[1, "PoBoxNo"] == "4711"  # a P.O. box row needs no street in batch mode
    assert result.input_rows == 2
    with pytest.raises(InputError, match="sheet 'Missing'"):
        read_address_file(path, AddressReading(InputFormat(sheet="Missing")))


def test_fixed_width_txt_with_and_without_header_line(tmp_path: Path) -> None:
    widths = [("Kdnr", 5), ("Vorname", 10), ("Name", 10), ("Strasse", 16), ("Nr", 4), ("PLZ", 4), ("Ort", 10)]
    data = [
        "00001Jürg      Müller    Bahnhofstrasse  12  3000Bern      ",
        "00002Anna      Keller    Seeweg          3a  8001Zürich    ",
    ]
    plain = tmp_path / "fixed.txt"
    plain.write_bytes("\r\n".join(data).encode("cp1252"))
    result = read_address_file(plain, AddressReading(InputFormat(fixed_widths=tuple(widths))))
    assert result.records["Kdnr"].tolist() == ["00001", "00002"]
    assert result.records["Name"].tolist() == ["Müller", "Keller"]
    assert result.records["HouseNo"].tolist() == ["12", "3a"]
    assert result.records["TownName"].tolist() == ["Bern", "Zürich"]
    headed = tmp_path / "fixed_header.txt"
    header = "".join(name.ljust(width) for name, width in widths)
    headed.write_bytes("\r\n".join([header, *data]).encode("utf-8"))
    again = read_address_file(headed, AddressReading(InputFormat(fixed_widths=tuple(widths))))
    assert again.records.drop(columns="RecordId").equals(result.records.drop(columns="RecordId"))
    assert again.records["RecordId"].tolist() == [1, 2]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252"])
def test_utf8_bom_and_windows_1252_files_are_detected(tmp_path: Path, encoding: str) -> None:
    header = ["Kundennummer", "Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort"]
    rows = [["1", "Jürg", "Häfliger", "Rue de l'Église", "1", "1700", "Fribourg"]]
    result = read_address_file(write_text(tmp_path / f"{encoding}.csv", header, rows, ";", encoding))
    assert result.passthrough_columns == ["Kundennummer"]  # no BOM glued to the first header
    assert result.records.loc[0, "Prename"] == "Jürg"
    assert result.records.loc[0, "Name"] == "Häfliger"
    assert result.records.loc[0, "Streetname"] == "Rue de l'Église"


def test_values_are_stripped_and_blank_rows_skipped(tmp_path: Path) -> None:
    header = ["Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort"]
    path = tmp_path / "blank.csv"
    path.write_text(
        ";".join(header) + "\n  Eva ; Meier ;Weg; 1 ;3000; Bern \n\n;;;;;\nAnna;Keller;Weg;2;3000;Bern\n"
    )
    result = read_address_file(path)
    assert result.records.loc[0, ["Prename", "Name", "HouseNo", "TownName"]].tolist() == [
        "Eva",
        "Meier",
        "1",
        "Bern",
    ]
    assert result.records["RecordId"].tolist() == [1, 4]
    assert result.input_rows == 2


def rejected_for(result: AddressInput, row: int) -> list[tuple[str, str]]:
    lines = result.rejected[result.rejected["row"] == row]
    return list(zip(lines["field"], lines["reason"], strict=True))


def test_every_rejection_reason_names_row_and_field(tmp_path: Path) -> None:
    header = ["Kdnr", "Firma", "Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort", "Land", "Notiz"]
    rows = [
        ["1", "", "Eva", "Meier", "Weg", "1", "3000", "Bern", "", ""],  # fine
        ["2", "", "", "Meier", "Weg", "1", "3000", "Bern", "", ""],  # no first name
        ["3", "", "Eva", "", "Weg", "1", "3000", "Bern", "", ""],  # no name
        ["4", "", "Eva", "Meier", "", "", "3000", "Bern", "", ""],  # no street, no box
        ["5", "", "Eva", "Meier", "Weg", "", "3000", "Bern", "", ""],  # no house number
        ["6", "", "Eva", "Meier", "Weg", "1", "", "Bern", "", ""],  # no postcode
        ["7", "", "Eva", "Meier", "Weg", "1", "3000", "", "", ""],  # no town
        ["8", "", "Eva", "Meier", "Weg", "1", "300", "Bern", "CH", ""],  # Swiss postcode not 4 digits
        ["9", "", "Eva", "Meier", "W" * 61, "1", "3000", "Bern", "", ""],  # street longer than 60
        ["10", "", "Eva", "Meier", "Weg", "1", "3000", "Bern", "", "x" * 451],  # customer field over 450
        ["11", "", "Łucja", "Meier", "Weg", "1", "3000", "Bern", "", ""],  # not in Windows-1252
        [
            "12",
            "",
            "Eva",
            "Meier",
            "Weg",
            "1",
            "12AB",
            "Amsterdam",
            "NL",
            "",
        ],  # foreign postcode: no 4-digit rule
        ["13", "", "", "", "Weg", "1", "3000", "Bern", "", ""],  # neither person nor company
    ]
    result = read_address_file(write_text(tmp_path / "bad.csv", header, rows, ";"))
    assert result.records["Kdnr"].tolist() == ["1", "12"]
    assert rejected_for(result, 2) == [("Vorname", "Prename missing (required unless Company is given)")]
    assert rejected_for(result, 3) == [("Nachname", "Name missing (required unless Company is given)")]
    assert rejected_for(result, 4) == [("Strasse", "Streetname (or a P.O. box) missing")]
    assert rejected_for(result, 5) == [("Hausnummer", "HouseNo missing")]
    assert rejected_for(result, 6) == [("PLZ", "ZIPCode missing (or PoBoxZIP for a P.O. box)")]
    assert rejected_for(result, 7) == [("Ort", "TownName missing")]
    assert rejected_for(result, 8) == [("PLZ", "Swiss postcode must be exactly 4 digits")]
    assert rejected_for(result, 9) == [("Strasse", "longer than 60 characters (61)")]
    assert rejected_for(result, 10) == [("Notiz", "longer than 450 characters (451)")]
    assert rejected_for(result, 11) == [("Vorname", "character 'Ł' (U+0141) cannot be written in cp1252")]
    assert [field for field, _ in rejected_for(result, 13)] == ["Nachname", "Vorname"]
    values = result.rejected.set_index("row")["value"]
    assert values[8] == "300"
    assert values[11] == "Łucja"
    assert list(result.rejected.columns) == ["row", "field", "value", "reason"]
    assert_nothing_lost(result)


def test_a_row_with_too_many_fields_is_rejected_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    path.write_text(
        "Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\nEva;Meier;Weg;1;3000;Bern\n"
        "Anna;Keller;Weg;2;3000;Bern;extra\nOtto;Kurz;Weg;3;3000\nIda;Lang;Weg;4;3000;Bern;\n"
    )
    result = read_address_file(path)
    assert result.records["Prename"].tolist() == ["Eva", "Ida"]  # an empty surplus field is harmless
    assert rejected_for(result, 2) == [("", "row has 7 fields, the header has 6")]
    assert rejected_for(result, 3) == [("Ort", "TownName missing")]  # a short row is padded, then checked
    assert_nothing_lost(result)


@pytest.mark.parametrize(("mode", "accepted"), [("batch", True), ("query", True), ("verification", False)])
def test_po_box_rows_depend_on_mode(tmp_path: Path, mode: str, accepted: bool) -> None:
    header = ["Vorname", "Nachname", "Strasse", "Hausnummer", "Postfach", "PLZ", "Ort"]
    rows = [["Eva", "Meier", "", "", "123", "3000", "Bern"]]
    result = read_address_file(write_text(tmp_path / "box.csv", header, rows, ";"), AddressReading(mode=mode))  # type: ignore[arg-type]
    assert (len(result.records) == 1) is accepted
    if not accepted:
        assert rejected_for(result, 1) == [("Strasse", "Streetname missing")]


@pytest.mark.parametrize("mode", ["batch", "query", "verification"])
def test_company_rows_need_no_person_in_any_mode(tmp_path: Path, mode: str) -> None:
    header = ["Firma", "Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort"]
    rows = [["Post CH AG", "", "", "Wankdorfallee", "4", "3030", "Bern"]]
    result = read_address_file(
        write_text(tmp_path / "firma.csv", header, rows, ";"), AddressReading(mode=mode)
    )  # type: ignore[arg-type]
    assert result.records["Company"].tolist() == ["Post CH AG"]


def test_po_box_row_may_use_the_po_box_postcode_and_town(tmp_path: Path) -> None:
    header = ["Vorname", "Nachname", "Postfachnummer", "Postfach PLZ", "Postfach Ort", "PLZ", "Ort"]
    rows = [["Eva", "Meier", "55", "3001", "Bern", "", ""], ["Eva", "Meier", "55", "301", "Bern", "", ""]]
    result = read_address_file(write_text(tmp_path / "pf.csv", header, rows, ";"))
    assert result.records["PoBoxZIP"].tolist() == ["3001"]
    assert rejected_for(result, 2) == [("Postfach PLZ", "Swiss postcode must be exactly 4 digits")]


def test_wire_encoding_decides_what_is_representable(tmp_path: Path) -> None:
    header = ["Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort"]
    path = write_text(tmp_path / "pl.csv", header, [["Łucja", "Nowak", "Weg", "1", "3000", "Bern"]], ";")
    assert read_address_file(path).records.empty
    assert len(read_address_file(path, wire_encoding="utf-8").records) == 1


def test_unusable_files_raise_input_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="missing.csv: file not found"):
        read_address_file(tmp_path / "missing.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="empty.csv: file is empty"):
        read_address_file(empty)
    headerless = write_text(
        tmp_path / "headerless.csv", ["Eva", "Meier", "Weg", "1", "3000", "Bern"], [], ";"
    )
    with pytest.raises(InputError, match="none of the address columns.*Name, Prename, Streetname") as caught:
        read_address_file(headerless)
    assert caught.value.path == headerless
    no_town = write_text(
        tmp_path / "no_town.csv",
        ["Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ"],
        [["Eva", "Meier", "Weg", "1", "3000"]],
        ";",
    )
    with pytest.raises(InputError, match="no_town.csv: missing address columns: TownName"):
        read_address_file(no_town)
    reserved = write_text(
        tmp_path / "reserved.csv",
        ["QSTAT", "Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort"],
        [],
        ";",
    )
    with pytest.raises(InputError, match="field 'QSTAT': column name is reserved"):
        read_address_file(reserved)
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"not a workbook")
    with pytest.raises(InputError, match="broken.xlsx: cannot be read as an Excel workbook"):
        read_address_file(broken)


def test_write_rejected(tmp_path: Path) -> None:
    header = ["Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort"]
    good = read_address_file(
        write_text(tmp_path / "good.csv", header, [["E", "M", "W", "1", "3000", "B"]], ";")
    )
    (tmp_path / "none.csv").write_text("from an earlier run")
    assert write_rejected(good.rejected_report, tmp_path / "none.csv", style=EXCEL) is None
    assert not (tmp_path / "none.csv").exists()  # no stale report beside new results
    bad = read_address_file(write_text(tmp_path / "bad.csv", header, [["É", "", "W", "1", "300", "B"]], ";"))
    written = write_rejected(bad.rejected_report, tmp_path / "out" / "rejected.csv", style=EXCEL)
    assert written == tmp_path / "out" / "rejected.csv"
    frame = read_output_csv(written, dtype=str, keep_default_na=False)
    assert frame.to_dict("records") == [
        {
            "Vorname": "É",
            "line": "2",
            "row": "1",
            "problems": "Nachname: Name missing (required unless Company is given); "
            "PLZ: Swiss postcode must be exactly 4 digits",
            "values": "PLZ: 300",
        },
    ]


@pytest.mark.parametrize(
    ("cell", "term", "number"),
    [
        ("Postfach 123", "Postfach", "123"),
        ("Case postale 45", "Case postale", "45"),
        ("PF 7", "PF", "7"),
        ("4711", None, "4711"),
    ],
)
def test_po_box_cell_with_term_and_number_is_split(
    tmp_path: Path, cell: str, term: str | None, number: str
) -> None:
    source = tmp_path / "pobox.csv"
    source.write_text(
        f"Firma;Strasse;Hausnummer;Postfach;PLZ;Ort\nMuster AG;Obernauerstrasse;3;{cell};6010;Kriens\n",
        encoding="utf-8",
    )
    result = read_address_file(source)
    assert result.rejected.empty
    record = result.records.iloc[0]
    assert record["PoBoxNo"] == number
    assert (record.get("PoBoxTerm") if "PoBoxTerm" in result.records else None) == term or (
        term is None and pd.isna(record.get("PoBoxTerm"))
    )


ADDRESS_HEADER = "Kdnr;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort"


def address_rows(count: int, start: int = 1) -> list[str]:
    return [f"{n};Eva;Meier;Weg;{n};3000;Bern" for n in range(start, start + count)]


def test_a_quote_never_closed_is_refused_naming_its_line(tmp_path: Path) -> None:
    """The quote on line 3 would make every later row part of one cell: none of them would be sent."""
    path = tmp_path / "quote.csv"
    rows = [*address_rows(1), '2;Eva;"Meier;Weg;2;3000;Bern', *address_rows(8, start=3)]
    path.write_text("\n".join([ADDRESS_HEADER, *rows]) + "\n", encoding="utf-8")
    expected = r"quote.csv, row 2, field 'Nachname': line 3: a quote opened here is never closed"
    with pytest.raises(InputError, match=expected) as caught:
        read_address_file(path)
    assert "look like whole rows" in str(caught.value)


def test_a_quote_closed_rows_later_is_refused(tmp_path: Path) -> None:
    """A stray quote closed by another stray quote further down swallows the rows between them."""
    path = tmp_path / "quote.csv"
    rows = [*address_rows(1), '2;Eva;"Meier;Weg;2;3000;Bern', *address_rows(2, start=3),
            '5;Anna;Keller;Weg "Nord";5;3000;Bern', *address_rows(3, start=6)]  # fmt: skip
    path.write_text("\n".join([ADDRESS_HEADER, *rows]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 3: a quote opened here is closed only on line 6"):
        read_address_file(path)


def test_a_quoted_cell_over_too_many_lines_is_refused(tmp_path: Path) -> None:
    note = "\n".join(f"Zeile {n}" for n in range(1, 12))
    path = tmp_path / "long.csv"
    path.write_text(f'{ADDRESS_HEADER};Notiz\n1;Eva;Meier;Weg;1;3000;Bern;"{note}"\n', encoding="utf-8")
    with pytest.raises(
        InputError,
        match="line 2: a quote opened here is closed only on line 12; the quoted cell holds 11 lines",
    ):
        read_address_file(path)


def test_line_breaks_inside_quoted_cells_are_kept_and_rows_counted(tmp_path: Path) -> None:
    path = tmp_path / "notes.csv"
    path.write_bytes(
        (
            f"{ADDRESS_HEADER};Notiz\r\n"
            '1;Eva;Meier;Weg;1;3000;Bern;"Hintereingang\r\nbei Huber; 2. Stock"\r\n'
            '2;Otto;"Kurz ""der Kleine""";Weg;2;3000;Bern;\r\n'
            "\r\n"
            '3;Ida;Lang;Weg;3;3000;Bern;"eins\r\nzwei\r\ndrei"\r\n'
        ).encode()
    )
    result = read_address_file(path)
    assert result.records["Kdnr"].tolist() == ["1", "2", "3"]
    assert result.records["RecordId"].tolist() == [1, 2, 4]
    assert result.records.loc[0, "Notiz"] == "Hintereingang\nbei Huber; 2. Stock"
    assert result.records.loc[1, "Name"] == 'Kurz "der Kleine"'
    assert result.input_rows == 3
    assert_nothing_lost(result)


def test_lines_that_do_not_add_up_to_rows_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should the parser ever drop a line, nothing is sent: the file's lines are counted on their own."""
    path = write_text(
        tmp_path / "lost.csv", ADDRESS_HEADER.split(";"), [r.split(";") for r in address_rows(3)], ";"
    )
    real = pd.read_csv

    def dropping_a_row(*args: object, **kwargs: object) -> pd.DataFrame:
        return real(*args, **kwargs).iloc[:-1]  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr("fileio.tables.pd.read_csv", dropping_a_row)
    with pytest.raises(InputError, match="3 lines after the header, but 2 rows were read .* 1 lines are not "
                       "accounted for; nothing is used"):  # fmt: skip
        read_address_file(path)


def test_rows_that_do_not_add_up_to_accepted_and_rejected_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check that loses track of a row would send it or drop it: the counts are compared before sending."""
    from fileio.address_service import records as module

    path = write_text(
        tmp_path / "x.csv", ADDRESS_HEADER.split(";"), [r.split(";") for r in address_rows(3)], ";"
    )
    monkeypatch.setattr(
        module,
        "row_problems",
        lambda rows, *args, **kwargs: [problem_lines(pd.Series([7]), "Ort", "", "x")],
    )
    with pytest.raises(
        InputError, match=r"3 data rows were read, but 3 accepted \+ 1 rejected \+ 0 empty = 4"
    ):
        read_address_file(path)


def test_a_utf8_file_with_some_windows_1252_lines_rejects_those_lines(tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    lines = [
        ADDRESS_HEADER.encode(),
        "1;Jürg;Müller;Weg;1;3000;Bern".encode(),
        "2;Jürg;Müller;Weg;2;3000;Bern".encode("cp1252"),
        "3;René;Gärtner;Weg;3;3000;Zürich".encode(),
        "4;Zoë;Bühler;Weg;4;3000;Bern".encode(),
    ]
    path.write_bytes(b"\r\n".join(lines) + b"\r\n")
    result = read_address_file(path)
    assert result.records["Name"].tolist() == ["Müller", "Gärtner", "Bühler"]  # UTF-8, not "MÃ¼ller"
    assert result.records["TownName"].tolist() == ["Bern", "Zürich", "Bern"]
    assert rejected_for(result, 2) == [
        ("", "not valid UTF-8 at byte 4 of line 3 (0xFC); the file mixes encodings (most of it is UTF-8)")
    ]
    assert_nothing_lost(result)
    written = write_rejected(result.rejected_report, tmp_path / "rejected.csv", style=EXCEL)
    assert written is not None
    report = read_output_csv(written, dtype=str, keep_default_na=False)
    assert report["row"].tolist() == ["2"] and report["line"].tolist() == ["3"]
    assert report.loc[0, "problems"].startswith("not valid UTF-8")


def test_a_windows_1252_file_with_a_utf8_line_rejects_that_line(tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    lines = [
        ADDRESS_HEADER.encode(),
        "1;Jürg;Müller;Weg;1;3000;Bern".encode("cp1252"),
        "2;Jürg;Müller;Weg;2;3000;Bern".encode(),
        "3;René;Gärtner;Weg;3;3000;Zürich".encode("cp1252"),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = read_address_file(path)
    assert result.records["Name"].tolist() == ["Müller", "Gärtner"]
    assert rejected_for(result, 2) == [
        ("", "line 3 is UTF-8 ('ü') in a file that is otherwise Windows-1252; the file mixes encodings")
    ]
    assert_nothing_lost(result)


def test_a_bad_line_inside_a_quoted_cell_rejects_its_row(tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    path.write_bytes(
        f'{ADDRESS_HEADER};Notiz\n1;Jürg;Müller;Weg;1;3000;Bern;"a\nb"\n'.encode()
        + '2;Eva;Meier;Weg;2;3000;Bern;"erste\nzweite Zeile: Straße"\n'.encode()
        + "3;Jürg;Müller;Weg;3;3000;Bern;\n".encode("cp1252")
        + "4;Zoë;Bühler;Weg;4;3000;Bern;\n".encode()
    )
    result = read_address_file(path)
    assert result.records["RecordId"].tolist() == [1, 2, 4]
    assert [row for row in result.rejected["row"]] == [3]
    assert "of line 6 " in result.rejected.loc[0, "reason"]


def test_a_header_in_another_encoding_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "header.csv"
    path.write_bytes("Kdnr;Vorname;Nachname;Straße;Hausnummer;PLZ;Ort\n".encode("cp1252")
                     + "1;Jürg;Müller;Weg;1;3000;Bern\n".encode() * 3)  # fmt: skip
    with pytest.raises(InputError, match=r"line 1 \(the header\): not valid UTF-8"):
        read_address_file(path)


def test_control_characters_reject_the_cell_that_holds_them(tmp_path: Path) -> None:
    path = tmp_path / "controls.csv"
    path.write_bytes(
        (
            f"{ADDRESS_HEADER};Notiz\n"
            "1;Eva;Meier;Weg;1;3000;Bern;ok\n"
            "2;Eva;Mei\x00er;Weg;2;3000;Bern;\n"
            "3;Eva;Meier;Weg\x7f;3;3000;Bern;\x1b[31m\n"
            '4;Eva;Meier;Weg;4;3000;Bern;"Tab\tund\nZeilenumbruch"\n'
            "5;E\x0bva;Meier;Weg;5;3000;Bern;\n"
        ).encode()
    )
    result = read_address_file(path)
    assert result.records["Kdnr"].tolist() == ["1", "4"]  # tab and line break are no control characters here
    assert rejected_for(result, 2) == [("Nachname", "control character U+0000 (NUL) in the value")]
    assert rejected_for(result, 3) == [
        ("Strasse", "control character U+007F (DEL) in the value"),
        ("Notiz", "control character U+001B (ESC) in the value"),
    ]
    assert rejected_for(result, 5) == [("Vorname", "control character U+000B (VT) in the value")]
    values = dict(zip(result.rejected["field"], result.rejected["value"], strict=True))
    assert values["Nachname"] == "Mei\\x00er"  # the report shows it, and holds no control character itself
    assert values["Notiz"] == "\\x1b[31m"
    assert_nothing_lost(result)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("brief.docx", b"PK\x03\x04", r"unsupported file type: extension '\.docx' \(a Word document\)"),
        ("scan.pdf", b"%PDF-1.7\n", r"unsupported file type: extension '\.pdf' \(a PDF document\)"),
        ("archiv.zip", b"PK\x03\x04", r"extension '\.zip' \(a ZIP archive\)"),
        ("foto.png", b"\x89PNG\r\n\x1a\n", r"extension '\.png' \(an image\)"),
        (
            "alt.xls",
            b"\xd0\xcf\x11\xe0",
            r"extension '\.xls' \(an Excel 97-2003 workbook\); supported are \.csv",
        ),
        ("kunden", b"Vorname;Name\n", "unsupported file type: extension none"),
    ],
)
def test_unsupported_file_types_are_refused_by_extension(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content + b"x" * 100)
    with pytest.raises(InputError, match=message):
        read_address_file(path)


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda p: _zip(p, {"word/document.xml": b"<w/>"}),
            r"is not a text table: the file is a Word document",
        ),
        (
            lambda p: _zip(p, {"xl/workbook.xml": b"<x/>"}),
            r"the file is an Excel workbook; save it as \.xlsx",
        ),
        (lambda p: _zip(p, {"a.txt": b"x"}), r"the file is a ZIP archive"),
        (lambda p: p.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj"), r"the file is a PDF document"),
        (lambda p: p.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF"), r"the file is a JPEG image"),
        (
            lambda p: p.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500)),
            r"an Office 97-2003 file",
        ),
        (
            lambda p: p.write_bytes("Vorname;Name\nEva;Meier\n".encode("utf-16-le")),
            r"NUL bytes .* UTF-16 text "
            r"without a byte-order mark",
        ),
        (
            lambda p: p.write_bytes(bytes(range(256)) * 4),
            r"NUL bytes in the first 1,024 bytes — a binary file",
        ),
    ],
)
def test_a_csv_whose_content_is_something_else_is_refused(tmp_path: Path, make: object, message: str) -> None:
    path = tmp_path / "kunden.csv"
    make(path)  # type: ignore[operator]
    with pytest.raises(InputError, match=message):
        read_address_file(path)


def test_utf16_with_a_byte_order_mark_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "unicode.txt"
    text = "Vorname\tNachname\tStrasse\tHausnummer\tPLZ\tOrt\r\nJürg\tMüller\tWeg\t1\t3000\tBern\r\n"
    path.write_bytes(text.encode("utf-16"))  # Excel's "Unicode text": BOM, UTF-16 LE, tabs
    result = read_address_file(path)
    assert result.records["Name"].tolist() == ["Müller"]


def test_a_workbook_name_on_something_else_is_refused(tmp_path: Path) -> None:
    docx = _zip(tmp_path / "kunden.xlsx", {"word/document.xml": b"<w/>"})
    with pytest.raises(InputError, match="cannot be read as an Excel workbook: the file is a Word document"):
        read_address_file(docx)
    encrypted = tmp_path / "geheim.xlsx"
    encrypted.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600))
    with pytest.raises(InputError, match="an Office 97-2003 file .* or a password-protected Office file"):
        read_address_file(encrypted)
    csv = tmp_path / "liste.xlsx"
    csv.write_text("Vorname;Name\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"the file is text \(a CSV file named \.xlsx\?\)"):
        read_address_file(csv)


def test_a_single_nul_in_a_data_row_rejects_the_row_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "nul.csv"
    path.write_bytes(
        ("\n".join([ADDRESS_HEADER, *address_rows(20)]) + "\n")
        .replace("Meier;Weg;5", "Me\x00ier;Weg;5")
        .encode()
    )
    result = read_address_file(path)
    assert result.rejected["row"].tolist() == [5]
    assert len(result.records) == 19


def test_write_rejected_neutralises_the_inputs_formulas_unless_told_not_to(tmp_path: Path) -> None:
    path = tmp_path / "evil.csv"
    path.write_bytes(
        b"Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort;+Info\n"
        b"=Eva;Meier;Weg;1;=1+1;Bern;\n"
        b"Eva;Meier;Weg;2;3000;Bern;x\x00y\n"
        b"Eva;Meier;Weg;3;-300;Bern;\n"
    )
    result = read_address_file(path)
    guarded = write_rejected(result.rejected_report, tmp_path / "guarded.csv", style=EXCEL)
    plain = write_rejected(result.rejected_report, tmp_path / "plain.csv", style=UNGUARDED)
    assert guarded is not None and plain is not None
    columns = ["Vorname", "problems", "values"]
    assert read_output_csv(guarded, dtype=str, keep_default_na=False)[columns].values.tolist() == [
        ["'=Eva", "PLZ: Swiss postcode must be exactly 4 digits", "PLZ: =1+1"],
        ["Eva", "'+Info: control character U+0000 (NUL) in the value", "'+Info: x\\x00y"],
        ["Eva", "PLZ: Swiss postcode must be exactly 4 digits", "PLZ: -300"],
    ]
    assert read_output_csv(plain, dtype=str, keep_default_na=False)[columns].values.tolist() == [
        ["=Eva", "PLZ: Swiss postcode must be exactly 4 digits", "PLZ: =1+1"],
        ["Eva", "+Info: control character U+0000 (NUL) in the value", "+Info: x\\x00y"],
        ["Eva", "PLZ: Swiss postcode must be exactly 4 digits", "PLZ: -300"],
    ]


def test_the_rejected_rows_are_named_by_a_customer_number_column_wherever_it_is(tmp_path: Path) -> None:
    header = ["Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort", "KdNr"]
    rows = [["Eva", "Meier", "Weg", "1", "3000", "Bern", "K-1"], ["Eva", "", "Weg", "2", "30", "Bern", "K-2"]]
    result = read_address_file(write_text(tmp_path / "kunden.csv", header, rows, ";"))
    assert result.rejected_report.columns.tolist() == ["KdNr", "line", "row", "problems", "values"]
    assert result.rejected_report[["KdNr", "line", "row"]].values.tolist() == [["K-2", 3, 2]]


def test_a_profiles_record_id_names_the_rejected_rows(tmp_path: Path) -> None:
    header = ["Vorname", "Kundennummer", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort", "KDNR"]
    rows = [["Eva", "7", "", "Weg", "1", "3000", "Bern", "K-1"]]
    path = write_text(tmp_path / "kunden.csv", header, rows, ";")
    assert read_address_file(path).rejected_report.columns[0] == "Kundennummer"
    named = read_address_file(path, id_columns=("KDNR (QSTAT)", "KDNR"))
    assert named.rejected_report[["KDNR", "line"]].values.tolist() == [["K-1", 2]]


def test_a_missing_first_name_column_is_named_with_what_was_found_and_how_to_map(tmp_path: Path) -> None:
    path = tmp_path / "names.csv"
    path.write_text(
        "KundenNr;Name;Strasse;PLZ;Ort\n1;Muster;Bahnhofstrasse 1;6010;Kriens\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as refused:
        read_address_file(path)
    message = str(refused.value)
    assert "Prename (a first-name column; found Name as 'Name') or Company" in message
    assert "['KundenNr', 'Name', 'Strasse', 'PLZ', 'Ort']" in message and "--map" in message


def _workbook(path: Path, sheets: dict[str, list[list[str]]]) -> Path:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


ADDRESSES = [
    ["Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort"],
    ["Hans", "Muster", "Lindenstrasse", "12", "6010", "Kriens"],
]
NOTES = [["Notiz", "Datum"], ["Export vom CRM", "2026-11-01"]]


def test_the_only_worksheet_with_address_columns_is_read_and_named(tmp_path: Path) -> None:
    path = _workbook(tmp_path / "export.xlsx", {"Info": NOTES, "Adressen": ADDRESSES})
    result = read_address_file(path)
    assert len(result.records) == 1
    assert (
        result.sheet_note is not None and "'Adressen'" in result.sheet_note and "'Info'" in result.sheet_note
    )


def test_several_or_no_worksheets_with_address_columns_are_listed(tmp_path: Path) -> None:
    several = _workbook(tmp_path / "two.xlsx", {"Info": NOTES, "Kunden": ADDRESSES, "Lieferanten": ADDRESSES})
    with pytest.raises(InputError) as refused:
        read_address_file(several)
    message = str(refused.value)
    assert "'Info', 'Kunden', 'Lieferanten'" in message and "--sheet" in message
    assert "'Kunden', 'Lieferanten' have them" in message
    none = _workbook(tmp_path / "none.xlsx", {"Info": NOTES, "Mehr": NOTES})
    with pytest.raises(InputError, match="none has them"):
        read_address_file(none)


def test_a_worksheet_is_named_in_any_case_or_by_its_position(tmp_path: Path) -> None:
    path = _workbook(tmp_path / "export.xlsx", {"Info": NOTES, "Adressen": ADDRESSES})
    assert len(read_address_file(path, AddressReading(InputFormat(sheet="adressen"))).records) == 1
    assert len(read_address_file(path, AddressReading(InputFormat(sheet="2"))).records) == 1
    with pytest.raises(InputError) as refused:
        read_address_file(path, AddressReading(InputFormat(sheet="Kunden")))
    assert "no worksheet 'Kunden'; the workbook's worksheets are 'Info', 'Adressen'" in str(refused.value)


def test_the_reading_s_format_is_used_instead_of_detection(tmp_path: Path) -> None:
    """A DOS code page file: detected, its "ü" (0x81) is no Windows-1252 character; named, it is read."""
    header = ["Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort"]
    path = write_text(
        tmp_path / "dos.txt", header, [["Jürg", "Müller", "Weg", "1", "3000", "Bern"]], "|", "cp850"
    )
    reading = AddressReading(InputFormat(delimiter="|", encoding="cp850"))
    result = read_address_file(path, reading)
    assert result.records.loc[0, "Prename"] == "Jürg"
    assert result.records.loc[0, "Name"] == "Müller"
    assert result.layout is not None and result.layout.encoding == "cp850"
    with pytest.raises(InputError, match="cannot be decoded as Windows-1252"):
        read_address_file(path)
