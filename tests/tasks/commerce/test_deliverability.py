"""Deliverability results: the day range checked, the address × date grid with its fills read back, failed
addresses grey and kept in the long form."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook

from connectors.commerce import Deliverabilities
from tasks.commerce.deliverability import (
    deliverability_table,
    delivery_address,
    requested_days,
    write_deliverability,
)
from tasks.commerce.per_row import RowOutcome
from tests.outputs import read_output_csv

MONDAY = dt.date(2025, 3, 3)


def test_the_day_range_is_bounded() -> None:
    assert requested_days(MONDAY, 3) == [MONDAY, dt.date(2025, 3, 4), dt.date(2025, 3, 5)]
    assert len(requested_days(MONDAY, 60)) == 60
    for days in (0, 61):
        with pytest.raises(ValueError, match=f"days must be between 1 and 60, got {days}"):
            requested_days(MONDAY, days)


def test_the_delivery_address_leaves_out_what_is_not_given() -> None:
    address = delivery_address({"zip": "6010", "city": "Kriens", "street": None, "houseNumber": None})
    assert address.query_params() == [
        ("address.geographicLocation.zip.zip", "6010"),
        ("address.geographicLocation.zip.city", "Kriens"),
    ]


def _answer() -> Deliverabilities:
    return Deliverabilities.model_validate(
        {
            "quality": "RELIABLE",
            "deliveryToTheDoor": "AVAILABLE",
            "days": [
                {
                    "deliveryDate": "2025-03-03",
                    "activity": "WORK",
                    "deliverabilities": [
                        {"incomingDate": "2025-03-01", "productCode": "ECO"},
                        {"incomingDate": "2025-03-01", "productCode": "PRI"},
                    ],
                },
                {"deliveryDate": "2025-03-04", "activity": "NO_SERVICE", "deliverabilities": []},
            ],
        }
    )


def _table() -> tuple[pd.DataFrame, list[RowOutcome[Deliverabilities]]]:
    records = pd.DataFrame(
        [
            {"row": 1, "Kunde": "K1", "zip": "6010", "city": "Kriens", "street": None, "houseNumber": None},
            {"row": 3, "Kunde": "K3", "zip": "9999", "city": "X", "street": "Weg", "houseNumber": "1"},
        ]
    )
    outcomes: list[RowOutcome[Deliverabilities]] = [
        RowOutcome(1, "answered", 200, answer=_answer()),
        RowOutcome(3, "not found", 404, "commerce: HTTP 404 no results"),
    ]
    return records, outcomes


def test_grid_text_and_long_form() -> None:
    records, outcomes = _table()
    table = deliverability_table(records, outcomes, ["Kunde"], requested_days(MONDAY, 3))

    grid = table.grid.set_index("Kunde")
    assert list(grid.columns[-3:]) == ["2025-03-03 Mon", "2025-03-04 Tue", "2025-03-05 Wed"]
    assert grid.loc["K1", "2025-03-03 Mon"] == "ECO, PRI"
    assert grid.loc["K1", "2025-03-04 Tue"] == "no service"
    assert grid.loc["K1", "2025-03-05 Wed"] is None  # asked, not answered: no cell text, no fill
    assert (grid.loc["K3", "QueryStatus"], grid.loc["K3", "HttpStatus"]) == ("not found", 404)
    days = table.days
    assert days["date"].tolist() == ["2025-03-03", "2025-03-04", None]
    assert days["productCodes"].tolist() == ["ECO, PRI", None, None]
    assert days["incomingDates"].tolist()[0] == "2025-03-01, 2025-03-01"
    assert days["deliverable"].tolist() == ["yes", "no", None]
    assert table.deliverable_days() == 1


def test_workbook_cells_are_green_red_and_grey(tmp_path: Path) -> None:
    records, outcomes = _table()
    table = deliverability_table(records, outcomes, ["Kunde"], requested_days(MONDAY, 3))
    csv_path, xlsx_path = write_deliverability(table, tmp_path)

    assert len(read_output_csv(csv_path)) == 3
    sheet = load_workbook(xlsx_path)["By date"]
    header = [cell.value for cell in sheet[1]]
    monday, tuesday, wednesday = (header.index(f"2025-03-0{n}") + 1 for n in ("3 Mon", "4 Tue", "5 Wed"))
    assert sheet.cell(row=2, column=monday).fill.fgColor.rgb == "FFC6EFCE"
    assert sheet.cell(row=2, column=tuesday).fill.fgColor.rgb == "FFFFC7CE"
    assert sheet.cell(row=2, column=wednesday).fill.fgColor.rgb in (None, "00000000")
    assert all(
        sheet.cell(row=3, column=c).fill.fgColor.rgb == "FFD9D9D9" for c in (monday, tuesday, wednesday)
    )
    assert sheet.cell(row=3, column=header.index("QueryError") + 1).value == "commerce: HTTP 404 no results"
