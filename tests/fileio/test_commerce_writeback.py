"""What an address validation writes back: the certified values of changed address fields."""

from __future__ import annotations

from fileio.commerce.writeback import SkippedField, ValidatedRow, validation_edits

COLUMNS = {"street": ("Strasse",), "houseNumber": ("Nr", "Zusatz"), "zip": ("PLZ",), "city": ("Ort",)}


def _row(row: int, *changed: str, status: str = "validated") -> ValidatedRow:
    certified = {"street": "Lindenstrasse", "houseNumber": "12 a", "zip": "6010", "city": "Kriens"}
    return ValidatedRow(row=row, status=status, changed=changed, certified=certified)


def test_changed_fields_of_validated_rows_go_into_their_columns() -> None:
    edits, skipped = validation_edits([_row(1, "street", "city"), _row(2)], COLUMNS, "corrections")

    assert edits == {1: {"Strasse": "Lindenstrasse", "Ort": "Kriens"}}
    assert skipped == []


def test_a_field_read_from_two_columns_or_from_none_is_listed() -> None:
    edits, skipped = validation_edits([_row(3, "houseNumber", "additionalAddress")], COLUMNS, "all")

    assert edits == {}
    assert skipped == [
        SkippedField(3, "houseNumber", "it was read from 2 columns (Nr, Zusatz)"),
        SkippedField(3, "additionalAddress", "the file has no column for it"),
    ]


def test_rows_not_validated_and_other_policies_write_nothing() -> None:
    rows = [_row(4, "zip", status="refused")]

    assert validation_edits(rows, COLUMNS, "corrections") == (
        {},
        [SkippedField(4, "zip", "the row was refused")],
    )
    assert validation_edits([_row(5, "zip")], COLUMNS, "moves") == ({}, [])
    assert validation_edits([_row(5, "zip")], COLUMNS, "none") == ({}, [])
