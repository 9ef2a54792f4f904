"""Reading only a table's header and first rows: the header the whole read finds, whatever the file's size."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from fileio.errors import InputError
from fileio.tables import HEAD_BYTES, read_head, read_table

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    "name", ["address-batch.csv", "address-batch.xlsx", "pickup-users.csv", "statistics.csv"]
)
def test_the_header_is_the_one_the_whole_read_finds(name: str) -> None:
    head = read_head(EXAMPLES / name)
    assert head.headers == [str(column) for column in read_table(EXAMPLES / name).frame.columns]
    assert head.has_rows


@pytest.mark.parametrize(
    ("content", "headers", "has_rows"),
    [
        (b"Name;Ort\n", ["Name", "Ort"], False),
        (b"Name;Ort\n;\n\n  \n", ["Name", "Ort"], False),
        (b"Name;Ort\n\n;Kriens\n", ["Name", "Ort"], True),
        (b'"Name;zwei";Ort;\nA;B;\n', ["Name;zwei", "Ort", "Unnamed: 3"], True),
        ("\ufeffStraße,Ort\r\nA,B\r\n".encode(), ["Straße", "Ort"], True),
        ("Straße\tOrt\nA\tB\n".encode("cp1252"), ["Straße", "Ort"], True),
        ("Name;Ort\nA;B\n".encode("utf-16"), ["Name", "Ort"], True),
    ],
)
def test_header_and_rows_of_text_files(
    tmp_path: Path, content: bytes, headers: list[str], has_rows: bool
) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    assert read_head(path).headers == headers
    assert read_head(path).has_rows is has_rows


def test_a_large_file_is_judged_by_its_beginning(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    row = "Hans;Muster;Lindenstrasse;12;6010;Kriens\n"
    path.write_text("Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n" + row * (2 * HEAD_BYTES // len(row)))
    head = read_head(path)
    assert head.headers[0] == "Vorname" and head.has_rows


def test_blank_lines_beyond_what_is_read_are_not_taken_for_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "sparse.csv"
    path.write_text("Name;Ort\n" + "\n" * (HEAD_BYTES + 10) + "Muster;Kriens\n")
    assert read_head(path).has_rows


def test_fixed_width_names_are_the_header(tmp_path: Path) -> None:
    widths = (("Name", 6), ("Ort", 6))
    path = tmp_path / "fixed.txt"
    path.write_text("Name  Ort   \n")
    assert read_head(path, fixed_widths=widths) == read_head(path, fixed_widths=widths)
    assert read_head(path, fixed_widths=widths).headers == ["Name", "Ort"]
    assert not read_head(path, fixed_widths=widths).has_rows  # only the repeated names
    path.write_text("Name  Ort   \nMusterKriens\n")
    assert read_head(path, fixed_widths=widths).has_rows


def test_an_empty_sheet_and_a_missing_sheet_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "w.xlsx"
    with pd.ExcelWriter(path) as writer:
        pd.DataFrame({"Name": [], "Ort": []}).to_excel(writer, sheet_name="Adressen", index=False)
        pd.DataFrame().to_excel(writer, sheet_name="Leer", index=False)
    assert read_head(path).headers == ["Name", "Ort"] and not read_head(path).has_rows
    with pytest.raises(InputError, match="is empty: no header row"):
        read_head(path, sheet="Leer")
    with pytest.raises(InputError, match="sheet 'Fehlt'"):
        read_head(path, sheet="Fehlt")


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("empty.csv", b"", "file is empty: no header row"),
        ("blank.csv", b"\n \n", "file is empty: no header row"),
        ("scan.csv", b"%PDF-1.4\n", "the file is a PDF document"),
        ("data.json", b"{}", "unsupported file type"),
        (
            "mixed.csv",
            "Straße;Ort\nA;B\n".encode("cp1252") + "Zürich;C\n".encode() * 3,
            "line 1 (the header)",
        ),
    ],
)
def test_files_refused_as_a_whole(tmp_path: Path, name: str, content: bytes, problem: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=re.escape(problem)):
        read_head(path)
    with pytest.raises(InputError, match=re.escape(problem)):
        read_table(path)


def test_a_missing_file_and_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_head(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="is a directory"):
        read_head(tmp_path)
