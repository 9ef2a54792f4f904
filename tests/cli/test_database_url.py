"""A database URL is masked wherever it is printed, a malformed one (that ``urlsplit`` refuses) too, and a
run history that cannot be read is one line naming the masked URL: exit 2, no traceback."""

from __future__ import annotations

import socket

import pytest
from typer.testing import CliRunner

from postflows.cli import app
from runtime.privacy import masked_url, url_secrets

runner = CliRunner()
MALFORMED = "postgresql+psycopg://u:PA55-secret@[::1/x"


@pytest.mark.parametrize(
    ("url", "masked", "secrets"),
    [
        (MALFORMED, "postgresql+psycopg://u:***@[::1/x", ["PA55-secret"]),
        (
            "postgresql+psycopg://u:p@ss@[::1/x?sslpassword=k3y&sslmode=require",
            "postgresql+psycopg://u:***@[::1/x?sslpassword=***&sslmode=require",
            ["p@ss", "k3y"],
        ),
        ("postgresql://[::1/x?password=pw", "postgresql://[::1/x?password=***", ["pw"]),
        ("postgresql://user@[::1/x", "postgresql://user@[::1/x", []),
    ],
)
def test_a_url_urlsplit_refuses_is_masked_and_its_secrets_found(
    url: str, masked: str, secrets: list[str]
) -> None:
    assert masked_url(url) == masked
    assert url_secrets(url) == secrets


def test_info_does_not_print_the_password_of_a_malformed_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTFLOWS_DATABASE_URL", MALFORMED)
    result = runner.invoke(app, ["info"])
    assert result.exit_code == 0, result.output
    assert "run history:      postgresql+psycopg://u:***@[::1/x (POSTFLOWS_DATABASE_URL)" in result.output
    assert "PA55-secret" not in result.output


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("args", [["history"], ["history", "3"]], ids=["list", "one-run"])
def test_a_history_that_cannot_be_read_is_one_line_naming_its_masked_url(
    monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    port = _closed_port()
    for url, shown in (
        (MALFORMED, "postgresql+psycopg://u:***@[::1/x"),
        (
            f"postgresql+psycopg://postflows:db-pa55word@127.0.0.1:{port}/runs",
            f"postgresql+psycopg://postflows:***@127.0.0.1:{port}/runs",
        ),
    ):
        monkeypatch.setenv("POSTFLOWS_DATABASE_URL", url)
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1, result.output
        assert lines[0].startswith(f"configuration error: the run history at {shown} cannot be read: ")
        assert "PA55-secret" not in result.output and "db-pa55word" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
