"""A downloaded result or moves file over a limit on its shape is never padded or parsed: it fails as a typed
``ResultUnreadable`` naming the file, the limit and its setting, and the download stays as it came."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from fileio.address_service.moves_file import read_moves_file
from fileio.address_service.result_file import read_result_file
from fileio.errors import ResultFileError, ResultUnreadable
from fileio.limits import TableLimits
from tasks.address_service.steps import PreparedInput, build_address_results, prepare_address_input
from tests.peak_memory import run_measured

HEADER = "RecordId\tQSTAT\tShortReport\tTotalScore"


def wide_result(path: Path, *, rows: int = 1000, tabs: int = 100_000) -> Path:
    """``rows`` short result rows, then one row of ``tabs`` tabs: 110 KB that once took 8 GB."""
    lines = [HEADER, *(f"{number}\t1\t1\t100.00" for number in range(1, rows + 1)), "\t" * tabs]
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp1252"))
    return path


@pytest.fixture
def prepared(tmp_path: Path) -> PreparedInput:
    source = tmp_path / "kunden.csv"
    source.write_text(
        "Kundennummer;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n"
        "007;Jürg;Müller;Bahnhofstr.;12;3000;Bern\n008;Anna;Keller;Seeweg;3;8001;Zürich\n",
        encoding="utf-8",
    )
    return prepare_address_input(source, tmp_path / "out")


def test_a_row_of_100000_tabs_among_1000_short_rows_is_refused_by_the_columns_limit(tmp_path: Path) -> None:
    path = wide_result(tmp_path / "result.txt")
    with pytest.raises(ResultUnreadable) as refused:
        read_result_file(path)
    error = refused.value
    assert isinstance(error, ResultFileError) and error.exit_code == 1
    assert error.path == path
    assert error.problem == (
        "line 1,002 has 100,001 columns, more than the limit of 1,000 columns per row "
        "(POSTFLOWS_TABLE_MAX_COLUMNS); nothing was read"
    )
    assert (error.setting, error.limit) == ("POSTFLOWS_TABLE_MAX_COLUMNS", 1000)


def test_the_same_file_is_read_under_a_raised_limit(tmp_path: Path) -> None:
    path = wide_result(tmp_path / "result.txt", rows=3, tabs=1500)
    frame = read_result_file(path, limits=TableLimits(max_columns=1501))
    assert frame.shape == (4, 1501)


_READ_RESULT = """
import sys
from pathlib import Path
from fileio.address_service.result_file import read_result_file
from fileio.errors import ResultUnreadable
try:
    read_result_file(Path(sys.argv[1]))
except ResultUnreadable as error:
    print(error.setting)
"""


def test_the_wide_row_is_refused_with_little_memory(tmp_path: Path) -> None:
    measured = run_measured(_READ_RESULT, str(wide_result(tmp_path / "result.txt")))
    assert measured.code == 0, measured.stderr
    assert measured.stdout.strip() == "POSTFLOWS_TABLE_MAX_COLUMNS"
    assert measured.peak_mib < 500, measured


def test_building_results_from_a_wide_download_leaves_it_as_it_came(
    prepared: PreparedInput, tmp_path: Path
) -> None:
    (tmp_path / "out" / "download").mkdir(parents=True)
    download = wide_result(tmp_path / "out" / "download" / "output.bin")
    before = download.read_bytes()
    with pytest.raises(ResultUnreadable, match=r"POSTFLOWS_TABLE_MAX_COLUMNS"):
        build_address_results(prepared, download, tmp_path / "out")
    assert download.read_bytes() == before
    assert not (tmp_path / "out" / "results.csv").exists()


def test_long_lines_and_many_lines_of_a_result_are_refused(tmp_path: Path) -> None:
    long = tmp_path / "long.txt"
    long.write_bytes(f"{HEADER}\r\n1\t1\t{'x' * 5000}\t100\r\n".encode())
    with pytest.raises(ResultUnreadable, match=r"line 2 is longer than the limit of 4,096 bytes per line"):
        read_result_file(long, limits=TableLimits(max_line_bytes=4096))
    many = wide_result(tmp_path / "many.txt", rows=20, tabs=3)
    with pytest.raises(ResultUnreadable, match=r"21 lines after the header, more than the limit of 20 rows"):
        read_result_file(many, limits=TableLimits(max_rows=20))


def test_a_header_line_over_the_limit_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "header.txt"
    path.write_bytes(b"RecordId" + b"x" * 10_000 + b"\r\n1\r\n")
    with pytest.raises(ResultUnreadable, match=r"line 1 is longer than the limit of 1,000 bytes"):
        read_result_file(path, limits=TableLimits(max_line_bytes=1000))


def test_a_moves_file_has_the_same_limits(tmp_path: Path) -> None:
    path = tmp_path / "moves.txt"
    path.write_text("Name;PLZ\nMuster;3000\n" + ";" * 30 + "x\n", encoding="utf-8")
    with pytest.raises(ResultUnreadable, match=r"31 columns, more than the limit of 10 columns per row"):
        read_moves_file(path, limits=TableLimits(max_columns=10))
    with pytest.raises(ResultUnreadable, match=r"2 lines after the header, more than the limit of 1 rows"):
        read_moves_file(path, limits=TableLimits(max_rows=1))
    assert len(read_moves_file(path, limits=TableLimits(max_columns=31))) == 2


def test_the_refusal_keeps_what_a_rerun_needs_and_survives_pickling(tmp_path: Path) -> None:
    error = ResultUnreadable("line 3 has 9 columns", path=tmp_path / "r.txt", setting="S", limit=5)
    record = error.record()
    assert record == {
        "path": str(tmp_path / "r.txt"),
        "problem": "line 3 has 9 columns",
        "setting": "S",
        "limit": 5,
    }
    again = ResultUnreadable.recorded(record, note="; raise S")
    assert (again.path, again.problem, again.setting, again.limit) == (
        error.path,
        "line 3 has 9 columns; raise S",
        "S",
        5,
    )
    copied = pickle.loads(pickle.dumps(error))
    assert (copied.setting, copied.limit, str(copied)) == ("S", 5, str(error))
