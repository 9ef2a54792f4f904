"""``postflows demo`` says where the run history is without the database password."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import URL

from flows.address_results import AddressBatchResult
from postflows import cli_common
from postflows.demo import run_demo

PASSWORD = "Canary-DbPw/4+g:h@i &9a1b~"
FINISHED = AddressBatchResult(
    run_id=7, accepted_rows=2, rejected_rows=0, house_numbers_split=0, result_rows=2, qstat={"1": 2}, moves=0
)
"""What the demo's batch returns (its run is not made here)."""


def test_the_demo_names_the_history_database_without_its_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = URL.create("postgresql+psycopg", "postflows", PASSWORD, "db.example", 5432, "history")
    monkeypatch.setenv("POSTFLOWS_DATABASE_URL", url.render_as_string(hide_password=False))

    def finished_run(work: Any, **_: Any) -> AddressBatchResult:
        return FINISHED

    monkeypatch.setattr(cli_common, "run_work", finished_run)
    run_demo(tmp_path / "demo")

    shown = capsys.readouterr().err
    assert "run history: postgresql+psycopg://postflows:***@db.example:5432/history" in shown
    assert "Canary-DbPw" not in shown


@pytest.mark.parametrize(
    ("where", "variable"),
    [
        ("environment", "POSTFLOWS_ADDRESS_SERVICE_URL"),
        ("environment", "POSTFLOWS_ADDRESS_SERVICE__URL"),
        (".env", "POSTFLOWS_ADDRESS_SERVICE_URL"),
        (".env", "POSTFLOWS_ADDRESS_SERVICE__URL"),
    ],
)
def test_the_demo_runs_on_the_sandbox_whichever_way_a_service_url_is_set(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    where: str,
    variable: str,
) -> None:
    from runtime.settings import get_settings

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSTFLOWS_ADDRESS_SERVICE_URL", raising=False)
    monkeypatch.delenv("POSTFLOWS_ADDRESS_SERVICE__URL", raising=False)
    if where == ".env":
        (tmp_path / ".env").write_text(f"{variable}=https://addresses.example/REST/v1\n", encoding="utf-8")
    else:
        monkeypatch.setenv(variable, "https://addresses.example/REST/v1")
    assert get_settings().address_service.url
    seen: list[str | None] = []

    def finished_run(work: Any, **_: Any) -> AddressBatchResult:
        seen.append(get_settings().address_service.url)
        return FINISHED

    monkeypatch.setattr(cli_common, "run_work", finished_run)
    run_demo(tmp_path / "demo")

    assert seen == [""]
    assert "the demo uses the embedded sandbox regardless" in capsys.readouterr().err


def test_make_run_ends_saying_how_to_call_postflows_from_a_new_shell() -> None:
    """``make run`` (dry: ``make -n``, with the install taken as done) ends with the two ways to reach the
    command that a fresh shell does not know: activating the virtual environment, or its full path."""
    root = Path(__file__).resolve().parents[2]
    outer = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")  # `make test` runs this test: no flags of its own
    shown = subprocess.run(
        ["make", "-n", "--no-print-directory", "-o", "install", "-o", ".venv/.installed", "run"],
        cwd=root,
        env={name: value for name, value in os.environ.items() if name not in outer},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert shown[0] == ".venv/bin/postflows demo"
    said = "\n".join(shown[1:])
    assert "source .venv/bin/activate" in said and ".venv/bin/postflows --help" in said
