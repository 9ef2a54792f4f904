"""Messages that say what to do: each names what was found, what was expected and the option that fixes it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from flows.address_batch import address_batch
from postflows.cli import app
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
runner = CliRunner()


def test_an_unknown_statistics_interval_lists_the_valid_ones(sandbox: Sandbox, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "newspaper-statistics",
            str(EXAMPLES / "statistics.csv"),
            "--interval",
            "QQ",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 2
    assert "'QQ' is not a statistics interval" in result.output
    assert "AZ, AZA, AZB" in result.output and "--interval" in result.output
    assert sum(sandbox.transport.calls.values()) == 0


def test_a_statistics_date_that_is_not_a_date_says_how_to_write_it(sandbox: Sandbox, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "newspaper-statistics",
            str(EXAMPLES / "statistics.csv"),
            "--date",
            "31.3.2025",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 2 and "YYYY-MM-DD" in result.output and "--date" in result.output


def test_a_notice_address_that_is_not_an_e_mail_is_refused_before_anything_is_sent(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    result = runner.invoke(app, ["structure-files", "9", "--notify", "not-an-email", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "'not-an-email' is not a valid e-mail address" in result.output and "--notify" in result.output
    assert sum(sandbox.transport.calls.values()) == 0


def test_statistics_not_due_is_an_informative_success(sandbox: Sandbox, tmp_path: Path) -> None:
    calendar = tmp_path / "calendar.csv"
    calendar.write_text("date\n2025-03-25\n2025-03-28\n2025-03-31\n", encoding="utf-8")
    result = runner.invoke(
        app,
        [
            "newspaper-statistics",
            str(EXAMPLES / "statistics.csv"),
            "--calendar",
            str(calendar),
            "--date",
            "2025-03-28",
            "--interval",
            "AZ",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert '"due_on": "2025-03-31"' in result.output and "not due" in result.output
    assert "Traceback" not in result.output and "ERROR" not in result.output
    assert sum(sandbox.transport.calls.values()) == 0


async def test_history_takes_command_and_flow_names(sandbox: Sandbox, tmp_path: Path) -> None:
    await call(
        address_batch, input_path=EXAMPLES / "address-batch.csv", output_dir=tmp_path / "out", max_wait_s=60
    )
    for name in ("address-batch", "ADDRESS-BATCH"):
        listing = runner.invoke(app, ["history", "--flow", name])
        assert listing.exit_code == 0 and "address-batch" in listing.output and "COMPLETED" in listing.output
    synced = runner.invoke(app, ["history", "--flow", "newspaper-sync"])
    assert synced.exit_code == 0 and "address-batch" not in synced.output
    unknown = runner.invoke(app, ["history", "--flow", "no-such-flow"])
    assert unknown.exit_code == 2
    assert "'no-such-flow' names no flow" in unknown.output and "newspaper-sync" in unknown.output


def test_version() -> None:
    from importlib.metadata import version

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"postflows {version('postflows')}"
