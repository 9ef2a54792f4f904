"""Engine set-up, migrations on first use, and agreement between the models and the migrations."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Column, Engine, MetaData, String, Table, inspect, text
from sqlalchemy.engine import make_url

from history.db import (
    HEAD_REVISION,
    SQLITE_SYNCHRONOUS_FULL,
    alembic_config,
    at_head,
    create_engine_for,
    dispose_engines,
    durable_begin,
    migrate,
    session_factory,
)
from history.schema import METADATA
from history.store import list_runs, start_run
from tests.history.conftest import fresh_database_url

REPO_ROOT = Path(__file__).resolve().parents[2]
HISTORY_TABLES = {"runs", "steps", "remote_jobs", "job_events", "documents", "run_messages"}


def _head() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def _version(url: str) -> list[str]:
    engine = create_engine_for(url)
    try:
        with engine.connect() as connection:
            return list(connection.execute(text("SELECT version_num FROM alembic_version")).scalars())
    finally:
        engine.dispose()


def test_first_use_creates_schema_at_head(database_url: str) -> None:
    factory = session_factory(database_url)

    engine = factory.kw["bind"]
    assert set(inspect(engine).get_table_names()) >= HISTORY_TABLES
    assert _version(database_url) == [_head()]


def test_the_head_revision_named_in_the_code_is_alembics_head() -> None:
    assert _head() == HEAD_REVISION


def test_a_database_at_head_is_opened_without_loading_alembic(database_url: str, tmp_path: Path) -> None:
    session_factory(database_url)  # built and stamped at head
    probe = textwrap.dedent(
        """
        import sys
        from history.db import session_factory
        from history.store import list_runs
        factory = session_factory(sys.argv[1])
        with factory.begin() as session:
            list_runs(session)
        print("alembic" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, database_url],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"


def test_only_a_database_stamped_with_the_head_alone_is_taken_as_at_head(database_url: str) -> None:
    engine = create_engine_for(database_url)
    try:
        assert not at_head(engine)  # empty: no version table
        migrate(engine)
        assert at_head(engine)
        config = alembic_config()
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "-1")
        assert not at_head(engine)  # older: Alembic brings it up
        migrate(engine)
        assert at_head(engine)
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO alembic_version (version_num) VALUES ('0010')"))
        assert not at_head(engine)  # two heads, one unknown here: left to Alembic to refuse
    finally:
        engine.dispose()


def test_session_factory_is_cached_per_url(database_url: str) -> None:
    assert session_factory(database_url) is session_factory(database_url)


def test_migrate_again_keeps_data(database_url: str) -> None:
    factory = session_factory(database_url)
    with factory.begin() as session:
        start_run(session, flow="kept")

    migrate(factory.kw["bind"])
    dispose_engines(database_url)
    again = session_factory(database_url)

    assert again is not factory
    with again.begin() as session:
        assert [run.flow for run in list_runs(session)] == ["kept"]
    assert _version(database_url) == [_head()]


def test_downgrade_to_base_and_back(database_url: str) -> None:
    engine = create_engine_for(database_url)
    try:
        migrate(engine)
        config = alembic_config()
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "base")
        assert not HISTORY_TABLES & set(inspect(engine).get_table_names())
        migrate(engine)
        assert set(inspect(engine).get_table_names()) >= HISTORY_TABLES
    finally:
        engine.dispose()


def _upgrade_by_every_migration(engine: Engine) -> None:
    """``upgrade head`` as the Alembic command line runs it: every migration in turn."""
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def _schema(engine: Engine) -> dict[str, Any]:
    """Everything the database says of the history's tables: columns (type, nullability, default; in any
    order: a migration appends the columns it adds), keys, indexes, unique and check constraints."""
    inspector = inspect(engine)
    tables = sorted(set(inspector.get_table_names()) - {"alembic_version"})
    return {
        table: {
            "columns": sorted(
                (column["name"], str(column["type"]), column["nullable"], column.get("default"))
                for column in inspector.get_columns(table)
            ),
            "primary_key": inspector.get_pk_constraint(table)["constrained_columns"],
            "foreign_keys": sorted(
                (
                    key["name"],
                    tuple(key["constrained_columns"]),
                    key["referred_table"],
                    tuple(key["referred_columns"]),
                    tuple(sorted((key.get("options") or {}).items())),
                )
                for key in inspector.get_foreign_keys(table)
            ),  # fmt: skip
            "indexes": sorted(
                (index["name"], tuple(index["column_names"]), bool(index["unique"]))
                for index in inspector.get_indexes(table)
            ),
            "unique": sorted(
                (unique["name"], tuple(unique["column_names"]))
                for unique in inspector.get_unique_constraints(table)
            ),
            "checks": sorted(
                (check["name"], " ".join(check["sqltext"].split()))
                for check in inspector.get_check_constraints(table)
            ),
        }
        for table in tables
    }


def test_a_new_history_is_built_at_once_as_every_migration_builds_it(
    database_url: str, tmp_path: Path
) -> None:
    kind = make_url(database_url).get_backend_name()
    with fresh_database_url(kind, tmp_path / "by-migrations") as other_url:
        at_once, by_migrations = create_engine_for(database_url), create_engine_for(other_url)
        try:
            migrate(at_once)
            _upgrade_by_every_migration(by_migrations)
            assert _version(database_url) == _version(other_url) == [_head()]
            built = _schema(at_once)
            assert set(built) >= HISTORY_TABLES
            assert built == _schema(by_migrations)
        finally:
            at_once.dispose()
            by_migrations.dispose()


def test_models_and_migrations_agree(database_url: str) -> None:
    engine = create_engine_for(database_url)
    _upgrade_by_every_migration(engine)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, METADATA) == []

        # The comparison must be able to see a difference, or the assertion above proves nothing.
        changed = MetaData(naming_convention=METADATA.naming_convention)
        for table in METADATA.sorted_tables:
            table.to_metadata(changed)
        Table("extra_table", changed, Column("name", String(10), primary_key=True))
        diffs = compare_metadata(context, changed)
        assert [diff[0] for diff in diffs] == ["add_table"]
    engine.dispose()


def test_sqlite_engine_creates_directory_and_sets_pragmas(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'deep' / 'er' / 'history.db'}"
    engine = create_engine_for(url)
    try:
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 10_000
        assert (tmp_path / "deep" / "er" / "history.db").exists()
    finally:
        engine.dispose()


def test_a_durable_transaction_commits_with_a_sync_and_leaves_its_connection_as_it_was(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    factory = session_factory(url)

    def level(session: Any) -> int:
        return int(session.execute(text("PRAGMA synchronous")).scalar())

    try:
        with durable_begin(factory) as session:
            assert level(session) == SQLITE_SYNCHRONOUS_FULL
            start_run(session, flow="durable")
        with pytest.raises(RuntimeError, match="given up"), durable_begin(factory) as session:
            start_run(session, flow="rolled back")
            raise RuntimeError("given up")
        with factory.begin() as session:  # the one pooled connection, at its own level again
            assert level(session) < SQLITE_SYNCHRONOUS_FULL
            assert [run.flow for run in list_runs(session, flow="durable")] == ["durable"]
            assert list_runs(session, flow="rolled back") == []
    finally:
        dispose_engines(url)


@pytest.mark.postgres
def test_a_durable_transaction_waits_for_its_commit_on_postgresql_even_where_the_connection_would_not(
    tmp_path: Path,
) -> None:
    def synchronous_commit(session: Any) -> str:
        return str(session.execute(text("SHOW synchronous_commit")).scalar())

    with fresh_database_url("postgresql", tmp_path) as url:
        factory = session_factory(url)
        with factory.begin() as session:  # as a server or role tuned for speed would have it
            session.execute(text("SET synchronous_commit TO off"))
        with durable_begin(factory) as session:
            assert synchronous_commit(session) == "on"
            start_run(session, flow="durable")
        with factory.begin() as session:  # the same pooled connection, as it was
            assert synchronous_commit(session) == "off"
            assert [run.flow for run in list_runs(session, flow="durable")] == ["durable"]
            session.execute(text("SET synchronous_commit TO remote_apply"))
        with durable_begin(factory) as session:  # a stronger setting is kept
            assert synchronous_commit(session) == "remote_apply"


def test_a_durable_transaction_in_memory_is_an_ordinary_one() -> None:
    url = "sqlite://"
    factory = session_factory(url)
    try:
        with durable_begin(factory) as session:
            start_run(session, flow="in memory")
        with factory.begin() as session:
            assert [run.flow for run in list_runs(session, flow="in memory")] == ["in memory"]
    finally:
        dispose_engines(url)


def test_sqlite_enforces_foreign_keys(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    factory = session_factory(url)
    try:
        with pytest.raises(Exception, match="FOREIGN KEY"), factory.begin() as session:
            session.execute(
                text(
                    "INSERT INTO steps (run_id, name, attempt, outcome, started_at, duration_s) "
                    "VALUES (999, 'x', 1, 'ok', '2026-01-01 00:00:00', 1.0)"
                )
            )
    finally:
        dispose_engines(url)


def test_concurrent_first_use_from_several_processes(database_url: str, tmp_path: Path) -> None:
    # Each process imports everything first, then waits at a file barrier so all migrate at the same moment.
    script = textwrap.dedent(
        """
        import sys, time
        from pathlib import Path
        from history.db import session_factory
        from history.store import start_run
        url, barrier, me, count = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
        (barrier / me).touch()
        deadline = time.monotonic() + 30
        while len(list(barrier.iterdir())) < count and time.monotonic() < deadline:
            time.sleep(0.005)
        factory = session_factory(url)
        with factory.begin() as session:
            start_run(session, flow="process")
        """
    )
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    count = 4
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, database_url, str(barrier), str(number), str(count)],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for number in range(count)
    ]
    results = [process.communicate(timeout=60) for process in processes]

    for process, (_, stderr) in zip(processes, results, strict=True):
        assert process.returncode == 0, stderr
    with session_factory(database_url).begin() as session:
        assert len(list_runs(session, flow="process")) == count
    assert _version(database_url) == [_head()]


def test_in_memory_sqlite_is_one_shared_database() -> None:
    url = "sqlite://"
    try:
        factory = session_factory(url)
        with factory.begin() as session:
            start_run(session, flow="memory")
        with factory.begin() as session:
            assert [run.flow for run in list_runs(session)] == ["memory"]
    finally:
        dispose_engines(url)
