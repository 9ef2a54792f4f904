"""Turning a batch download into results: a download that is no answer to the upload fails the step."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tasks.address_service.steps import PreparedInput, build_results, prepare_input
from tasks.errors import ResultFileError


@pytest.fixture
def prepared(tmp_path: Path) -> PreparedInput:
    source = tmp_path / "kunden.csv"
    source.write_text(
        "Kundennummer;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n"
        "007;Jürg;Müller;Bahnhofstr.;12;3000;Bern\n008;Anna;Keller;Seeweg;3;8001;Zürich\n",
        encoding="utf-8",
    )
    return prepare_input.fn(source, tmp_path / "out")


def test_results_are_built_from_a_zip_under_our_names(prepared: PreparedInput, tmp_path: Path) -> None:
    download = tmp_path / "out" / "download" / "output.bin"
    download.parent.mkdir(parents=True)
    with zipfile.ZipFile(download, "w") as bundle:
        bundle.writestr("output.bin", "RecordId\tQSTAT\r\n1\t1\r\n2\t51\r\n")
    results = build_results.fn(prepared, download, tmp_path / "out")
    assert results.rows == 2 and results.qstat_counts() == {"1": 1, "51": 1}
    assert zipfile.is_zipfile(download)


def test_a_result_for_other_records_fails_instead_of_giving_empty_results(
    prepared: PreparedInput, tmp_path: Path
) -> None:
    download = tmp_path / "output.bin"
    download.write_bytes(b"RecordId\tQSTAT\r\n901\t1\r\n902\t1\r\n")
    with pytest.raises(ResultFileError, match="no result row matches the uploaded record ids"):
        build_results.fn(prepared, download, tmp_path / "out")
    assert not (tmp_path / "out" / "results.csv").exists()


def test_a_zip_bomb_fails_the_step(prepared: PreparedInput, tmp_path: Path) -> None:
    download = tmp_path / "output.bin"
    with zipfile.ZipFile(download, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("result.txt", b"RecordId\tQSTAT\r\n" + b"\t" * (8 << 20))
    with pytest.raises(ResultFileError, match="ZIP bomb"):
        build_results.fn(prepared, download, tmp_path / "out", max_ratio=50)
    assert not (tmp_path / "out" / "download").exists() or not any((tmp_path / "out" / "download").iterdir())
