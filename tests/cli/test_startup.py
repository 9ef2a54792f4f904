"""What the ``postflows`` command imports before it answers: ``--help`` only the command line's own
machinery, a refused input file nothing of the flows' weight, ``postflows history`` neither SQLAlchemy nor
rich. Checked in processes of their own, as the console script starts, so a heavy import slipping back onto
the startup path fails here without any timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from history.db import dispose_engines, session_factory
from history.models import Run

REPO = Path(__file__).resolve().parents[2]
# Never imported to print help or refuse a file: the flows' engine, data frames, the history's ORM and the
# connectors' clients (a connector's codes and errors come without them).
HEAVY = (
    "prefect", "flows", "pandas", "numpy", "sqlalchemy", "alembic", "history", "openpyxl", "xlsxwriter",
    "httpx", "connectors.address_service.client", "connectors.commerce.client", "connectors.newspaper.client",
)  # fmt: skip
HELP_HEAVY = (*HEAVY, "httpx", "pydantic_settings", "connectors", "tasks", "sandbox", "runtime.settings")
# The flows' request models are read for the commands' options: pydantic models, nothing of a flow's engine;
# the newspaper forms among them are generated from the connector's request models (and what they import).
REQUESTS = (
    "flows", "flows.requests", "flows.forms", "flows.newspaper_forms", "flows.spec_forms",
    "connectors", "connectors.models", "connectors.newspaper", "connectors.newspaper.models",
    "connectors.newspaper.errors", "connectors.newspaper.codes", "connectors.errors", "connectors.jsontext",
    "connectors.limits",
)  # fmt: skip

# The console script's own code (``from postflows.cli import main; sys.exit(main())``), reporting the
# modules loaded when the command ends.
_PROBE = """
import json, sys
from postflows.cli import main
code = 0
try:
    main()
except SystemExit as exit:
    code = exit.code
print("\\nPROBE " + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _run(tmp_path: Path, *args: str) -> tuple[int, list[str], str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTFLOWS_", "PREFECT_"))}
    env.update(POSTFLOWS_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(REPO), COLUMNS="120")
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    output, _, probe = done.stdout.rpartition("\nPROBE ")
    assert probe, done.stderr
    probed = json.loads(probe)
    return probed["code"], probed["modules"], output, done.stderr


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [
        m
        for m in modules
        if any(m == name or m.startswith(name + ".") for name in names)
        and not any(m == light or m.startswith("flows.requests.") for light in REQUESTS)
    ]


def test_help_imports_only_the_command_line(tmp_path: Path) -> None:
    code, modules, output, _ = _run(tmp_path, "--help")
    assert code == 0
    assert "address-batch" in output and "history" in output
    assert _loaded(modules, HELP_HEAVY) == []


@pytest.mark.parametrize(
    "args",
    [
        ["address-batch", "empty.csv", "--out", "o"],
        ["address-query", "empty.csv", "--out", "o"],
        ["address-batch", "no-address.csv", "--out", "o"],
        ["address-validation", "no-address.csv", "--out", "o"],
        ["pickup-register", "empty.csv", "--out", "o"],
        ["pickup-points", "no-address.csv", "--out", "o"],
        ["address-labels", "empty.csv", "--out", "o"],
        ["return-order", "no-address.csv", "--out", "o"],
        ["newspaper-statistics", "empty.csv"],
    ],
)
def test_a_refused_file_imports_nothing_heavy(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "no-address.csv").write_text("Kunde;Telefon\n1;044 000 00 00\n")
    code, modules, _, stderr = _run(tmp_path, *args)
    assert code == 2
    assert stderr.startswith("refused: "), stderr
    assert _loaded(modules, HEAVY) == []


def _record(url: str, flows: list[str]) -> None:
    factory = session_factory(url)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with factory.begin() as session:
        for number, flow in enumerate(flows):
            started = start + timedelta(minutes=number)
            session.add(
                Run(
                    flow=flow,
                    state="COMPLETED",
                    started_at=started,
                    finished_at=started + timedelta(seconds=5),
                )
            )
    dispose_engines(url)


def test_history_lists_a_current_sqlite_history_without_sqlalchemy_or_rich(tmp_path: Path) -> None:
    database = tmp_path / "data" / "history.db"
    _record(f"sqlite:///{database}", ["address-batch", "address-query", "cleanup"])
    code, modules, output, stderr = _run(tmp_path, "history", "--limit", "2")
    assert code == 0, stderr
    assert output.index("cleanup") < output.index("address-query") and "address-batch" not in output
    assert "older runs: postflows history --limit 2 --before 2" in stderr
    assert _loaded(modules, (*HEAVY, "pydantic_settings", "rich")) == []


def test_the_report_reads_the_history_without_prefect(tmp_path: Path) -> None:
    database = tmp_path / "data" / "history.db"
    _record(f"sqlite:///{database}", ["address-batch", "address-query"])
    code, modules, output, stderr = _run(tmp_path, "report", "--out", "o", "--until", "2026-01-31")
    assert code == 0, stderr
    assert json.loads(output)["months"] == ["2026-01"]
    # The history's queries and the files' writers, but nothing of the flows' engine or the API clients.
    assert _loaded(modules, ("prefect", "tasks", "httpx", "sandbox")) == []
