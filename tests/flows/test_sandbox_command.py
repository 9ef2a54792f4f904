"""Where the sandbox keeps its state: the embedded one and ``postflows sandbox`` in ``<data dir>/sandbox``
unless ``--state-dir`` or ``--memory`` says otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from typer.testing import CliRunner

from postflows.cli import app
from postflows.settings import Settings
from postflows.wiring import reset_sandbox, sandbox_transport
from sandbox.inprocess import SandboxTransport

runner = CliRunner()


def served_config_state_dir(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, list[Path | None]]:
    served: list[Path | None] = []

    def run(application: FastAPI, **options: object) -> None:
        served.append(application.state.config.state_dir)

    monkeypatch.setattr("uvicorn.run", run)
    result = runner.invoke(app, ["sandbox", *args])
    return result.exit_code, served


def test_served_sandbox_keeps_state_in_the_data_dir_unless_told(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    assert served_config_state_dir(monkeypatch) == (0, [(data_dir / "sandbox").resolve()])
    assert served_config_state_dir(monkeypatch, "--state-dir", str(tmp_path / "elsewhere")) == (
        0,
        [tmp_path / "elsewhere"],
    )
    assert served_config_state_dir(monkeypatch, "--memory") == (0, [None])
    assert served_config_state_dir(monkeypatch, "--memory", "--state-dir", str(tmp_path)) == (2, [])


def test_embedded_sandbox_keeps_state_in_the_data_dir(tmp_path: Path) -> None:
    reset_sandbox()
    try:
        transport = sandbox_transport(Settings(data_dir=tmp_path / "data"))
        assert isinstance(transport, SandboxTransport)
        assert transport.config.state_dir == (tmp_path / "data" / "sandbox").resolve()
        assert (tmp_path / "data" / "sandbox" / "sandbox-state.db").is_file()
    finally:
        reset_sandbox()
