"""``postflows commerce product``, ``postflows commerce same-day`` and ``postflows deliverability --dates``
in-process against the sandbox: each runs its flow (the run is in the history), prints the answer readably
or as received, and ends with the exit code of its outcome."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from postflows.cli import app
from sandbox.commerce.delivery_options import PRODUCTS
from tests.flows.conftest import Sandbox
from tests.flows.test_same_day_acceptance import _answering, _long_answer

runner = CliRunner()
ZURICH = ["--zip", "8001", "--city", "Zürich", "--street", "Bahnhofstrasse", "--house-number", "1"]
ADDRESSES = "Kunde;PLZ;Ort\nK1;6010;Kriens\nK2;601;Kriens\n"


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def _json(output: str, opening: str = "{") -> object:
    lines = output.splitlines()
    start = min(number for number, line in enumerate(lines) if line.startswith(opening))
    return json.loads("\n".join(lines[start:]))


def test_a_product_readably_with_the_stored_names_and_as_received(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    code, output = invoke("commerce", "product", "SD2", "--out", str(tmp_path / "out"))
    assert code == 0, output
    assert "product SD2, barcode 99.22" in output
    assert "additional services (2; mandatory: SI):" in output
    assert [line.split() for line in output.splitlines() if line.startswith("  SI")] == [["SI", "MANDATORY"]]
    assert "postflows delivery-sync" in output  # no names stored yet
    assert f"wrote {(tmp_path / 'out' / 'product.json').resolve()}" in output
    assert "run 1 recorded in the history" in output

    assert invoke("delivery-sync")[0] == 0
    code, output = invoke("commerce", "product", "SD2")
    assert code == 0 and "SI   MANDATORY  Unterschrift" in output and "ZAW3218" in output

    code, output = invoke("commerce", "product", "PRI", "--json")
    assert code == 0 and _json(output) == PRODUCTS["PRI"]
    code, output = invoke("history", "--flow", "commerce product")
    flows = [line.split()[1] for line in output.splitlines()[2:] if line.strip()]
    assert code == 0 and flows == ["logistic-product"] * 3


def test_an_unknown_product_is_one_line_and_exit_1(sandbox: Sandbox, flow_env: Path) -> None:
    code, output = invoke("commerce", "product", "XYZ")
    assert code == 1
    [line] = [line for line in output.splitlines() if line.startswith("failed:")]
    assert line == "failed: commerce: no such product 'XYZ' (the service answered HTTP 404)"


def test_a_product_code_that_is_no_word_is_a_usage_error(sandbox: Sandbox, flow_env: Path) -> None:
    code, output = invoke("commerce", "product", "P RI")
    assert code == 2 and "a product code is one word" in output
    assert sandbox.transport.count("/deliverabilities/how") == 0


def test_same_day_acceptance_points_as_a_table_as_received_and_in_files(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, output = invoke("commerce", "same-day", *ZURICH, "--date", "2025-03-04", "--out", str(out))
    assert code == 0, output
    assert "3 acceptance points on 2025-03-04" in output
    assert any(
        "SD3" in line and "Bahnhofstrasse 1" in line and "12:00" in line for line in output.splitlines()
    )
    assert {path.name for path in out.iterdir()} == {
        "acceptance-points.csv",
        "acceptance-points.xlsx",
        "summary.md",
    }
    code, output = invoke("commerce", "same-day", *ZURICH, "--date", "2025-03-04", "--json")
    assert code == 0
    answer = _json(output)
    assert isinstance(answer, dict) and answer["results"][1]["productCode"] == "SD3"


def test_no_same_day_service_is_a_message_and_exit_0(sandbox: Sandbox, flow_env: Path) -> None:
    code, output = invoke("commerce", "same-day", *ZURICH, "--date", "2025-03-09")
    assert code == 0, output
    assert (
        "no acceptance points on 2025-03-09: no results (404): " in output and "no same-day service" in output
    )
    assert (
        "note: the path /api/delivery/v1/sameday/acceptancepoints (POSTFLOWS_COMMERCE_SAME_DAY_PATH)"
        in output
    )
    assert "`postflows doctor --live` checks it" in output


def test_a_same_day_path_the_service_does_not_have_is_no_results_noted_as_a_guess(
    sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # §7 lists "404 no results" for same-day acceptance points: a wrong path reads the same, so it is noted.
    monkeypatch.setenv("POSTFLOWS_COMMERCE_SAME_DAY_PATH", "/api/delivery/v1/acceptancepoints")
    code, output = invoke("commerce", "same-day", *ZURICH, "--date", "2025-03-04")
    assert code == 0, output
    assert "no acceptance points on 2025-03-04: no results (404): " in output
    assert (
        "the path /api/delivery/v1/acceptancepoints (POSTFLOWS_COMMERCE_SAME_DAY_PATH) is a guess" in output
    )


def test_a_same_day_path_without_get_fails_naming_the_setting(
    sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_COMMERCE_SAME_DAY_PATH", "/address/v1/addresses/validation")  # POST only
    code, output = invoke("commerce", "same-day", *ZURICH, "--date", "2025-03-04")
    assert code == 1, output
    (failed,) = [line for line in output.splitlines() if line.startswith("failed:")]
    assert "HTTP 405" in failed and "set POSTFLOWS_COMMERCE_SAME_DAY_PATH to the service's path" in failed


def test_a_long_answer_shows_the_first_points_and_says_how_many_more(
    sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _answering(sandbox, monkeypatch, httpx.Response(200, json=_long_answer(120)))
    code, output = invoke("commerce", "same-day", *ZURICH, "--date", "2025-03-04")
    assert code == 0, output
    assert "120 acceptance points on 2025-03-04" in output
    assert "Annahmestelle 49 " in output and "Annahmestelle 50 " not in output
    assert "… 70 more: every point is in the files of --out, or with --json" in output


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--zip", "80011"], "a postcode has 4 digits, got '80011'"),
        (["--zip", "8001", "--date", "4.3.2025"], "expected a date as YYYY-MM-DD, got '4.3.2025'"),
    ],
)
def test_same_day_usage_errors_name_the_option(
    sandbox: Sandbox, flow_env: Path, options: list[str], message: str
) -> None:
    code, output = invoke("commerce", "same-day", *options)
    assert code == 2 and message in output
    assert sandbox.transport.count("/sameday/acceptancepoints") == 0


@pytest.fixture
def addresses(tmp_path: Path) -> Path:
    path = tmp_path / "addresses.csv"
    path.write_text(ADDRESSES, encoding="utf-8")
    return path


def test_deliverability_on_explicit_dates(
    sandbox: Sandbox, flow_env: Path, addresses: Path, tmp_path: Path
) -> None:
    dates = tmp_path / "dates.txt"
    dates.write_text("2025-03-03\n2025-03-08\n", encoding="utf-8")
    code, output = invoke(
        "deliverability", str(addresses), "--dates", str(dates), "--out", str(tmp_path / "out")
    )
    assert code == 0, output
    summary = _json(output)
    assert isinstance(summary, dict)
    assert (summary["delivery_dates"], summary["answered"], summary["rejected_rows"]) == (
        ["2025-03-03", "2025-03-08"],
        1,
        1,
    )
    assert sandbox.transport.calls[("POST", "/commerce/api/delivery/v1/deliverabilities/when")] == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--dates", "2025-03-03", "--days", "14"], "explicit delivery dates exclude --days"),
        (["--dates", "2025-03-03", "--from", "2025-03-03"], "explicit delivery dates exclude a first day"),
        (["--dates", "2025-03-03,2025-13-01"], "'2025-13-01' is not a date YYYY-MM-DD"),
        (["--dates", "DATES"], "dates.txt: line 2, column 1: expected a date YYYY-MM-DD"),
    ],
)
def test_deliverability_dates_that_cannot_be_used_are_refused_before_anything_is_sent(
    sandbox: Sandbox, flow_env: Path, addresses: Path, tmp_path: Path, options: list[str], message: str
) -> None:
    dates = tmp_path / "dates.txt"
    dates.write_text("2025-03-03\nMontag\n", encoding="utf-8")
    options = [str(dates) if option == "DATES" else option for option in options]
    code, output = invoke("deliverability", str(addresses), *options, "--out", str(tmp_path / "out"))
    assert code == 2 and message in " ".join(output.split())
    assert sandbox.transport.count("/deliverabilities/when") == 0
