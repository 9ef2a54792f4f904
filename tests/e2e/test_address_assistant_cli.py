"""``postflows autocomplete`` and ``postflows verify-building`` against the sandbox served over HTTP: the rows
of the spec's examples as the user sees them.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.e2e.conftest import CliWorkspace, ServedSandbox, served_sandbox

# Starting servers and the CLI is slow on a busy machine; the default per-test limit is too tight.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

COMMANDS = {
    "streets": ("autocomplete", "streets", "--street", "Linden"),
    "towns": ("autocomplete", "towns", "--zip", "60", "--town", "K", "--json"),
    "building": ("verify-building", "--street", "Lindenstrasse", "--house-no", "12", "--zip", "6010")
    + ("--town", "Kriens"),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every command's output; they run side by side, as they are independent single calls."""
    root = tmp_path_factory.mktemp("assistant")
    with served_sandbox(root / "sandbox", job_seconds=1) as sandbox:
        workspace = CliWorkspace(root / "cli", sandbox, prefect=None)
        sandbox.reset()
        results = workspace.run_side_by_side(*COMMANDS.values(), timeout=60)
        counts = sandbox_counts(sandbox)
    assert counts == {"autocomplete4": 2, "buildingverification2": 1}
    return dict(zip(COMMANDS, results, strict=True))


def sandbox_counts(sandbox: ServedSandbox) -> dict[str, int]:
    return {entry["endpoint"]: entry["count"] for entry in sandbox.requests() if entry["api"] == "address"}


def table_rows(text: str) -> list[list[str]]:
    """The body rows of a rich table, as cell texts."""
    return [
        [cell.strip() for cell in line.strip().strip("│").split("│")]
        for line in text.splitlines()
        if line.strip().startswith("│")
    ]


def test_streets_starting_with_linden(answers: dict[str, subprocess.CompletedProcess[str]]) -> None:
    result = answers["streets"]
    assert result.returncode == 0, result.stderr
    assert "4 hits (streets, no town restriction)" in result.stdout
    rows = table_rows(result.stdout)
    found = {(row[0], row[1], row[2]) for row in rows}
    assert found == {
        ("6010", "Kriens", "Lindenstrasse"),
        ("6047", "Kastanienbaum", "Lindenweg"),
        ("6047", "Kastanienbaum", "Ausser-Lindenegg"),
        ("6047", "Kastanienbaum", "In der Linden"),
    }
    assert "Dorflindenstrasse" not in result.stdout


def test_towns_for_postcode_60_and_town_k(answers: dict[str, subprocess.CompletedProcess[str]]) -> None:
    result = answers["towns"]
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["variant"] == "towns"
    # The spec's example (6010 Kriens, 6047 Kastanienbaum) among every town of the postcode directory it
    # matches.
    towns = [(hit["zip_code"], hit["town_name"]) for hit in printed["results"]]
    assert towns == [
        ("6010", "Kriens"),
        ("6010", "Pilatus Kulm"),
        ("6047", "Kastanienbaum"),
        ("6056", "Kägiswil"),
        ("6064", "Kerns"),
    ]


def test_verify_building(answers: dict[str, subprocess.CompletedProcess[str]]) -> None:
    result = answers["building"]
    assert result.returncode == 0, result.stderr
    facts = {row[0]: row[1] for row in table_rows(result.stdout) if len(row) == 2}
    assert facts["PSTAT"].startswith("1 (") and facts["house key"] == "100000006"
    assert facts["verdict"] == "the building exists (house key 100000006)"
    assert (facts["street name"], facts["house no"], facts["zip code"], facts["town name"]) == (
        "Lindenstrasse",
        "12",
        "6010",
        "Kriens",
    )
