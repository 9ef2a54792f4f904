"""Turning a batch download into results: a download that is no answer to the upload fails the step; the
CSV files are written in the style the settings give (dialect and formula guard)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError

from fileio.errors import ResultFileError
from fileio.reports import CsvStyle
from runtime.settings import Settings
from tasks.address_service.batch import DownloadLimits
from tasks.address_service.steps import (
    PreparedInput,
    ResultOptions,
    build_address_query_results,
    build_address_results,
    prepare_address_input,
)
from tests.outputs import read_output_csv


@pytest.fixture
def prepared(tmp_path: Path) -> PreparedInput:
    source = tmp_path / "kunden.csv"
    source.write_text(
        "Kundennummer;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n"
        "007;Jürg;Müller;Bahnhofstr.;12;3000;Bern\n008;Anna;Keller;Seeweg;3;8001;Zürich\n",
        encoding="utf-8",
    )
    return prepare_address_input(source, tmp_path / "out")


def test_results_are_built_from_a_zip_under_our_names(prepared: PreparedInput, tmp_path: Path) -> None:
    download = tmp_path / "out" / "download" / "output.bin"
    download.parent.mkdir(parents=True)
    with zipfile.ZipFile(download, "w") as bundle:
        bundle.writestr("output.bin", "RecordId\tQSTAT\r\n1\t1\r\n2\t51\r\n")
    results = build_address_results(prepared, download, tmp_path / "out")
    assert results.rows == 2 and results.qstat_counts() == {"1": 1, "51": 1}
    assert zipfile.is_zipfile(download)


def test_the_results_draw_the_qstat_classes_beside_the_summary(
    prepared: PreparedInput, tmp_path: Path
) -> None:
    download = tmp_path / "output.bin"
    download.write_bytes(b"RecordId\tQSTAT\r\n1\t1\r\n2\t51\r\n")
    results = build_address_results(prepared, download, tmp_path / "out")
    picture = tmp_path / "out" / "qstat.png"
    assert results.picture == picture and picture in results.files
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = results.markdown("Address batch kunden.csv", rejected_rows=0)
    section = text.split("## QSTAT classes\n\n", 1)[1]
    assert section.startswith("![QSTAT classes](qstat.png)\n\n| QSTAT class | Rows | Share | |")
    assert "| 1 Person hit | 1 | 50.0 % | " + "█" * 30 + " |" in section
    assert "| 51 Address unknown | 1 | 50.0 % | " + "█" * 30 + " |" in section
    assert "| 4 Relocation hit | 0 | 0.0 % |  |" in section


def test_a_result_for_other_records_fails_instead_of_giving_empty_results(
    prepared: PreparedInput, tmp_path: Path
) -> None:
    download = tmp_path / "output.bin"
    download.write_bytes(b"RecordId\tQSTAT\r\n901\t1\r\n902\t1\r\n")
    with pytest.raises(ResultFileError, match="no result row matches the uploaded record ids"):
        build_address_results(prepared, download, tmp_path / "out")
    assert not (tmp_path / "out" / "results.csv").exists()


def test_a_zip_bomb_fails_the_step(prepared: PreparedInput, tmp_path: Path) -> None:
    download = tmp_path / "output.bin"
    with zipfile.ZipFile(download, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("result.txt", b"RecordId\tQSTAT\r\n" + b"\t" * (8 << 20))
    with pytest.raises(ResultFileError, match="ZIP bomb"):
        build_address_results(
            prepared, download, tmp_path / "out", limits=DownloadLimits(max_bytes=1 << 30, zip_max_ratio=50)
        )
    assert not (tmp_path / "out" / "download").exists() or not any((tmp_path / "out" / "download").iterdir())


def test_the_formula_guard_and_the_dialect_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None).csv_style == CsvStyle(guard=True, dialect="excel")  # type: ignore[call-arg]
    monkeypatch.setenv("POSTFLOWS_CSV_FORMULA_GUARD", "false")
    monkeypatch.setenv("POSTFLOWS_CSV_DIALECT", "rfc4180")
    assert Settings(_env_file=None).csv_style == CsvStyle(guard=False, dialect="rfc4180")  # type: ignore[call-arg]
    monkeypatch.setenv("POSTFLOWS_CSV_DIALECT", "tsv")
    with pytest.raises(ValidationError, match="csv_dialect"):
        Settings(_env_file=None)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("style", "expected", "start"),
    [
        (CsvStyle(guard=True, dialect="excel"), "'=1+1", b"\xef\xbb\xbfKundennummer;line;"),
        (CsvStyle(guard=False, dialect="rfc4180"), "=1+1", b"Kundennummer,line,"),
    ],
)
def test_the_steps_write_every_csv_in_the_style_given(
    tmp_path: Path, style: CsvStyle, expected: str, start: bytes
) -> None:
    source = tmp_path / "kunden.csv"
    source.write_text(
        "Kundennummer;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n"
        "=1+1;Jürg;Müller;Bahnhofstr.;12;3000;Bern\n=1+1;Anna;Keller;Seeweg;3;=1+1;Zürich\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    prepared = prepare_address_input(source, out, csv_style=style)
    rejected = read_output_csv(out / "rejected.csv", dtype=str, keep_default_na=False)
    assert rejected[["Kundennummer", "values"]].values.tolist() == [[expected, "PLZ: =1+1"]]
    download = tmp_path / "output.bin"
    download.write_bytes(b"RecordId\tQSTAT\tName\r\n1\t1\t=1+1\r\n")
    build_address_results(prepared, download, out, options=ResultOptions(csv_style=style))
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert results.loc[0, ["Kundennummer", "Nachname (Post)"]].tolist() == [expected, expected]
    answers = pd.DataFrame({"RecordId": [1], "QSTAT": ["1"], "Name": ["=1+1"]})
    build_address_query_results(prepared, answers, tmp_path / "query", options=ResultOptions(csv_style=style))
    queried = read_output_csv(tmp_path / "query" / "results.csv", dtype=str, keep_default_na=False)
    assert queried.loc[0, ["Kundennummer", "Nachname (Post)"]].tolist() == [expected, expected]
    assert (out / "rejected.csv").read_bytes().startswith(start)
    for path in (out / "results.csv", tmp_path / "query" / "results.csv"):
        assert path.read_bytes().startswith(start)


def test_duplicates_are_counted_from_double_dstat_and_said_in_the_summary(
    prepared: PreparedInput, tmp_path: Path
) -> None:
    download = tmp_path / "output.bin"
    download.write_bytes(
        b"RecordId\tQSTAT\tDouble_DoubleGroupNo\tDouble_DSTAT\r\n1\t1\t7\tK\r\n2\t1\t7\tF\r\n"
    )
    results = build_address_results(prepared, download, tmp_path / "out")
    assert results.duplicates == {"originals": 1, "duplicates": 1, "groups": 1}
    text = results.markdown("Address batch kunden.csv", rejected_rows=0)
    assert "- duplicates (Double_DSTAT): 1 originals (K), 1 duplicates (F), in 1 groups\n" in text
    assert "Original (header duplicate)" not in text  # no QSTAT K or F: no class rows of 0
