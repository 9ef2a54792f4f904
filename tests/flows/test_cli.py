"""The ``postflows`` command in-process: exit codes, one-line reasons, the sandbox notice, history, demo."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from connectors.errors import ServerError
from flows.address_batch import address_batch
from postflows.cli import app
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import strict_json

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
runner = CliRunner()


def _json_tail(output: str) -> dict[str, object]:
    """The summary: the JSON object that starts on a line of its own at the end of the output."""
    lines = output.splitlines()
    start = max(number for number, line in enumerate(lines) if line == "{")
    return json.loads("\n".join(lines[start:]))


def test_address_batch_exits_zero_and_says_it_uses_the_sandbox(sandbox: Sandbox, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["address-batch", str(EXAMPLE), "--out", str(tmp_path / "out"), "--max-wait", "60"]
    )
    assert result.exit_code == 0, result.output
    assert "embedded sandbox" in result.output
    summary = _json_tail(result.output)
    assert summary["rejected_rows"] == 2 and (tmp_path / "out" / "results.xlsx").is_file()

    listing = runner.invoke(app, ["history"])
    assert listing.exit_code == 0 and "address-batch" in listing.output and "COMPLETED" in listing.output
    detail = runner.invoke(app, ["history", str(summary["run_id"])])
    assert detail.exit_code == 0
    assert "batch" in detail.output and "results.csv" in detail.output


@pytest.fixture
def narrow_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A 40-column terminal and a directory path far longer than that."""
    monkeypatch.setenv("COLUMNS", "40")
    deep = tmp_path / ("a-rather-long-directory-name-" * 4) / ("and-another-one-" * 4)
    deep.mkdir(parents=True)
    return deep


def test_missing_input_file_is_a_usage_error_before_anything_runs(
    sandbox: Sandbox, narrow_terminal: Path
) -> None:
    missing = narrow_terminal / "nope.csv"
    result = runner.invoke(app, ["address-batch", str(missing), "--out", str(narrow_terminal / "out")])
    assert result.exit_code == 2
    [line] = [line for line in result.output.splitlines() if "file not found" in line]
    assert line == f"refused: {missing}: file not found"
    assert sum(sandbox.transport.calls.values()) == 0


def test_failure_is_one_plain_line_whatever_the_terminal_width(
    sandbox: Sandbox, narrow_terminal: Path
) -> None:
    # Text that Rich would read as a closing markup tag, in a reason longer than the terminal is wide.
    bad = narrow_terminal / "bad.csv"
    bad.write_text("Kunde [/x];Telefon [bold]\n1;044 000 00 00\n", encoding="utf-8")
    result = runner.invoke(app, ["address-batch", str(bad), "--out", str(narrow_terminal / "out")])
    assert result.exit_code == 2, result.output
    [failure] = [line for line in result.output.splitlines() if line.startswith("refused:")]
    assert str(bad) in failure and "address columns" in failure
    assert "MarkupError" not in result.output


def test_an_error_with_its_own_exit_code_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from postflows.cli_common import run_work
    from tasks.submission import ResumeMismatch

    async def mismatch() -> None:
        raise ResumeMismatch("batch job", "key-1", "a" * 64, "b" * 64)

    with pytest.raises(typer.Exit) as leaving:
        run_work(mismatch, progress=False)
    assert leaving.value.exit_code == 2


@pytest.mark.parametrize(
    ("text", "hours"), [("7d", 168.0), ("12h", 12.0), ("30m", 0.5), ("0", 0.0), ("1.5", 1.5)]
)
def test_cleanup_durations(text: str, hours: float) -> None:
    from postflows.cli_requests import hours_of

    assert hours_of(text, "--older-than") == hours


def test_cleanup_refuses_a_bad_duration(sandbox: Sandbox) -> None:
    result = runner.invoke(app, ["cleanup", "--older-than", "a week"])
    assert result.exit_code == 2 and "7d, 12h or 30m" in result.output
    assert sum(sandbox.transport.calls.values()) == 0


def test_cleanup_keeps_an_owed_result_and_deletes_it_with_force(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.inject(api="address", endpoint="downloadfile/*", kind="http_status", value=503, times=None)
    with pytest.raises(ServerError):
        asyncio.run(call(address_batch, EXAMPLE, tmp_path / "out", max_wait_s=60))
    sandbox.config.faults.clear()
    kept = runner.invoke(app, ["cleanup", "--older-than", "0"])
    assert kept.exit_code == 0, kept.output
    summary = _json_tail(kept.output)
    assert summary["deleted"] == [] and len(summary["kept"]) == 2
    said = [line for line in kept.stderr.splitlines() if line.startswith("kept ")]
    assert len(said) == 2 and all(line.endswith(" is FINISHED, result not downloaded yet") for line in said)
    assert sandbox.transport.count("/deletefile") == 0

    forced = runner.invoke(app, ["cleanup", "--older-than", "0", "--force"])
    assert forced.exit_code == 0, forced.output
    summary = _json_tail(forced.output)
    assert isinstance(summary["deleted"], list) and len(summary["deleted"]) == 2 and summary["kept"] == {}
    assert sandbox.transport.count("/deletefile") == 2


def test_input_the_flow_refuses_fails_with_one_line_reason(sandbox: Sandbox, tmp_path: Path) -> None:
    # The header passes the check before the run; every row is rejected by the flow's row checks.
    bad = tmp_path / "bad.csv"
    bad.write_text("Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\nHans;Muster;Lindenstrasse;12;60;Kriens\n")
    result = runner.invoke(app, ["address-batch", str(bad), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    failure = [line for line in result.output.splitlines() if line.startswith("failed:")]
    assert len(failure) == 1 and str(bad) in failure[0] and "no row passed the input checks" in failure[0]
    assert sum(sandbox.transport.calls.values()) == 0


def test_real_endpoint_without_credentials_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_URL", "https://addresses.example.test/REST/v1")
    result = runner.invoke(app, ["address-batch", str(EXAMPLE), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "POSTFLOWS_ADDRESS_SERVICE_PASSWORD" in result.output
    assert "https://addresses.example.test/REST/v1" in result.output


def test_bad_column_mapping_is_a_usage_error(sandbox: Sandbox, tmp_path: Path) -> None:
    result = runner.invoke(app, ["address-batch", str(EXAMPLE), "--out", str(tmp_path), "--map", "Ort"])
    assert result.exit_code == 2 and "HEADER=FIELD" in result.output


def test_autocomplete_and_verify_building(sandbox: Sandbox) -> None:
    streets = runner.invoke(app, ["autocomplete", "streets", "--street", "Linden", "--json"])
    assert streets.exit_code == 0, streets.output
    names = {hit["street_name"] for hit in _json_tail(streets.output)["results"]}  # type: ignore[union-attr]
    assert {"Lindenstrasse", "Lindenweg", "Ausser-Lindenegg", "In der Linden"} <= names
    assert "Dorflindenstrasse" not in names

    towns = runner.invoke(app, ["autocomplete", "towns", "--zip", "60", "--town", "K"])
    assert towns.exit_code == 0 and "Kriens" in towns.output and "Kastanienbaum" in towns.output

    refused = runner.invoke(app, ["autocomplete", "buildings", "--street", "Linden"])
    assert refused.exit_code == 1 and "house number" in refused.output

    filtered = runner.invoke(
        app, ["autocomplete", "towns", "--zip", "60", "--zip-filter-mode", "0", "--json"]
    )
    assert filtered.exit_code == 0, filtered.output
    not_sent = runner.invoke(
        app, ["autocomplete", "towns", "--zip", "60", "--zip-filter-mode", "1", "--version", "3"]
    )
    assert not_sent.exit_code == 1 and "autocomplete4 only" in not_sent.output
    assert sandbox.transport.count("/autocomplete3") == 0

    building = runner.invoke(
        app,
        [
            "verify-building",
            "--street",
            "Lindenstrasse",
            "--house-no",
            "12",
            "--zip",
            "6010",
            "--town",
            "Kriens",
            "--json",
        ],
    )
    assert building.exit_code == 0, building.output
    answer = _json_tail(building.output)
    assert answer["house_key"] == 100000006
    assert answer["verdict"] == "the building exists (house key 100000006)"


def test_verify_building_gives_a_verdict_and_pstat_as_far_as_it_is_known(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = [
        "verify-building",
        "--street",
        "Lindenstrasse",
        "--house-no",
        "999",
        "--zip",
        "6010",
        "--town",
        "Kriens",
    ]
    missing = runner.invoke(app, asked)
    assert missing.exit_code == 0, missing.output
    text = " ".join(missing.output.split())
    assert (
        "not found as given" in text
        and "not published" in text
        and "POSTFLOWS_ADDRESS_PSTAT_MEANINGS" in text
    )

    monkeypatch.setenv("POSTFLOWS_ADDRESS_PSTAT_MEANINGS", '{"3": "the street exists, not the number"}')
    named = runner.invoke(app, asked)
    assert "3 (the street exists, not the number)" in " ".join(named.output.split())

    respelled = runner.invoke(
        app,
        [
            "verify-building",
            "--street",
            "lindenstrasse",
            "--house-no",
            "12",
            "--zip",
            "6010",
            "--town",
            "Kriens",
            "--json",
        ],
    )
    assert _json_tail(respelled.output)["verdict"].startswith("the building exists")


def test_demo_runs_the_batch_and_says_where_everything_is(sandbox: Sandbox, tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--out", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    assert "demo finished" in result.output and "postflows history" in result.output
    assert (tmp_path / "demo" / "results.csv").is_file()
    labelled = [line.split(": ", 1)[1] for line in result.output.splitlines() if "result file: " in line]
    assert {Path(path).name for path in labelled} == {
        "results.csv", "results.xlsx", "moves.csv", "review.xlsx", "writeback-sandbox.csv", "qstat.png"
    }  # fmt: skip
    assert (tmp_path / "demo" / "download" / "result.txt").is_file()  # named by its content


@pytest.mark.parametrize("guesses", ["ours", "other"])
def test_the_demo_is_green_under_both_answer_sets_of_the_sandbox(
    guesses: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``make run``'s demo on the embedded sandbox, answering every registered guess our way and the other
    plausible way (docs/guesses.md): the batch completes once either way, and its files are written."""
    from runtime.wiring import reset_sandbox

    monkeypatch.setenv("POSTFLOWS_SANDBOX_GUESSES", guesses)
    monkeypatch.setenv("POSTFLOWS_SANDBOX_JOB_SECONDS", "0.4")
    reset_sandbox()
    try:
        result = runner.invoke(app, ["demo", "--out", str(tmp_path / "demo")])
    finally:
        reset_sandbox()
    assert result.exit_code == 0, result.output
    assert "demo finished" in result.output
    assert (tmp_path / "demo" / "results.csv").is_file() and (tmp_path / "demo" / "review.xlsx").is_file()


def test_map_ignore_leaves_a_column_out_of_the_address(sandbox: Sandbox, tmp_path: Path) -> None:
    source = tmp_path / "kunden.csv"
    source.write_text(
        "Vorname;Name;Strasse;PLZ;Ort;Land\nAnna;Meier;Bahnhofstrasse 12;8001;Zürich;Narnia\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = ["address-batch", str(source), "--out", str(out), "--dry-run"]
    result = runner.invoke(app, [*args, "--map", "Land=ignore"])
    assert result.exit_code == 0, result.output
    assert not (out / "rejected.csv").exists()
    assert "Narnia" in (out / "upload.txt").read_text(encoding="cp1252")
    plan = strict_json((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["house_numbers"]["split"] == 1 and plan["rows"] == {"input": 1, "sent": 1, "rejected": 0}


def test_a_command_line_flow_run_opens_no_sync_client_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's look-ups of the result storage (one of them resolving the run's name) use the one sync
    client the command opens around the run, instead of one each, with its TLS context and CSRF token."""
    import prefect.client.orchestration as orchestration
    from prefect import flow

    from postflows.cli_common import run_flow, run_work

    made: list[object] = []
    real_init = orchestration.SyncPrefectClient.__init__

    def counted(client: object, *args: object, **kwargs: object) -> None:
        made.append(client)
        real_init(client, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(orchestration.SyncPrefectClient, "__init__", counted)

    @flow(name="named-run", flow_run_name="named-{number}")
    async def named(number: int) -> int:
        return number

    assert run_work(lambda: named(1), progress=False) == 1
    on_its_own = len(made)
    made.clear()
    assert run_flow(lambda: named(2), progress=False) == 2
    assert on_its_own >= 2
    assert len(made) == 1
