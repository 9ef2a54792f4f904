"""The pickup points table: one row per point with the input row's id and line, today's hours and the calendar
in short; a location without points or without an answer keeps one row saying so."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from connectors.commerce import PickupPoint
from fileio.commerce.pickup_input import read_pickup_locations
from tasks.commerce.per_row import RowOutcome
from tasks.commerce.pickup_points import (
    ReceivedPoints,
    calendar_summary,
    location_records,
    points_summary,
    points_table,
    write_points,
)

TODAY = dt.date(2030, 6, 19)  # a Wednesday
WEEKDAY = {
    "openingIntervals": [{"from": "07:30:00", "to": "12:00:00"}, {"from": "13:30:00", "to": "18:30:00"}]
}
SATURDAY = {"openingIntervals": [{"from": "08:00:00", "to": "12:00:30"}]}


def calendar(first: dt.date, days: list[object]) -> dict[str, object]:
    return {(first + dt.timedelta(days=n)).isoformat(): day for n, day in enumerate(days)}


def point(number: str, **fields: object) -> dict[str, object]:
    return {
        "ppNumber": number,
        "service": "PICKUP",
        "name": f"PickPost {number}",
        "address": {"street": "Bahnhofplatz 1", "zip": "3011", "city": "Bern"},
        "webLink": f"https://example.test/{number}",
        "geographicPosition": {"latitude": "46.9", "longitude": "7.4"},
        "calendar": calendar(TODAY, [WEEKDAY, WEEKDAY, WEEKDAY, SATURDAY, [], WEEKDAY, WEEKDAY]),
        **fields,
    }


def test_the_calendar_in_short_groups_consecutive_days_with_the_same_hours() -> None:
    read = PickupPoint.model_validate(point("1"))
    assert calendar_summary(read) == (
        "Wed-Fri 07:30-12:00, 13:30-18:30; Sat 08:00-12:00:30; Sun closed; Mon-Tue 07:30-12:00, 13:30-18:30"
    )
    holiday = PickupPoint.model_validate(point("2", calendar=calendar(TODAY, [WEEKDAY, [], WEEKDAY])))
    assert (
        calendar_summary(holiday) == "Wed 07:30-12:00, 13:30-18:30; Thu closed; Fri 07:30-12:00, 13:30-18:30"
    )


def test_one_row_per_point_and_one_per_location_without(tmp_path: Path) -> None:
    path = tmp_path / "locations.csv"
    path.write_text("zip,city\n3011,Bern\n3012,Bern\n3013,Bern\n9999,Nowhere\n", encoding="utf-8")
    locations = read_pickup_locations(path)
    assert location_records(locations)["row"].tolist() == [1, 2, 3, 4]
    outcomes = [
        RowOutcome(
            1,
            "answered",
            200,
            answer=ReceivedPoints(received={"points": [point("A"), point("B", hint="Schalter")]}),
        ),
        RowOutcome(2, "answered", 200, answer=ReceivedPoints(received={"points": []})),
        RowOutcome(3, "failed", 503, "commerce: HTTP 503"),
        RowOutcome(4, "not found", 404, "no results"),
    ]
    table = points_table(locations, outcomes, today=TODAY)
    # The id column (the file's first: no customer number) is named so as not to take a result's name.
    assert table.columns[:4].tolist() == ["zip (input)", "line", "row", "status"]
    assert table["zip (input)"].tolist() == ["3011", "3011", "3012", "3013", "9999"]
    assert table["line"].tolist() == [2, 2, 3, 4, 5]
    assert table["status"].tolist() == ["ok", "ok", "no points", "failed", "not found"]
    assert (
        table["ppNumber"].tolist()[:2] == ["A", "B"] and table["ppNumber"].isna().tolist()[2:] == [True] * 3
    )
    first = table.iloc[0]
    assert (first["openingToday"], first["city"], first["latitude"]) == (
        "07:30-12:00, 13:30-18:30",
        "Bern",
        "46.9",
    )
    assert table.iloc[1]["hint"] == "Schalter" and table.iloc[3]["error"] == "commerce: HTTP 503"

    files = write_points(table, outcomes, locations.rejected_report, tmp_path / "out")
    assert [path.name for path in files] == ["points.csv", "points.xlsx", "row-1.json", "row-2.json"]
    assert pd.read_json(files[2]).shape[0] == 2  # the answer as received
    report = points_summary("locations.csv", table, locations=4, rejected_rows=0, service="sandbox")
    assert "| pickup points found | 2 |" in report and "| locations answered without points | 1 |" in report
    assert "## Locations not answered" in report and "| 4 | 3 | failed |" in report
