"""Reading a statistics file: columns by name or alias, conversions, rejected rows with row, field, reason."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from fileio.errors import InputError
from fileio.newspaper.statistics_input import parse_date, read_calendar, read_statistics_file

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "statistics.csv"


def test_example_file_is_fully_accepted() -> None:
    checked = read_statistics_file(EXAMPLE)
    assert checked.input_rows == 4 and len(checked.records) == 4 and checked.rejected.empty
    row, first = checked.records[0]
    assert row == 1
    assert first.to_body() == {
        "newspaperId": 104711,
        "split": "A",
        "product": "TUESDAY_EDITION",
        "houseKey": 1001,
        "bbz": 101,
        "aplz": 6280,
        "city": "Hochdorf",
        "deliveryDate": "2025-03-25",
        "bundleType": "NOT_BUNDLED",
        "count": 120,
    }


def test_bad_rows_are_rejected_with_field_and_reason_none_lost(tmp_path: Path) -> None:
    path = tmp_path / "stats.csv"
    path.write_text(
        "Zeitungs-ID;Produkt;Zustelldatum;Anzahl;Ort\n"
        "104711;TUESDAY_EDITION;25.03.2025;120;Hochdorf\n"
        "104711;TUESDAY_EDITION;2025-02-30;10;Hochdorf\n"
        "abc;FRIDAY_EDITION;2025-03-28;12;Weggis\n"
        ";;;;\n"
        "104711;;2025-03-28;0;Weggis\n",
        encoding="utf-8",
    )
    checked = read_statistics_file(path)
    assert checked.input_rows == 4
    assert [row for row, _ in checked.records] == [1]
    assert checked.records[0][1].delivery_date == dt.date(2025, 3, 25)
    rejected = checked.rejected
    assert rejected.columns.tolist() == ["row", "field", "value", "reason"]
    lines = {(row.row, row.field) for row in rejected.itertuples()}
    assert lines == {(2, "deliveryDate"), (3, "newspaperId"), (5, "count"), (5, "product")}
    assert checked.rejected_rows == 3
    assert len(checked.records) + checked.rejected_rows == checked.input_rows


def test_excel_file_dates_and_numbers(tmp_path: Path) -> None:
    path = tmp_path / "stats.xlsx"
    frame = pd.DataFrame(
        {
            "newspaperId": [104711],
            "product": ["FRIDAY_EDITION"],
            "deliveryDate": [pd.Timestamp("2025-03-28")],
            "count": [12],
            "bundleType": ["CITY"],
        }
    )
    frame.to_excel(path, index=False)
    checked = read_statistics_file(path)
    assert checked.rejected.empty
    assert checked.records[0][1].delivery_date == dt.date(2025, 3, 28)
    assert checked.records[0][1].count == 12


def test_missing_required_column_is_a_file_error(tmp_path: Path) -> None:
    path = tmp_path / "stats.csv"
    path.write_text("newspaperId,product,count\n104711,TUESDAY_EDITION,1\n", encoding="utf-8")
    with pytest.raises(InputError, match="deliveryDate"):
        read_statistics_file(path)


def test_parse_date_forms() -> None:
    assert parse_date("2024-02-29") == dt.date(2024, 2, 29)
    assert parse_date("2024-02-29 00:00:00") == dt.date(2024, 2, 29)
    assert parse_date("1.3.2025") == dt.date(2025, 3, 1)
    with pytest.raises(ValueError):
        parse_date("2025/03/01")


def test_calendar_from_named_column(tmp_path: Path) -> None:
    path = tmp_path / "calendar.csv"
    path.write_text("issue,Datum\n1,2025-03-25\n2,04.03.2025\n3,2025-03-25\n", encoding="utf-8")
    assert read_calendar(path) == [dt.date(2025, 3, 4), dt.date(2025, 3, 25)]
