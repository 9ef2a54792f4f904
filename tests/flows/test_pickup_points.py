"""Pickup points against the commerce sandbox, from the flow and from the command: one row per point with the
input's id and line, each answer as received, bad rows rejected before any query, a failed location kept with
its reason and asked again (alone) by the next run; a method or path the service does not have (both are
settings) fails the run naming the setting, never "not found" rows."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from fileio.sandbox_marks import BANNER_SHEET
from flows.pickup_points import pickup_points
from postflows.cli import app
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pickup-locations.csv"
POINTS = "/pickup/v1/points"


def points(directory: Path) -> pd.DataFrame:
    return read_output_csv(directory / "points.csv", dtype=str, keep_default_na=False)


async def test_points_per_location_with_the_answers_as_received_and_a_rejected_row(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = await call(pickup_points, EXAMPLE, out)

    assert (summary.accepted_rows, summary.rejected_rows) == (3, 1)
    assert summary.locations == {"ok": 3} and summary.points == 9  # three near each location
    assert sandbox.transport.count(POINTS) == summary.requests_sent == 3
    table = points(out)
    assert table["customerNo"].tolist() == ["C-2001"] * 3 + ["C-2002"] * 3 + ["C-2003"] * 3
    assert table["line"].tolist() == ["2"] * 3 + ["3"] * 3 + ["4"] * 3
    assert set(table["status"]) == {"ok"} and table["ppNumber"].str.len().min() > 0
    first = table.iloc[0]
    assert first["webLink"].startswith("https://") and first["latitude"] and first["calendar"]
    assert first["openingToday"] in ("closed", "07:30-12:00, 13:30-18:30", "08:00-12:00")
    rejected = read_output_csv(out / "rejected.csv", dtype=str)
    assert rejected[["customerNo", "line"]].values.tolist() == [["C-2004", "5"]]
    answer = json.loads((out / "answers" / "row-2.json").read_text(encoding="utf-8"))
    assert [point["ppNumber"] for point in answer["points"]] == table["ppNumber"].tolist()[3:6]
    assert summary.answers == str((out / "answers").resolve())
    assert load_workbook(out / "points.xlsx").sheetnames == [BANNER_SHEET, "points", "rejected"]


async def test_a_failed_location_is_kept_with_its_reason_and_the_rerun_asks_only_for_it(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    # Two attempts per request (flow_env): the second location fails both times, the others answer.
    sandbox.inject(
        api="commerce", endpoint="*pickup/v1/points", kind="http_status", value=503, after=1, times=2
    )
    first = await call(pickup_points, EXAMPLE, tmp_path / "first", concurrency=1)
    assert first.locations == {"ok": 2, "failed": 1} and first.failed == 1
    failed = points(tmp_path / "first").set_index("customerNo").loc["C-2002"]
    assert (failed["status"], failed["ppNumber"]) == ("failed", "") and "503" in failed["error"]
    assert not (tmp_path / "first" / "answers" / "row-2.json").exists()

    sent = sandbox.transport.count(POINTS)
    again = await call(pickup_points, EXAMPLE, tmp_path / "again", concurrency=1)
    assert sandbox.transport.count(POINTS) - sent == 1  # only the location that failed
    assert again.locations == {"ok": 3} and again.resumed_rows == 2
    assert len(points(tmp_path / "again")) == 9


def test_a_file_without_a_zip_column_is_refused_before_anything_is_sent(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "no-zip.csv"
    path.write_text("street,city\nBahnhofstrasse,Zürich\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["pickup-points", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "column zip missing" in result.output
    assert sandbox.transport.count(POINTS) == 0


@pytest.mark.parametrize(
    ("variable", "value", "status", "named"),
    [
        (
            "POSTFLOWS_COMMERCE_PICKUP_POINTS_PATH",
            "/pickup/v1/pickuppoints",
            "HTTP 404",
            "PICKUP_POINTS_PATH",
        ),
        ("POSTFLOWS_COMMERCE_PICKUP_POINTS_METHOD", "PUT", "HTTP 405", "PICKUP_POINTS_METHOD"),
    ],
    ids=["path", "method"],
)
def test_a_path_or_method_the_service_does_not_have_fails_naming_the_setting(
    sandbox: Sandbox,
    flow_env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    status: str,
    named: str,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv(variable, value)
    result = CliRunner().invoke(app, ["pickup-points", str(EXAMPLE), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    (failed,) = [line for line in result.output.splitlines() if line.startswith("failed:")]
    assert status in failed and f"POSTFLOWS_COMMERCE_{named}" in failed
    assert "POSTFLOWS_COMMERCE_PICKUP_POINTS_PATH" in failed
    assert not (tmp_path / "out" / "points.csv").exists()  # no "not found" rows


async def test_no_split_sends_every_street_line_as_written_and_asks_again(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    source = tmp_path / "locations.csv"
    source.write_text("customerNo;Strasse;PLZ Ort\nC-1;Bahnhofstrasse 1;8001 Zürich\n", encoding="utf-8")

    def sent() -> list[dict[str, object]]:
        return [body["address"] for path, body in sandbox.transport.json_bodies if path.endswith(POINTS)]

    split = await call(pickup_points, source, tmp_path / "split")
    assert split.locations == {"ok": 1}
    assert sent() == [
        {
            "house": {"street": "Bahnhofstrasse", "houseNumber": "1"},
            "zip": {"zip": "8001", "city": "Zürich", "countryCode": "CH"},
        }
    ]

    # Lines kept whole are another question: asked again, not taken from the run before.
    whole = await call(pickup_points, source, tmp_path / "whole", split_house_numbers=False)
    assert whole.locations == {"ok": 1} and whole.resumed_rows == 0
    assert sent()[1]["house"] == {"street": "Bahnhofstrasse 1"}
