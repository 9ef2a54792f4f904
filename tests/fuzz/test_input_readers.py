"""Fuzzing the input readers the flows use (address batch, commerce addresses, pickup users, purchase
addresses, newspaper statistics and calendar): every row read is accepted, rejected with a reason naming
its row and field, or empty; none is lost or counted twice; a file that cannot be used is refused by
name; and the rejected-rows report a flow writes holds no cell a spreadsheet would run as a formula.

A case is a file of up to 70 rows, so each reader sees over 10,000 generated rows in 400 files (a
reader's fixed cost per file is what takes the time, not its rows).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectors.address_service.codes import MAX_LENGTH as ADDRESS_MAX_LENGTH
from connectors.newspaper.errors import OrderInvalid
from core.errors import PostflowsError
from fileio.address_service.records import AddressReading, read_address_file
from fileio.commerce.address_input import MAX_LENGTH as COMMERCE_MAX_LENGTH
from fileio.commerce.address_input import read_commerce_addresses
from fileio.commerce.pickup_input import read_pickup_input
from fileio.errors import InputError
from fileio.newspaper.purchase_input import read_purchase_input
from fileio.newspaper.statistics_input import read_calendar, read_statistics_file
from fileio.rejected_rows import write_rejected
from fileio.tables import Table, read_table
from fileio.textfiles import CONTROL_CHARACTER
from tasks.commerce.validation import RESULT_COLUMNS
from tests.fuzz.conftest import CaseCount, fuzz_settings
from tests.fuzz.generators import (
    ADDRESS_HEADERS,
    COMMERCE_HEADERS,
    DELIMITERS,
    ENCODINGS,
    FORMULA_STARTS,
    NEWLINES,
    PICKUP_HEADERS,
    PURCHASE_HEADERS,
    STATISTICS_HEADERS,
    TextTable,
    damage,
    header_row,
    text_table,
)
from tests.fuzz.oracles import check_refusal
from tests.outputs import EXCEL, output_rows

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ADDRESS_REQUIRED = ("Name", "Prename", "Streetname", "HouseNo", "ZIPCode", "TownName")
FILES = 400
ROWS = 10_000


@dataclass(frozen=True)
class Outcome:
    """What a reader made of a file: the accepted data rows, the rejected lines (row, field, value,
    reason), the rejected-rows report (one line per row) and the rows that are not completely empty."""

    accepted: list[int]
    rejected: pd.DataFrame
    report: pd.DataFrame
    input_rows: int


@dataclass(frozen=True)
class Reader:
    """An input reader under test: the headers its files hold, and how to run it on one."""

    target: str
    headers: tuple[str, ...]
    required: tuple[str, ...]
    read: Callable[[Path, random.Random], Outcome]
    accepted_check: Callable[[Path, list[int]], None] | None = None


def _address(path: Path, rnd: random.Random) -> Outcome:
    result = read_address_file(path, AddressReading(mode=rnd.choice(("batch", "query", "verification"))))
    accepted = result.records["RecordId"].tolist()
    _check_address_records(result.records)
    return Outcome(accepted, result.rejected, result.rejected_report, result.input_rows)


def _check_address_records(records: pd.DataFrame) -> None:
    """What no accepted address row holds: a value over its length or with a control character, a value
    the upload cannot carry, a Swiss postcode that is not four digits."""
    for field, limit in ADDRESS_MAX_LENGTH.items():
        if field in records:
            values = records[field].dropna()
            assert not (values.str.len() > limit).any(), f"accepted {field} over {limit} characters"
    for column in records.columns.drop("RecordId"):
        for value in records[column].dropna():
            assert not CONTROL_CHARACTER.search(value), f"accepted control character in {column}"
            value.encode("cp1252")
    swiss = records.get("CountryCode", pd.Series("", index=records.index)).fillna("").str.upper()
    swiss = swiss.isin(("", "CH", "LI"))
    if "ZIPCode" in records:
        postcodes = records.loc[swiss, "ZIPCode"].dropna()
        assert postcodes.str.fullmatch(r"\d{4}").all(), "accepted a Swiss postcode that is not 4 digits"


def _commerce(path: Path, rnd: random.Random) -> Outcome:
    use = rnd.choice(("validation", "delivery"))
    result = read_commerce_addresses(path, use=use, reserved=RESULT_COLUMNS)
    records = result.records
    for field, limit in COMMERCE_MAX_LENGTH.items():
        values = [value for value in records[field] if value is not None]
        assert all(len(value) <= limit for value in values), f"accepted {field} over {limit} characters"
        assert not any(CONTROL_CHARACTER.search(value) for value in values), f"control character in {field}"
    assert all(value is None or (len(value) == 4 and value.isdigit()) for value in records["zip"])
    if use == "delivery":
        assert records["zip"].notna().all() and records["city"].notna().all()
    assert len(records) + result.rejected_rows + result.empty_rows == len(read_table(path).frame)
    return Outcome(records["row"].tolist(), result.rejected, result.rejected_report, result.input_rows)


def _pickup(path: Path, rnd: random.Random) -> Outcome:
    result = read_pickup_input(path)
    for row in result.rows:
        details = row.request.user_details
        assert details.first_name and details.last_name and row.request.address.zip.zip
    rows = [row.row for row in result.rows]
    return Outcome(rows, result.rejected, result.rejected_report, len(result.frame) - result.empty_rows)


_PURCHASE_PARAMETERS = json.loads((EXAMPLES / "purchase.json").read_text(encoding="utf-8"))


def _purchase(path: Path, rnd: random.Random) -> Outcome:
    result = read_purchase_input(path, _PURCHASE_PARAMETERS, today=dt.date(2030, 1, 1))
    assert len(result.purchase.addresses) == len(result.rows)
    return Outcome(result.rows, result.rejected, result.rejected_report, result.input_rows)


def _statistics(path: Path, rnd: random.Random) -> Outcome:
    result = read_statistics_file(path)
    for _, record in result.records:
        assert record.newspaper_id is not None and record.delivery_date is not None
    return Outcome(
        [row for row, _ in result.records], result.rejected, result.rejected_report, result.input_rows
    )


READERS = (
    Reader("read_address_file (address batch)", ADDRESS_HEADERS, ADDRESS_REQUIRED, _address),
    Reader("read_commerce_addresses", COMMERCE_HEADERS, COMMERCE_HEADERS[:7], _commerce),
    Reader("read_pickup_input", PICKUP_HEADERS, PICKUP_HEADERS[:12], _pickup),
    Reader("read_purchase_input", PURCHASE_HEADERS, PURCHASE_HEADERS[:8], _purchase),
    Reader("read_statistics_file", STATISTICS_HEADERS, STATISTICS_HEADERS[:10], _statistics),
)


@dataclass(frozen=True)
class InputCase:
    """An input file: its name and bytes, and the table it holds unless damaged."""

    name: str
    data: bytes
    table: TextTable | None
    seed: int

    def __repr__(self) -> str:
        shown = self.table.header if self.table else f"{len(self.data)} damaged bytes"
        rows = len(self.table.records) if self.table else "?"
        return f"InputCase({self.name!r}, header={shown!r}, rows={rows}, seed={self.seed})"


def input_cases(reader: Reader) -> st.SearchStrategy[InputCase]:
    @st.composite
    def build(draw: st.DrawFn) -> InputCase:
        seed = draw(st.integers(0, 2**32 - 1))
        rnd = random.Random(seed)
        table = text_table(
            rnd,
            header_row(rnd, reader.headers, required=reader.required),
            rnd.choice((0, 1, 10, 20, 40, 50, 60, 70)),
            delimiter=rnd.choice(DELIMITERS),
            encoding=rnd.choice(ENCODINGS),
            newline=rnd.choice(NEWLINES),
            ragged=rnd.random() < 0.2,
        )
        name = "input" + rnd.choice((".csv", ".csv", ".txt", ".tsv"))
        if rnd.random() < 0.1:
            return InputCase(name, damage(rnd, table.data, rnd.randrange(1, 4)), None, seed)
        return InputCase(name, table.data, table, seed)

    return build()


@pytest.mark.parametrize("reader", READERS, ids=lambda reader: reader.target.split()[0])
def test_every_row_is_accepted_rejected_or_empty(scratch: Path, reader: Reader) -> None:
    files = CaseCount(f"{reader.target}: files")
    rows = CaseCount(f"{reader.target}: rows")
    checked = CaseCount(f"{reader.target}: files whose rows were all checked")

    @fuzz_settings(FILES)
    @given(case=input_cases(reader))
    def check(case: InputCase) -> None:
        path = scratch / case.name
        path.write_bytes(case.data)
        files.add()
        rows.add(len(case.table.records) if case.table else 0)
        rnd = random.Random(case.seed)
        try:
            outcome = reader.read(path, rnd)
        except (InputError, OrderInvalid) as error:
            if isinstance(error, InputError):
                check_refusal(error, path)
            assert str(error).strip()
            return
        checked.add()
        _check_accounting(outcome, read_table(path))
        _check_report_has_no_formula(outcome.report, scratch / "rejected.csv")

    check()
    files.require(FILES)
    rows.require(ROWS)
    checked.require(FILES // 3)  # the others are refused as a whole (a column missing, a damaged file)


def _check_accounting(outcome: Outcome, table: Table) -> None:
    """Accepted and rejected rows are distinct rows of the file and add up to the rows with a value; every
    rejected line names its row and (when it has one) a column of the file, and says why; the report has one
    line per rejected row, in order, at the line of the file where the row starts."""
    total = len(table.frame)
    headers = {str(name) for name in table.frame.columns}
    accepted = outcome.accepted
    rejected = outcome.rejected
    rejected_rows = set(rejected["row"].astype(int))
    assert len(set(accepted)) == len(accepted), "a row accepted twice"
    assert all(1 <= row <= total for row in [*accepted, *rejected_rows]), "a row number outside the file"
    assert not set(accepted) & rejected_rows, "a row both accepted and rejected"
    assert len(accepted) + len(rejected_rows) == outcome.input_rows <= total, "rows lost or counted twice"
    for line in rejected.itertuples(index=False):
        assert isinstance(line.reason, str) and line.reason.strip(), (
            f"row {line.row} rejected without a reason"
        )
        fields = [part for part in str(line.field).split(" + ") if part]
        assert all(field in headers or field in _FIELD_NAMES for field in fields), (
            f"unknown field {line.field!r}"
        )
    report = outcome.report
    assert report["row"].tolist() == sorted(rejected_rows), "the report is not one line per rejected row"
    lines = table.lines if table.lines is not None else table.frame.index.to_numpy() + 1
    assert report["line"].tolist() == [int(lines[row - 1]) for row in report["row"]], "a row at a wrong line"
    assert report["problems"].map(bool).all(), "a row in the report without its problems"


# Fields a reader may name by the request's own name when the file's column has another name.
_FIELD_NAMES = frozenset(
    {*COMMERCE_MAX_LENGTH, *PICKUP_HEADERS, *PURCHASE_HEADERS, *STATISTICS_HEADERS, *ADDRESS_HEADERS}
)


def _check_report_has_no_formula(report: pd.DataFrame, path: Path) -> None:
    """The rejected-rows report as the flows write it: no cell a spreadsheet would run as a formula."""
    if write_rejected(report, path, style=EXCEL) is None:
        return
    for line in output_rows(path):
        for value in line:
            assert not value.startswith(FORMULA_STARTS), f"formula in rejected.csv: {value!r}"


def test_calendar_dates_are_read_or_refused_naming_row_and_field(scratch: Path) -> None:
    cases = CaseCount("read_calendar: files")

    @fuzz_settings(FILES)
    @given(case=input_cases(READERS[-1]))
    def check(case: InputCase) -> None:
        path = scratch / case.name
        path.write_bytes(case.data)
        cases.add()
        try:
            dates = read_calendar(path)
        except InputError as error:
            check_refusal(error, path)
            if "is not a date" in error.problem:
                assert error.row is not None and error.field is not None
            return
        except PostflowsError as error:  # pragma: no cover - shown when it happens
            raise AssertionError(f"not an input error: {error!r}") from error
        assert dates == sorted(set(dates))

    check()
    cases.require(FILES)
