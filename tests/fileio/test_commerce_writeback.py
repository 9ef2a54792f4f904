"""What an address validation writes back: the changed fields of certified answers, and of the further
qualities named; every other change kept as given and listed with its quality."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fileio.commerce.address_input import read_commerce_addresses
from fileio.commerce.writeback import ValidatedRow, validation_edits, write_validation_writeback
from fileio.writeback.report import SKIPPED_FILE, SkippedChange, customer_ids
from fileio.writeback_policy import FORMULA_REFUSED

COLUMNS = {"street": ("Strasse",), "houseNumber": ("Nr", "Zusatz"), "zip": ("PLZ",), "city": ("Ort",)}
GIVEN = {"street": "Lindenstr.", "houseNumber": "12a", "zip": "6011", "city": "Kriens"}


def _row(
    row: int, *changed: str, status: str = "validated", quality: str | None = "CERTIFIED"
) -> ValidatedRow:
    certified = {"street": "Lindenstrasse", "houseNumber": "12 a", "zip": "6010", "city": "Kriens"}
    return ValidatedRow(
        row=row, status=status, changed=changed, certified=certified, quality=quality, given=GIVEN
    )


def test_changed_fields_of_certified_rows_go_into_their_columns() -> None:
    edits, skipped = validation_edits([_row(1, "street", "city"), _row(2)], COLUMNS)

    assert edits == {1: {"Strasse": "Lindenstrasse", "Ort": "Kriens"}}
    assert skipped == []


def test_a_field_read_from_two_columns_or_from_none_is_listed() -> None:
    edits, skipped = validation_edits([_row(3, "houseNumber", "additionalAddress")], COLUMNS)

    assert edits == {}
    assert skipped == [
        SkippedChange(
            3, "houseNumber", "it was read from 2 columns (Nr, Zusatz)", "CERTIFIED", "12a", "12 a"
        ),
        SkippedChange(3, "additionalAddress", "the file has no column for it", "CERTIFIED"),
    ]


def test_rows_not_validated_write_nothing() -> None:
    rows = [_row(4, "zip", status="refused", quality=None)]

    assert validation_edits(rows, COLUMNS) == (
        {},
        [SkippedChange(4, "zip", "the row was refused", "no quality", "6011", "6010")],
    )


def test_a_quality_other_than_certified_is_kept_unless_named() -> None:
    rows = [_row(5, "zip", quality="DOMICILE_UNKNOWN"), _row(6, "zip", quality="UNUSABLE"), _row(7, "zip")]

    edits, skipped = validation_edits(rows, COLUMNS)

    assert edits == {7: {"PLZ": "6010"}}
    assert [(skip.row, skip.answer, skip.given, skip.answered) for skip in skipped] == [
        (5, "DOMICILE_UNKNOWN", "6011", "6010"),
        (6, "UNUSABLE", "6011", "6010"),
    ]
    assert skipped[0].reason == (
        "quality DOMICILE_UNKNOWN is not certified: written back only with --apply DOMICILE_UNKNOWN"
    )
    edits, skipped = validation_edits(rows, COLUMNS, ("DOMICILE_UNKNOWN",))
    assert edits == {5: {"PLZ": "6010"}, 7: {"PLZ": "6010"}}
    assert [skip.row for skip in skipped] == [6]


def test_an_answer_without_a_quality_is_never_written() -> None:
    edits, [skipped] = validation_edits([_row(8, "city", quality=None)], COLUMNS, ("DOMICILE_UNKNOWN",))

    assert edits == {}
    assert skipped.reason == "the answer has no quality: only a certified answer is written back"


def test_the_skipped_report_names_the_row_the_customer_and_the_answer(tmp_path: Path) -> None:
    source = tmp_path / "addresses.csv"
    source.write_text(
        "KundenNr;Strasse;PLZ;Ort\nA-1;Bahnhofstrasse 1;8004;Zürich\nA-2;Bahnhofstrasse 2;3012;Bern\n",
        encoding="utf-8",
    )
    addresses = read_commerce_addresses(source, use="validation")
    certified = {"street": "Bahnhofstrasse 1", "zip": "8001", "city": "Zürich"}
    rows = [
        ValidatedRow(1, "validated", ["zip"], certified, "CERTIFIED", {"zip": "8004"}),
        ValidatedRow(
            2, "validated", ["zip"], {**certified, "zip": "3030"}, "DOMICILE_UNKNOWN", {"zip": "3012"}
        ),
    ]
    ids = customer_ids(addresses.rejected_report, addresses.records, "row")

    written = write_validation_writeback(addresses, rows, tmp_path / "out", ids=ids)

    copy = (tmp_path / "out" / "writeback.csv").read_text(encoding="utf-8")
    assert copy.splitlines()[1:] == ["A-1;Bahnhofstrasse 1;8001;Zürich", "A-2;Bahnhofstrasse 2;3012;Bern"]
    report = pd.read_csv(tmp_path / "out" / SKIPPED_FILE, sep=";", dtype=str, encoding="utf-8-sig")
    assert list(report.columns) == [
        "row", "KundenNr", "answer", "field", "column", "given", "answered", "reason"
    ]  # fmt: skip
    assert report.iloc[0].tolist()[:7] == ["2", "A-2", "DOMICILE_UNKNOWN", "zip", "PLZ", "3012", "3030"]
    assert written.skipped == 1


def test_an_answer_that_starts_like_a_formula_is_listed_never_written() -> None:
    town = "@SUM(1+1)*cmd|'/C calc'!A0"
    certified = {"street": '=HYPERLINK("http://evil.example")', "zip": "-6010", "city": town}
    changed = ("street", "zip", "city")
    row = ValidatedRow(
        row=4, status="validated", changed=changed, certified=certified, quality="CERTIFIED", given=GIVEN
    )

    edits, skipped = validation_edits([row], COLUMNS)

    assert edits == {}
    assert skipped == [
        SkippedChange(4, field, FORMULA_REFUSED, "CERTIFIED", GIVEN[field], certified[field])
        for field in ("street", "zip", "city")
    ]


def test_a_street_column_holding_the_house_number_gets_both_back() -> None:
    line_only = {"street": ("Strasse",), "zip": ("PLZ",), "city": ("Ort",)}  # no house number column
    edits, skipped = validation_edits([_row(5, "street"), _row(6, "houseNumber", "zip")], line_only)

    # The street alone would drop the number the cell holds: the answer's street and number go in together.
    assert edits == {
        5: {"Strasse": "Lindenstrasse 12 a"},
        6: {"Strasse": "Lindenstrasse 12 a", "PLZ": "6010"},
    }
    assert skipped == []

    numberless = ValidatedRow(7, "validated", ["street"], {"street": "Lindenstrasse"}, "CERTIFIED", GIVEN)
    edits, skipped = validation_edits([numberless], line_only)
    assert edits == {}
    assert [(s.row, s.field, s.reason) for s in skipped] == [
        (7, "street", "the answer has no street and house number for the street line")
    ]
