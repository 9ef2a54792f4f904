"""``deliverability --dates FILE`` names a refused line by number and column, never what it holds: a file of
secrets given by mistake is refused (exit 2) with no word of it printed or recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from postflows.cli import app

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_a_file_of_secrets_as_the_dates_is_refused_without_a_word_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = tmp_path / "app.env"
    secrets.write_text("DB_PASSWORD=hunter2-secret\nTOKEN=sk-live-42\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = runner.invoke(
        app,
        [
            "deliverability",
            str(REPO / "examples" / "commerce-addresses.csv"),
            "--dates",
            str(secrets),
            "--out",
            "out",
        ],
    )
    assert result.exit_code == 2, result.output
    assert f"{secrets}: line 1, column 1: expected a date YYYY-MM-DD" in result.output
    for word in ("DB_PASSWORD", "hunter2", "TOKEN", "sk-live"):
        assert word not in result.output
    assert not list(tmp_path.rglob("history.db"))  # nothing recorded for a refused run


def test_a_device_as_the_dates_is_refused_after_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(
        app,
        [
            "deliverability",
            str(REPO / "examples" / "commerce-addresses.csv"),
            "--dates",
            "/dev/zero",
            "--out",
            "out",
        ],
    )
    assert result.exit_code == 2, result.output
    assert "/dev/zero: a file of delivery dates holds at most 65,536 bytes; not read" in result.output
