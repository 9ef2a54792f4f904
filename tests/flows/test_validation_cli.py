"""``postflows address-validation`` and ``postflows deliverability`` in-process: exit codes, the summary, the
day range and date checked as usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from postflows.cli import app
from tests.flows.conftest import Sandbox

runner = CliRunner()
ADDRESSES = """Kunde;Prename;Name;Streetname;HouseNo;ZIPCode;TownName
K1;Hans;Muster;Lindenstrasse;12;6010;Kriens
K2;Anna;Muster;Lindenstrasse;12;601;Kriens
"""


@pytest.fixture
def addresses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "120")
    path = tmp_path / "addresses.csv"
    path.write_text(ADDRESSES, encoding="utf-8")
    return path


def _summary(output: str) -> dict[str, object]:
    lines = output.splitlines()
    start = max(number for number, line in enumerate(lines) if line == "{")
    return json.loads("\n".join(lines[start:]))


def test_address_validation_exits_zero_with_a_rejected_row(
    sandbox: Sandbox, flow_env: Path, addresses: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["address-validation", str(addresses), "--out", str(out), "--concurrency", "2"]
    )

    assert result.exit_code == 0, result.output
    assert "commerce API: embedded sandbox" in result.output
    summary = _summary(result.output)
    assert (summary["validated"], summary["rejected_rows"]) == (1, 1)
    assert summary["quality"] == {"CERTIFIED": 1}
    assert {"results.csv", "results.xlsx", "rejected.csv", "summary.md"} <= {p.name for p in out.iterdir()}


def test_deliverability_command_with_a_first_day_and_a_day_count(
    sandbox: Sandbox, flow_env: Path, addresses: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["deliverability", str(addresses), "--from", "2025-03-03", "--days", "3", "--out", str(out)]
    )

    assert result.exit_code == 0, result.output
    summary = _summary(result.output)
    assert (summary["first_day"], summary["days"], summary["answered"]) == ("2025-03-03", 3, 1)
    assert (out / "deliverability.xlsx").is_file() and (out / "deliverability.csv").is_file()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--days", "61"], "must be between 1 and 60, got 61"),
        (["--days", "0"], "must be between 1 and 60, got 0"),
        (["--from", "3.3.2025"], "expected a date as YYYY-MM-DD, got '3.3.2025'"),
    ],
)
def test_deliverability_usage_errors_name_the_option(
    sandbox: Sandbox, flow_env: Path, addresses: Path, tmp_path: Path, options: list[str], message: str
) -> None:
    result = runner.invoke(app, ["deliverability", str(addresses), "--out", str(tmp_path / "out"), *options])

    assert result.exit_code == 2
    assert message in result.output
    assert sandbox.transport.count("/deliverabilities/when") == 0


def test_a_file_without_zip_or_city_columns_fails_naming_the_file(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "names.csv"
    path.write_text("Vorname,Nachname\nHans,Muster\n", encoding="utf-8")
    result = runner.invoke(app, ["address-validation", str(path), "--out", str(tmp_path / "out")])

    assert result.exit_code == 2
    assert "names.csv: missing address columns: zip or city" in result.output
    assert sandbox.transport.count("/addresses/validation") == 0
