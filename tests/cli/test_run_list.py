"""``postflows history``'s listing: pages of runs newest first, the same read with sqlite3 as through the
history store, an index for ``--flow``, and the history's URL found as the settings find it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from typer.testing import CliRunner

from core.locations import history_url
from history.db import alembic_config, dispose_engines, session_factory
from history.models import Run
from postflows import run_list
from postflows.cli import app
from runtime.settings import Settings

FLOWS = ["address-batch", "cleanup", "address-batch", "address-query", "address-batch", "cleanup", "cleanup"]


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    """A migrated SQLite history holding the runs of :data:`FLOWS`, ids 1… in that order; run 3 unfinished."""
    database_url = f"sqlite:///{tmp_path / 'history.db'}"
    factory = session_factory(database_url)
    start = datetime(2026, 3, 1, 8, 0, 0, 123456, tzinfo=UTC)
    with factory.begin() as session:
        for number, flow in enumerate(FLOWS):
            started = start + timedelta(minutes=number)
            finished = None if number == 2 else started + timedelta(seconds=90)
            session.add(
                Run(
                    flow=flow,
                    state="RUNNING" if finished is None else "COMPLETED",
                    started_at=started,
                    finished_at=finished,
                    idempotency_key=f"key-{number}",
                    flow_run_id=None if number % 2 else f"fr-{number}",
                )
            )
    yield database_url
    dispose_engines(database_url)


def _ids(page: run_list.RunPage) -> list[int]:
    return [run.id for run in page.runs]


def test_the_schema_head_is_alembics() -> None:
    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == run_list.schema_head()


def test_a_second_head_sends_the_listing_to_the_store(tmp_path: Path) -> None:
    (tmp_path / "0001_a.py").write_text('revision: str = "0001"\ndown_revision: str | None = None\n')
    (tmp_path / "0002_b.py").write_text('revision = "0002"\ndown_revision = "0001"\n')
    assert run_list.schema_head(tmp_path) == "0002"
    (tmp_path / "0003_c.py").write_text("revision = '0003'\ndown_revision = '0001'\n")
    run_list.schema_head.cache_clear()
    assert run_list.schema_head(tmp_path) is None


def test_the_listing_reads_columns_of_the_runs_table() -> None:
    assert set(run_list.COLUMNS) <= set(Run.__table__.columns.keys())


def test_pages_newest_first_until_the_last(url: str) -> None:
    first = run_list.list_runs(url, limit=3)
    assert _ids(first) == [7, 6, 5] and first.more and first.next_before == 5
    second = run_list.list_runs(url, limit=3, before=first.next_before)
    assert _ids(second) == [4, 3, 2] and second.next_before == 2
    last = run_list.list_runs(url, limit=3, before=second.next_before)
    assert _ids(last) == [1] and not last.more and last.next_before is None
    exact = run_list.list_runs(url, limit=7)
    assert len(exact.runs) == 7 and not exact.more  # no further page when exactly the limit is left


def test_one_flow_paged(url: str) -> None:
    page = run_list.list_runs(url, limit=2, flow="address-batch")
    assert _ids(page) == [5, 3] and page.more
    assert _ids(run_list.list_runs(url, limit=2, flow="address-batch", before=3)) == [1]
    assert run_list.list_runs(url, flow="nothing").runs == []


def test_sqlite3_reads_what_the_history_store_reads(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = run_list.list_runs(url, limit=5, before=7)
    monkeypatch.setattr(run_list, "schema_head", lambda: "not-this-one")  # an older schema: through the store
    stored = run_list.list_runs(url, limit=5, before=7)
    assert fast == stored
    unfinished = next(run for run in fast.runs if run.id == 3)
    assert unfinished.finished_at is None and unfinished.duration is None and unfinished.state == "RUNNING"
    finished = fast.runs[0]
    assert finished.started_at == datetime(2026, 3, 1, 8, 5, 0, 123456, tzinfo=UTC)
    assert finished.duration == timedelta(seconds=90) and finished.idempotency_key == "key-5"


def test_an_unmigrated_history_is_migrated_by_the_store(tmp_path: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'new' / 'history.db'}"
    try:
        assert run_list.list_runs(database_url).runs == []
        with sqlite3.connect(tmp_path / "new" / "history.db") as connection:
            version = connection.execute("SELECT version_num FROM alembic_version").fetchall()
        assert version == [(run_list.schema_head(),)]
    finally:
        dispose_engines(database_url)


@pytest.mark.parametrize("flow", [None, "cleanup"])
def test_the_query_uses_an_index_not_a_scan(url: str, flow: str | None) -> None:
    sql, arguments = run_list.query(flow, before=5)
    path = run_list.sqlite_file(url)
    assert path is not None
    with sqlite3.connect(path) as connection:
        plan = " ".join(row[-1] for row in connection.execute(f"EXPLAIN QUERY PLAN {sql}", [*arguments, 20]))
    assert "USE TEMP B-TREE" not in plan, plan  # no sort of the matches
    if flow is None:
        assert "USING INTEGER PRIMARY KEY" in plan, plan
    else:
        assert "ix_runs_flow_id" in plan, plan


def test_the_command_pages(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTFLOWS_DATABASE_URL", url)
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(app, ["history", "--limit", "2", "--flow", "cleanup"])
    assert result.exit_code == 0, result.output
    assert result.stderr == "older runs: postflows history --limit 2 --before 6 --flow cleanup\n"
    header, rule, *rows = result.stdout.splitlines()
    assert header.split() == ["id", "flow", "state", "started", "(UTC)", "duration", "key", "flow", "run"]
    assert set(rule.replace("  ", "")) == {"-"}
    assert [row.split() for row in rows] == [
        ["7", "cleanup", "COMPLETED", "2026-03-01", "08:06:00", "1m30s", "key-6", "fr-6"],
        ["6", "cleanup", "COMPLETED", "2026-03-01", "08:05:00", "1m30s", "key-5", "-"],
    ]
    result = CliRunner().invoke(app, ["history", "--limit", "2", "--flow", "cleanup", "--before", "6"])
    assert [line.split()[0] for line in result.stdout.splitlines()[2:]] == ["2"]
    assert result.stderr == ""


@pytest.mark.parametrize(
    "environment",
    [
        {},
        {"POSTFLOWS_DATA_DIR": "elsewhere"},
        {"postflows_data_dir": "lower-case"},
        {"POSTFLOWS_DATABASE_URL": "postgresql+psycopg://u:p@db.example/history"},
        {"POSTFLOWS_DATABASE_URL": "", "POSTFLOWS_DATA_DIR": "empty-url"},
        {"Postflows_Database_Url": "sqlite:////srv/history.db", "POSTFLOWS_DATA_DIR": "ignored"},
    ],
)
def test_history_url_is_the_settings(
    environment: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    for name in ("POSTFLOWS_DATA_DIR", "POSTFLOWS_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert history_url() == Settings().effective_database_url


def test_history_url_reads_a_dot_env_file_as_the_settings_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("POSTFLOWS_DATA_DIR", "POSTFLOWS_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text('export POSTFLOWS_DATA_DIR="from dot env"\n', encoding="utf-8")
    assert history_url() == f"sqlite:///{(tmp_path / 'from dot env' / 'history.db').resolve()}"
    assert history_url() == Settings().effective_database_url


def test_the_command_shows_a_crashed_run(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with session_factory(url).begin() as session:
        run = session.get(Run, 7)
        assert run is not None
        run.state, run.error = "CRASHED", "SystemExit: 1"
    monkeypatch.setenv("POSTFLOWS_DATABASE_URL", url)
    monkeypatch.setenv("COLUMNS", "200")
    listed = CliRunner().invoke(app, ["history", "--limit", "1"])
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines()[2].split()[:3] == ["7", "cleanup", "CRASHED"]
    shown = CliRunner().invoke(app, ["history", "7"])
    assert shown.exit_code == 0, shown.output
    assert "CRASHED" in shown.stdout and "error: SystemExit: 1" in shown.stdout
