"""A real-shaped CRM export (tests/data/crm-export.csv: 300 rows, UTF-8 with BOM, semicolons, the house
number inside the address column) runs through the address batch on the embedded sandbox: every row is a
result or a rejected row with a reason, and the share of hits is the one the README's "What the sandbox
knows" promises for a clerk's well-formed rows (about 85 %)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from fileio.errors import InputError
from flows.address_batch import address_batch
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXPORT = Path(__file__).resolve().parents[1] / "data" / "crm-export.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}
HITS = {"1", "2", "3", "4"}


async def test_the_crm_export_runs_first_time(sandbox: Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = await call(address_batch, input_path=EXPORT, output_dir=out, **FAST)
    assert summary.result_rows + summary.rejected_rows == 300
    assert summary.house_numbers_split >= 280

    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    rejected = read_output_csv(out / "rejected.csv", dtype=str, keep_default_na=False)
    assert set(results["KundenNr"]).isdisjoint(set(rejected["KundenNr"]))
    assert len(set(rejected["KundenNr"])) == len(rejected) == summary.rejected_rows  # one line per row
    assert (rejected["problems"].str.len() > 0).all()
    # The sandbox holds no P.O. boxes outside its detailed areas (README), so those rows are not counted.
    source = pd.read_csv(EXPORT, sep=";", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    po_boxes = set(source.loc[source["Adresse"].str.startswith("Postfach"), "KundenNr"])
    streets = results[~results["KundenNr"].isin(po_boxes)]
    hits = streets["QSTAT"].isin(HITS).mean()
    assert hits >= 0.8, f"{hits:.0%} hits, the README promises about 85 %"

    split = read_output_csv(out / "house-numbers.csv", dtype=str, keep_default_na=False)
    # Rows named as rejected.csv names them: the customer's id, the file's line, the data row.
    assert split.columns.tolist()[:4] == ["KundenNr", "line", "row", "street line"]
    assert (split["line"].astype(int) == split["row"].astype(int) + 1).all()
    assert {"Streetname", "HouseNo"} <= set(split.columns)
    assert ("Steinenvorstadt 5 B", "Steinenvorstadt", "5 B") in set(
        zip(split["street line"], split["Streetname"], split["HouseNo"], strict=True)
    )


async def test_a_dry_run_shows_the_split_and_no_split_keeps_the_lines(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    summary = await call(address_batch, input_path=EXPORT, output_dir=tmp_path / "dry", dry_run=True, **FAST)
    plan = json.loads(Path(str(summary.plan)).read_text(encoding="utf-8"))
    assert plan["house_numbers"]["split"] == summary.house_numbers_split >= 280
    assert plan["house_numbers"]["first"][0]["line"]
    assert sum(sandbox.transport.calls.values()) == 0

    with pytest.raises(InputError, match="missing address columns: Streetname and HouseNo"):
        await call(
            address_batch,
            input_path=EXPORT,
            output_dir=tmp_path / "unsplit",
            dry_run=True,
            split_house_numbers=False,
            **FAST,
        )


SWISS_EXPORT = (
    "Kundennr;Vorname;Name;Strasse;PLZ;Ort;Land\r\n"
    "1001;Anna;Meier;Bahnhofstrasse 12;8001;Zuerich;Schweiz\r\n"
    "1002;Luc;Favre;Rue du Marché 4;1204;Genève;Suisse\r\n"
    "1003;Gianni;Rossi;Via Nassa 12;6900;Lugano;Svizzera\r\n"
    "1004;John;Smith;Seestrasse 7a;6004;Luzern;Switzerland\r\n"
    "1005;Maria;Frick;Hauptstrasse 20;3818;Grindelwald;CH\r\n"
)


async def test_the_results_speak_the_customers_words(sandbox: Sandbox, tmp_path: Path) -> None:
    source = tmp_path / "kunden.csv"
    source.write_bytes(SWISS_EXPORT.encode("cp1252"))
    out = tmp_path / "out"
    summary = await call(address_batch, input_path=source, output_dir=out, **FAST)
    assert summary.rejected_rows == 0 and summary.result_rows == 5

    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    columns = results.columns.tolist()
    # Named as rejected.csv names rows, then each of the customer's columns with the service's value beside.
    assert columns[:3] == ["Kundennr", "line", "row"]
    assert columns[3:15] == [
        "Vorname", "Vorname (Post)", "Name", "Name (Post)", "Strasse", "Strasse (Post)",
        "PLZ", "PLZ (Post)", "Ort", "Ort (Post)", "Land", "Land (Post)",
    ]  # fmt: skip
    assert columns[15:17] == ["QSTAT", "QSTAT_Designation"]
    assert not any(column.endswith("_in") for column in columns)
    assert list(results["line"]) == ["2", "3", "4", "5", "6"]
    assert list(results["Land"]) == ["Schweiz", "Suisse", "Svizzera", "Switzerland", "CH"]
    assert set(results["Land (Post)"]) == {"CH"}
    assert list(results["Ort"]) == ["Zuerich", "Genève", "Lugano", "Luzern", "Grindelwald"]
    genf = results.iloc[1]
    assert (genf["Ort (Post)"], genf["Strasse (Post)"], genf["QSTAT"]) == ("Genève", "Rue du Marché 4", "1")
    moved = results.iloc[0]  # the sandbox knows Anna Meier moved: the service's address is her new one
    assert moved["QSTAT"] == "4" and moved["Ort (Post)"] != "Zuerich"
    # The street column that held the house number gets the service's street and number in one.
    assert moved["Strasse (Post)"].split()[-1].isdigit()
    assert "HouseNo (Post)" not in columns and "Streetname (Post)" not in columns
    assert moved["Birthdate"].count("-") == 2  # an ISO date

    workbook = openpyxl.load_workbook(out / "results.xlsx")
    sheet = workbook["Results"]
    header = [cell.value for cell in sheet[1]]
    town = sheet.cell(row=2, column=header.index("Ort (Post)") + 1)
    assert town.value == moved["Ort (Post)"]
    assert town.fill.fgColor.rgb.endswith("FFEB9C")  # changed: filled as review.xlsx fills it
    assert town.comment is not None and "QSTAT 4" in town.comment.text
    unchanged = sheet.cell(row=3, column=header.index("Ort (Post)") + 1)
    assert unchanged.value == "Genève" and unchanged.comment is None
    legend = {row[0]: row[1:] for row in workbook["Legend"].iter_rows(min_row=2, values_only=True)}
    assert legend["Ort"][1] == "TownName_in" and legend["Ort (Post)"][1] == "TownName"
    assert legend["row"][1] == "RecordId"
    assert set(legend) == set(columns)

    moves = read_output_csv(out / "moves.csv", dtype=str, keep_default_na=False)
    # The moves are named as the results name their rows; the service's own count stays apart.
    assert moves.columns.tolist()[:4] == ["Kundennr", "line", "row", "RecordNo (Post)"]
    assert "RecordId" not in moves.columns
    anna = moves.set_index("Kundennr").loc["1001"]
    assert (anna["line"], anna["row"]) == ("2", "1")
    assert anna["MoveDate"].count("-") == 2 and anna["BirthDate"] == moved["Birthdate"]
