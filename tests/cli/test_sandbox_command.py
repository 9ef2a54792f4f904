"""``postflows sandbox --request-log FILE`` (or ``POSTFLOWS_SANDBOX_REQUEST_LOG``) serves a sandbox that logs
every API request to that file; the option wins over the setting, and without either there is no log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from postflows.cli import app

runner = CliRunner()


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The apps ``postflows sandbox`` would serve (uvicorn is not started)."""
    apps: list[Any] = []
    monkeypatch.setattr("uvicorn.run", lambda served, **_: apps.append(served))
    return apps


@pytest.mark.parametrize(
    ("option", "setting", "expected"),
    [
        ("option.jsonl", "setting.jsonl", "option.jsonl"),
        (None, "setting.jsonl", "setting.jsonl"),
        (None, None, None),
    ],
)
def test_the_request_log_comes_from_the_option_else_the_setting(
    served: list[Any],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    option: str | None,
    setting: str | None,
    expected: str | None,
) -> None:
    if setting is not None:
        monkeypatch.setenv("POSTFLOWS_SANDBOX_REQUEST_LOG", str(tmp_path / setting))
    args = ["sandbox", "--memory", "--port", "8199"]
    if option is not None:
        args += ["--request-log", str(tmp_path / option)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (sandbox,) = served
    logged = sandbox.state.config.request_log
    if expected is None:
        assert logged is None
        assert "request log:" not in result.output
    else:
        assert logged == tmp_path / expected
        assert (tmp_path / expected).exists()
        assert "request log:" in result.output


def test_the_job_time_fault_plan_and_guesses_given_are_the_ones_served(
    served: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("POSTFLOWS_SANDBOX_GUESSES", "POSTFLOWS_SANDBOX_JOB_SECONDS", "POSTFLOWS_SANDBOX_FAULTS"):
        monkeypatch.delenv(name, raising=False)
    plan = '{"api": "newspaper", "kind": "http_status", "value": 503}'
    args = ["sandbox", "--memory", "--port", "8199", "--host", "127.0.0.2", "--job-seconds", "3.5"]
    result = runner.invoke(app, [*args, "--faults", plan, "--guesses", "other"])
    assert result.exit_code == 0, result.output
    (sandbox,) = served
    config = sandbox.state.config
    assert (config.job_seconds, config.guesses, config.listen_host) == (3.5, "other", "127.0.0.2")
    assert [(rule.api, rule.kind, rule.value) for rule in config.faults.rules] == [
        ("newspaper", "http_status", 503)
    ]
    assert "http://127.0.0.2:8199/newspaper" in result.output


def test_a_guesses_mode_it_does_not_know_is_a_usage_error(served: list[Any]) -> None:
    result = runner.invoke(app, ["sandbox", "--memory", "--guesses", "maybe"])
    assert result.exit_code == 2 and not served
    assert "--guesses" in result.output
