"""Write-back end to end on the sandbox: writeback.<ext> keeps the customer's layout, differs from the input
only in the corrections applied, and a second batch on it finds nothing more to correct."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import Workbook, load_workbook
from openpyxl.styles import PatternFill

from fileio.tables import read_table
from flows.address_batch import address_batch
from flows.address_results import AddressBatchResult
from flows.address_validation import address_validation
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


def _example_rows() -> list[list[str]]:
    with (EXAMPLES / "address-batch.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle, delimiter=";"))


def _changed_cells(before: pd.DataFrame, after: pd.DataFrame) -> dict[tuple[int, str], tuple[str, str]]:
    """The cells that differ: (data row, column) → (before, after)."""
    assert list(after.columns) == list(before.columns)
    assert after.index.tolist() == before.index.tolist()
    old, new = before.fillna(""), after.fillna("")
    return {
        (int(row), str(column)): (old.at[row, column], new.at[row, column])
        for row in old.index
        for column in old.columns
        if old.at[row, column] != new.at[row, column]
    }


async def _batch(source: Path, out: Path, **options: Any) -> AddressBatchResult:
    summary = await call(address_batch, input_path=source, output_dir=out, **FAST, **options)
    assert isinstance(summary, AddressBatchResult)
    return summary


async def _round_trip(source: Path, tmp_path: Path, **options: Any) -> tuple[Path, AddressBatchResult]:
    """Run a batch, check writeback.<ext> against the input, run a batch on it; its summary."""
    summary = await _batch(source, tmp_path / "first", **options)
    copy = tmp_path / "first" / f"writeback-sandbox{source.suffix}"
    written = summary.writeback
    read_options = (
        {"fixed_widths": tuple(options["fixed_widths"].items())} if "fixed_widths" in options else {}
    )
    before = read_table(source, **read_options).frame
    assert written["path"] == str(copy) and written["rows"] == len(before)
    changed = _changed_cells(before, read_table(copy, **read_options).frame)
    assert len(changed) == written["cells_changed"] > 0
    results = read_output_csv(tmp_path / "first" / "results.csv", dtype=str, keep_default_na=False)
    service = results.set_index(results["row"].astype(int))
    for (row, column), (_, new) in changed.items():  # each changed cell holds the service's value
        assert new == service.at[row, f"{column} (Post)"], (row, column)
        # Only a hit whose CorrectionType requires a correction is written back.
        assert service.at[row, "QSTAT"] in ("1", "2", "3") and service.at[row, "CorrectionType"] == "1"
    second = await _batch(copy, tmp_path / "second", **options)
    # What the service still has otherwise is no certain correction: kept and listed.
    assert second.writeback["cells_changed"] == 0
    if second.corrected_rows:
        skipped = read_output_csv(tmp_path / "second" / "writeback-skipped.csv", dtype=str)
        hits = skipped[skipped["answer"].str.match(r"QSTAT [123],")]
        certain = hits[hits["answer"].str.endswith("CorrectionType 1")]
        assert (certain["reason"] == "the ShortReport does not mark this field as a correction").all()
    return copy, summary


async def test_a_quoted_semicolon_cp1252_csv_comes_back_in_its_own_dialect(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=";", quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerows(_example_rows())
    source = tmp_path / "kunden.csv"
    source.write_bytes(buffer.getvalue().encode("cp1252"))

    copy, summary = await _round_trip(source, tmp_path)

    original, written = source.read_bytes().split(b"\r\n"), copy.read_bytes().split(b"\r\n")
    assert len(written) == len(original)
    changed_lines = [i for i, (a, b) in enumerate(zip(original, written, strict=True)) if a != b]
    assert len(changed_lines) == summary.writeback["rows_changed"]
    for index in changed_lines:  # every field still quoted, in cp1252
        fields = next(csv.reader([written[index].decode("cp1252")], delimiter=";"))
        assert written[index].decode("cp1252") == ";".join(f'"{field}"' for field in fields)
    assert (
        b'"Wehntalerstrasse"' in copy.read_bytes() and "Schöfflisdorf".encode("cp1252") in copy.read_bytes()
    )


async def test_a_fixed_width_file_comes_back_with_its_widths(sandbox: Sandbox, tmp_path: Path) -> None:
    header, *rows = _example_rows()
    widths = dict(zip(header, (6, 28, 10, 16, 14, 20, 11, 10, 5, 16), strict=True))
    lines = [
        "".join(value.ljust(width) for value, width in zip(row, widths.values(), strict=True)) for row in rows
    ]
    source = tmp_path / "kunden.txt"
    source.write_bytes(
        ("\r\n".join(line for line in lines if len(line) == sum(widths.values())) + "\r\n").encode("cp1252")
    )

    copy, _ = await _round_trip(source, tmp_path, fixed_widths=widths, input_encoding="cp1252")

    assert {len(line) for line in copy.read_bytes().decode("cp1252").split("\r\n")[:-1]} == {
        sum(widths.values())
    }


async def test_a_workbook_keeps_its_other_sheet_formats_and_formulas(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    header, *rows = _example_rows()
    book = Workbook()
    sheet = book.active
    sheet.title = "Kunden"
    sheet.append([*header, "Strassenlänge"])
    for number, row in enumerate(rows, start=2):
        sheet.append([*row, f"=LEN(F{number})"])
    yellow = PatternFill("solid", fgColor="FFFF00")
    for cell in sheet[1]:
        cell.fill = yellow
    sheet.column_dimensions["F"].width = 31
    notes = book.create_sheet("Notizen")
    notes["A1"] = "Export vom 1. Oktober"
    source = tmp_path / "kunden.xlsx"
    book.save(source)

    copy, _ = await _round_trip(source, tmp_path)

    written = load_workbook(copy)
    assert written.sheetnames == ["Kunden", "Notizen"]
    assert written["Notizen"]["A1"].value == "Export vom 1. Oktober"
    kunden = written["Kunden"]
    assert kunden["A1"].fill.fgColor.rgb == "00FFFF00"
    assert kunden.column_dimensions["F"].width == 31
    assert [kunden.cell(row, 11).value for row in range(2, len(rows) + 2)] == [
        f"=LEN(F{row})" for row in range(2, len(rows) + 2)
    ]


async def test_nothing_applied_gives_the_input_byte_for_byte(sandbox: Sandbox, tmp_path: Path) -> None:
    summary = await _batch(EXAMPLES / "address-batch.csv", tmp_path / "out", apply="none")

    assert (tmp_path / "out" / "writeback-sandbox.csv").read_bytes() == (
        EXAMPLES / "address-batch.csv"
    ).read_bytes()
    assert summary.writeback["cells_changed"] == 0


async def test_moves_are_written_only_when_asked(sandbox: Sandbox, tmp_path: Path) -> None:
    source = EXAMPLES / "address-batch.csv"
    corrections = await _batch(source, tmp_path / "corrections")
    moves = await _batch(source, tmp_path / "moves", apply="moves")

    results = read_output_csv(tmp_path / "moves" / "results.csv", dtype=str, keep_default_na=False)
    moved = results.loc[results["QSTAT"] == "4", ["KundenNr", "Strasse (Post)", "PLZ (Post)", "Ort (Post)"]]
    assert len(moved) == 2
    written = pd.read_csv(tmp_path / "moves" / "writeback-sandbox.csv", sep=";", dtype=str).set_index(
        "KundenNr"
    )
    for number, street, zip_code, town in moved.itertuples(index=False):
        assert written.loc[number, ["Strasse", "PLZ", "Ort"]].tolist() == [street, zip_code, town]
    kept = pd.read_csv(tmp_path / "corrections" / "writeback-sandbox.csv", sep=";", dtype=str).set_index(
        "KundenNr"
    )
    original = pd.read_csv(source, sep=";", dtype=str).set_index("KundenNr")
    assert kept.loc[moved["KundenNr"]].equals(original.loc[moved["KundenNr"]])
    assert moves.writeback["rows_changed"] == 2 and corrections.writeback["rows_changed"] > 2


@pytest.mark.parametrize("further", [[], ["USUALLY_CERTIFIED", "DOMICILE_UNKNOWN"]])
async def test_address_validation_writes_back_the_answers_of_the_qualities_applied(
    sandbox: Sandbox, tmp_path: Path, further: list[str]
) -> None:
    source = EXAMPLES / "commerce-addresses.csv"

    summary = await call(address_validation, input_path=source, output_dir=tmp_path, apply=further)

    copy = tmp_path / "writeback-sandbox.csv"
    changed = _changed_cells(read_table(source).frame, read_table(copy).frame)
    assert len(changed) == summary.writeback["cells_changed"]
    results = read_output_csv(tmp_path / "results.csv", dtype=str, keep_default_na=False)
    quality = dict(zip(results["row"].astype(int), results["quality"], strict=True))
    # The example's one change of a certified answer differs only in case: no certified value changes it.
    assert bool(changed) is bool(further)
    assert all(before.casefold() != after.casefold() for before, after in changed.values())
    assert {quality[row] for row, _ in changed} <= {"CERTIFIED", *further}
    kept = {
        row
        for row, fields in zip(results["row"].astype(int), results["ChangedFields"], strict=True)
        if fields
    }
    kept -= {row for row, _ in changed}
    if kept:
        skipped = read_output_csv(tmp_path / "writeback-skipped.csv", dtype=str, keep_default_na=False)
        assert set(skipped["row"].astype(int)) >= kept


async def test_the_review_marks_every_change_and_every_row_for_a_human(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    summary = await _batch(EXAMPLES / "address-batch.csv", tmp_path)

    book = load_workbook(tmp_path / "review.xlsx")
    review = book["Review"]
    header = [cell.value for cell in review[1]]
    rows = list(review.iter_rows(min_row=2))
    assert len(rows) == summary.accepted_rows + summary.rejected_rows
    assert review.auto_filter.ref is not None and review.auto_filter.ref.startswith("A1:")
    human = header.index("Needs a human")
    flagged = [row for row in rows if row[human].value]
    assert len(flagged) == summary.needs_human  # one count: the rejected rows are in it
    assert summary.rejected_rows > 0  # the example has rejected rows: the count holds them
    said = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert f"- rows that need a human: {summary.needs_human}\n" in said
    assert all(
        row[human].comment is not None and row[human].fill.fgColor.rgb == "FFFF9C9C" for row in flagged
    )
    street = header.index("Street corrected")
    changed = [row[street] for row in rows if row[street].comment is not None]
    assert changed and all(cell.fill.fgColor.rgb == "FFFFEB9C" for cell in changed)
    assert all("ShortReport" in cell.comment.text or "QSTAT 4" in cell.comment.text for cell in changed)
    with zipfile.ZipFile(tmp_path / "review.xlsx") as package:
        charts = [name for name in package.namelist() if re.fullmatch(r"xl/charts/chart\d+\.xml", name)]
    assert len(charts) >= 2
    with zipfile.ZipFile(tmp_path / "results.xlsx") as package:
        assert len([name for name in package.namelist() if name.startswith("xl/charts/chart")]) == 3


async def test_another_policy_on_the_same_work_writes_again_without_a_second_batch(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    source = EXAMPLES / "address-batch.csv"
    first = await _batch(source, tmp_path, apply="none")
    assert (tmp_path / "writeback-sandbox.csv").read_bytes() == source.read_bytes()

    second = await _batch(source, tmp_path, apply="all")

    assert sandbox.transport.count("/runbatch") == 1
    assert second.resumed and second.idempotency_key == first.idempotency_key
    assert second.writeback["policy"] == "all" and second.writeback["cells_changed"] > 0
    assert (tmp_path / "writeback-sandbox.csv").read_bytes() != source.read_bytes()


async def test_a_postcode_and_town_column_gets_both_back_in_one_cell(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    source = EXAMPLES / "address-batch.csv"
    apart = pd.read_csv(source, sep=";", dtype=str, keep_default_na=False)
    together = apart.drop(columns=["PLZ", "Ort"])
    joined = (apart["PLZ"] + " " + apart["Ort"]).str.strip()
    together.insert(together.columns.get_loc("Postfach") + 1, "PLZ Ort", joined)
    combined = tmp_path / "kunden.csv"
    together.to_csv(combined, sep=";", index=False)

    first = await _batch(source, tmp_path / "apart")
    second = await _batch(combined, tmp_path / "together")
    assert (second.accepted_rows, second.rejected_rows) == (first.accepted_rows, first.rejected_rows)
    assert second.writeback["cells_changed"] > 0

    written_apart = pd.read_csv(tmp_path / "apart" / "writeback-sandbox.csv", sep=";", dtype=str).fillna("")
    written_together = pd.read_csv(tmp_path / "together" / "writeback-sandbox.csv", sep=";", dtype=str)
    expected = (written_apart["PLZ"] + " " + written_apart["Ort"]).str.strip()
    assert written_together["PLZ Ort"].fillna("").tolist() == expected.tolist()
    results = read_output_csv(tmp_path / "together" / "results.csv", dtype=str, keep_default_na=False)
    at = results.columns.get_loc("PLZ Ort")
    assert results.columns[at + 1] == "PLZ Ort (Post)"
    certain = results[(results["QSTAT"] == "1") & (results["CorrectionType"] == "1")]
    assert (certain["PLZ Ort (Post)"].str.fullmatch(r"\d{4} \S.*")).all() and len(certain)
