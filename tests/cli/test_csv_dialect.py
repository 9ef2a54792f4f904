"""``postflows --csv-dialect``: the dialect of the CSV files a command's flows write, as the setting."""

from __future__ import annotations

import os
import typing

import pytest
from typer.testing import CliRunner

from fileio.reports import CsvDialect
from postflows.cli import _global_options, app
from runtime.settings import Settings


def test_the_option_offers_the_dialects_the_writer_knows() -> None:
    hints = typing.get_type_hints(_global_options, include_extras=True)
    choice, _ = typing.get_args(typing.get_args(hints["csv_dialect"])[0])  # Annotated[Literal | None]
    assert typing.get_args(choice) == typing.get_args(CsvDialect)


def test_the_option_sets_the_setting_for_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("POSTFLOWS_CSV_DIALECT", "excel")  # restored after the test, whatever the option sets
    result = CliRunner().invoke(app, ["--csv-dialect", "rfc4180", "profiles"])
    assert result.exit_code == 0, result.output
    assert os.environ["POSTFLOWS_CSV_DIALECT"] == "rfc4180"
    assert Settings(_env_file=None).csv_style.dialect == "rfc4180"  # type: ignore[call-arg]


def test_an_unknown_dialect_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("POSTFLOWS_CSV_DIALECT", "excel")
    result = CliRunner().invoke(app, ["--csv-dialect", "tsv", "profiles"])
    assert result.exit_code == 2
    assert "'tsv' is not one of 'excel', 'rfc4180'" in result.output
    assert os.environ["POSTFLOWS_CSV_DIALECT"] == "excel"
