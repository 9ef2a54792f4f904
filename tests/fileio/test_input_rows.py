"""The one input-row layer of every reader: headers resolved by tiers of names, the rows to check as text
cells, and the rejected rows collected, counted and reported the same way."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fileio.errors import InputError
from fileio.headers import header_key, resolve_columns
from fileio.input_rows import RowCells
from fileio.rejected_rows import RejectedRows, problem_lines
from fileio.tables import Table

SPEC = {header_key(name): name for name in ("zip", "city")}
ALIASES = {"plz": "zip", "ort": "city", "postleitzahl": "zip"}


def test_a_stronger_tier_wins_then_the_leftmost_column() -> None:
    assert resolve_columns(["PLZ", "Ort", "zip"], (SPEC, ALIASES)) == {"zip": "zip", "city": "Ort"}
    assert resolve_columns(["Postleitzahl", "PLZ"], (SPEC, ALIASES)) == {"zip": "Postleitzahl"}


def test_a_header_claims_the_field_of_the_first_tier_that_names_it_only() -> None:
    # "Zip" is named by the first tier; losing there, it does not fall back on the second.
    def everything_is_a_city(header: str) -> str | None:
        return "city"

    assert resolve_columns(["zip", "Zip"], (SPEC, everything_is_a_city)) == {"zip": "zip"}


def test_fields_come_by_tier_then_by_column() -> None:
    assert list(resolve_columns(["Ort", "PLZ", "city"], (SPEC, ALIASES))) == ["city", "zip"]


def _table(rows: dict[str, list[object]], *, malformed: list[tuple[int, str]] | None = None) -> Table:
    frame = pd.DataFrame(rows, index=pd.RangeIndex(1, len(next(iter(rows.values()))) + 1))
    return Table(frame=frame, malformed=malformed or [])


def test_rows_to_check_leave_out_the_rejected_and_count_the_empty() -> None:
    table = _table({"PLZ": [" 8001 ", None, "", "3000"], "Ort": ["Zürich", None, " ", "Bern"]})
    rows = RowCells(table.frame, {"zip": "PLZ", "city": "Ort"}, skip={4})
    assert list(rows) == [(1, {"zip": "8001", "city": "Zürich"})]
    assert rows.empty == 2


def test_rejected_rows_are_in_row_order_with_their_problems_as_found() -> None:
    table = _table({"PLZ": ["80O1", "3000", "x\x01"]}, malformed=[(2, "a line in another encoding")])
    rejected = RejectedRows(table)
    rejected.add_line(3, "PLZ", "x\x01", "not a postcode")
    rejected.add(problem_lines(pd.Series([1]), "PLZ", "80O1", "not a postcode"))
    rejected.check_controls("PLZ", table.frame["PLZ"])
    rejected.check_lengths("PLZ", table.frame["PLZ"], 3)
    assert rejected.lines().values.tolist() == [
        [1, "PLZ", "80O1", "not a postcode"],
        [1, "PLZ", "80O1", "longer than 3 characters (4)"],
        [2, "", "", "a line in another encoding"],
        [3, "PLZ", "x\\x01", "not a postcode"],
        [3, "PLZ", "x\\x01", "control character U+0001 (SOH) in the value"],
    ]
    assert rejected.rows == {1, 2, 3} and rejected.count() == 3
    assert rejected.report(id_column="PLZ")["row"].tolist() == [1, 2, 3]


def test_rows_that_do_not_add_up_are_refused() -> None:
    rejected = RejectedRows(_table({"PLZ": ["8001", "3000"]}))
    rejected.check_accounted(Path("in.csv"), accepted=2, empty=0)
    with pytest.raises(
        InputError, match=r"2 data rows were read, but 2 accepted \+ 0 rejected \+ 1 empty = 3"
    ):
        rejected.check_accounted(Path("in.csv"), accepted=2, empty=1)
