"""The deliverability flow against the commerce sandbox: an address × date grid (green, red, grey), the long
form, an unknown address reported on its row, rejected rows, the day range checked."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from openpyxl import load_workbook

from flows.deliverability_check import deliverability_check
from tests.flows.calls import call
from tests.flows.conftest import Sandbox, dask_task_runner
from tests.outputs import read_output_csv

ADDRESSES = """Kunde,street,houseNumber,zip,city
K1,Lindenstrasse,12,6010,Kriens
K2,,,5070,Frick
K3,Irgendweg,1,9999,Nirgendwo
K4,Hauptstrasse,3,5070,
"""
MONDAY = dt.date(2025, 3, 3)
GREEN, RED, GREY = "FFC6EFCE", "FFFFC7CE", "FFD9D9D9"


def _input(tmp_path: Path) -> Path:
    path = tmp_path / "addresses.csv"
    path.write_text(ADDRESSES, encoding="utf-8")
    return path


async def test_grid_of_deliverable_days_with_an_unknown_and_a_rejected_address(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = await call(
        deliverability_check, input_path=_input(tmp_path), output_dir=out, start=MONDAY, days=7
    )

    assert (summary.answered, summary.not_found, summary.rejected_rows) == (2, 1, 1)
    assert summary.deliverable_days == 12  # two addresses, Monday to Saturday
    assert sandbox.transport.count("/deliverabilities/when") == 3
    rejected = read_output_csv(out / "rejected.csv", dtype=str)
    assert rejected[["Kunde", "line", "row"]].values.tolist() == [["K4", "5", "4"]]
    assert rejected.loc[0, "problems"] == "city: city missing: a delivery query needs zip and city"

    days = read_output_csv(out / "deliverability.csv", dtype=str, keep_default_na=False)
    assert list(days.columns[:3]) == ["Kunde", "line", "row"]  # each row named as rejected.csv names it
    assert days["Kunde"].tolist() == ["K1"] * 7 + ["K2"] * 7 + ["K3"]
    assert days.drop_duplicates("Kunde")[["line", "row"]].values.tolist() == [
        ["2", "1"],
        ["3", "2"],
        ["4", "3"],
    ]
    kriens = days[days["Kunde"] == "K1"].set_index("date")
    assert kriens.loc["2025-03-03", "deliverable"] == "yes" and kriens.loc["2025-03-03", "activity"] == "WORK"
    assert kriens.loc["2025-03-03", "productCodes"] and kriens.loc["2025-03-03", "incomingDates"]
    assert (kriens.loc["2025-03-09", "deliverable"], kriens.loc["2025-03-09", "activity"]) == (
        "no",
        "NO_SERVICE",
    )
    unknown = days[days["Kunde"] == "K3"].iloc[0]
    assert (unknown["QueryStatus"], unknown["HttpStatus"], unknown["date"]) == ("not found", "404", "")

    workbook = load_workbook(out / "deliverability.xlsx")
    grid = workbook["By date"]
    header = [cell.value for cell in grid[1]]
    monday, sunday = header.index("2025-03-03 Mon") + 1, header.index("2025-03-09 Sun") + 1
    assert header[-7:] == [f"{MONDAY + dt.timedelta(days=n):%Y-%m-%d %a}" for n in range(7)]
    assert grid.cell(row=2, column=monday).fill.fgColor.rgb == GREEN
    assert "PRI" in str(grid.cell(row=2, column=monday).value)
    assert grid.cell(row=2, column=sunday).fill.fgColor.rgb == RED
    assert grid.cell(row=2, column=sunday).value == "no service"
    assert grid.cell(row=4, column=monday).fill.fgColor.rgb == GREY  # K3, unknown to the service
    assert grid.cell(row=4, column=header.index("QueryStatus") + 1).value == "not found"
    assert workbook["Days"].max_row == 1 + 15


async def test_more_days_than_allowed_is_refused_before_anything_is_sent(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="between 1 and 60, got 61"):
        await call(deliverability_check, input_path=_input(tmp_path), output_dir=tmp_path / "out", days=61)
    assert sandbox.transport.count("/deliverabilities/when") == 0


async def test_on_dask_worker_processes_the_grid_is_that_of_a_run_in_the_flows_process(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    """Chunks on two worker processes, each with the embedded sandbox: every query comes from a worker, and
    the files are those of a run whose rows were asked in the flow's own process."""
    source = _input(tmp_path)
    on_dask = deliverability_check.with_options(task_runner=dask_task_runner(processes=True))
    remote = await call(on_dask, input_path=source, output_dir=tmp_path / "dask", start=MONDAY, days=7)
    assert sandbox.transport.count("/deliverabilities/when") == 0  # every request came from the workers

    local = await call(
        deliverability_check, input_path=source, output_dir=tmp_path / "local", start=MONDAY, days=7
    )
    assert sandbox.transport.count("/deliverabilities/when") == 3
    assert (remote.answered, remote.not_found, remote.requests_sent) == (2, 1, 3)
    compared = {"answered", "not_found", "deliverable_days", "requests_sent"}
    assert local.model_dump(include=compared) == remote.model_dump(include=compared)
    for name in ("deliverability.csv", "rejected.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


async def test_postcodes_across_the_country_get_answers_on_the_sandbox(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    towns = [
        ("3818", "Grindelwald"),
        ("7500", "St. Moritz"),
        ("1950", "Sion"),
        ("9000", "St. Gallen"),
        ("2000", "Neuchâtel"),
        ("4001", "Basel"),
        ("8400", "Winterthur"),
        ("1700", "Fribourg"),
        ("7270", "Davos"),
        ("6600", "Locarno"),
    ]
    path = tmp_path / "towns.csv"
    path.write_text(
        "zip,city\n" + "".join(f"{zip_code},{city}\n" for zip_code, city in towns), encoding="utf-8"
    )
    summary = await call(
        deliverability_check, input_path=path, output_dir=tmp_path / "out", start=MONDAY, days=2
    )
    assert summary.accepted_rows == 10
    assert summary.answered >= 9 and summary.answered + summary.not_found == 10
    assert summary.deliverable_days == 2 * summary.answered  # Monday and Tuesday, wherever it is answered
