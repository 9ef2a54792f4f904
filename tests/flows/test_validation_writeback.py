"""The address validation's write-back on the sandbox: a certified answer goes into writeback-sandbox.csv, an
answer of another quality keeps its row as given and is listed in writeback-skipped.csv with its quality,
until ``--apply`` names that quality; an unknown quality is a usage error."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.address_validation import address_validation
from postflows.cli import app
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

# The sandbox answers row 1 CERTIFIED (the building exists; "Zuerich" comes back as "Zürich") and row 2
# DOMICILE_UNKNOWN (no building 99 in Lindenstrasse; "Krienz" comes back as "Kriens").
ADDRESSES = """KundenNr;Strasse;Hausnummer;PLZ;Ort
A-1;Bahnhofstrasse;1;8001;Zuerich
A-2;Lindenstrasse;99;6010;Krienz
"""


def _addresses(tmp_path: Path) -> Path:
    path = tmp_path / "addresses.csv"
    path.write_text(ADDRESSES, encoding="utf-8")
    return path


def _copy_rows(out: Path) -> list[str]:
    return (out / "writeback-sandbox.csv").read_text(encoding="utf-8").splitlines()[1:]


async def test_only_the_certified_answer_is_written_back_and_the_other_is_listed(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"

    summary = await call(address_validation, input_path=_addresses(tmp_path), output_dir=out)

    assert summary.quality == {"CERTIFIED": 1, "DOMICILE_UNKNOWN": 1}
    assert _copy_rows(out) == ["A-1;Bahnhofstrasse;1;8001;Zürich", "A-2;Lindenstrasse;99;6010;Krienz"]
    skipped = read_output_csv(out / "writeback-skipped.csv", dtype=str, keep_default_na=False)
    assert list(skipped.columns) == [
        "row", "KundenNr", "answer", "field", "column", "given", "answered", "reason"
    ]  # fmt: skip
    assert skipped[["row", "KundenNr", "answer", "field", "column", "given", "answered"]].values.tolist() == [
        ["2", "A-2", "DOMICILE_UNKNOWN", "city", "Ort", "Krienz", "Kriens"]
    ]
    assert "--apply DOMICILE_UNKNOWN" in skipped.at[0, "reason"]
    assert summary.writeback["policy"] == "CERTIFIED"
    assert (summary.writeback["rows_changed"], summary.writeback["skipped"]) == (1, 1)
    assert "listed in writeback-skipped.csv" in (out / "summary.md").read_text(encoding="utf-8")


async def test_apply_names_a_further_quality_to_write_back(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"

    summary = await call(
        address_validation, input_path=_addresses(tmp_path), output_dir=out, apply=["DOMICILE_UNKNOWN"]
    )

    assert _copy_rows(out) == ["A-1;Bahnhofstrasse;1;8001;Zürich", "A-2;Lindenstrasse;99;6010;Kriens"]
    assert not (out / "writeback-skipped.csv").exists()
    assert summary.writeback["policy"] == "CERTIFIED, DOMICILE_UNKNOWN"


def test_an_unknown_quality_is_a_usage_error(
    flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(
        app, ["address-validation", str(_addresses(tmp_path)), "--out", str(tmp_path), "--apply", "CORRECTED"]
    )

    assert result.exit_code == 2
    assert "CORRECTED" in result.output and "DOMICILE_UNKNOWN" in result.output
    assert not list(tmp_path.glob("writeback*"))


async def test_a_street_line_with_its_house_number_keeps_the_number_when_written_back(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    source = tmp_path / "lines.csv"
    source.write_text("KundenNr;Strasse;PLZ;Ort\nA-1;bahnhofstr. 1;8001;Zuerich\n", encoding="utf-8")
    out = tmp_path / "out"

    summary = await call(address_validation, input_path=source, output_dir=out)

    assert summary.quality == {"CERTIFIED": 1}
    # The street and the number the cell held go back in together, in the answer's spelling.
    assert _copy_rows(out) == ["A-1;Bahnhofstrasse 1;8001;Zürich"]


async def test_a_postcode_and_town_column_is_read_as_both_and_written_back_as_one(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    source = tmp_path / "plz-ort.csv"
    source.write_text(
        "KundenNr;Strasse;Hausnummer;PLZ Ort\n"
        "A-1;Bahnhofstrasse;1;8001 Zuerich\n"
        "A-2;Lindenstrasse;99;CH-6010 Krienz\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"

    summary = await call(address_validation, input_path=source, output_dir=out)

    assert summary.quality == {"CERTIFIED": 1, "DOMICILE_UNKNOWN": 1}
    # The certified town goes back into the one cell beside its postcode; the other row keeps its cell.
    assert _copy_rows(out) == ["A-1;Bahnhofstrasse;1;8001 Zürich", "A-2;Lindenstrasse;99;CH-6010 Krienz"]
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    at = list(results.columns).index("PLZ Ort")
    assert results.columns[at + 1] == "PLZ Ort (Post)"
    assert results[["PLZ Ort", "PLZ Ort (Post)"]].values.tolist() == [
        ["8001 Zuerich", "8001 Zürich"],
        ["6010 Krienz", "6010 Kriens"],
    ]
    skipped = read_output_csv(out / "writeback-skipped.csv", dtype=str, keep_default_na=False)
    assert skipped[["KundenNr", "field", "column", "given", "answered"]].values.tolist() == [
        ["A-2", "city", "PLZ Ort", "Krienz", "Kriens"]
    ]
