"""History test fixtures: every test runs once on a SQLite file and once on a fresh PostgreSQL database.

PostgreSQL comes from ``POSTFLOWS_TEST_POSTGRES_URL`` (``scripts/with-postgres.sh`` starts one); without it
the PostgreSQL variants fail rather than skip, so a green run always means both databases were exercised.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import uuid4

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from history.db import dispose_engines, session_factory

POSTGRES_URL_ENV = "POSTFLOWS_TEST_POSTGRES_URL"
MISSING_POSTGRES = (
    f"{POSTGRES_URL_ENV} is not set: run through `make test` / scripts/with-postgres.sh, "
    f"or set {POSTGRES_URL_ENV} to a PostgreSQL server URL (postgresql+psycopg://user@host:port/db)"
)
DATABASE_KINDS = ("sqlite", "postgresql")


def postgres_server_url() -> str:
    """The test PostgreSQL server's URL; fails the test (never skips) when it is not configured."""
    url = os.environ.get(POSTGRES_URL_ENV)
    if not url:
        pytest.fail(MISSING_POSTGRES, pytrace=False)
    return url


@contextmanager
def fresh_database_url(kind: str, directory: Path) -> Iterator[str]:
    """An empty database of ``kind`` for one test, removed afterwards (with any cached engine on it)."""
    if kind == "sqlite":
        url = f"sqlite:///{directory / 'history' / 'history.db'}"
        try:
            yield url
        finally:
            dispose_engines(url)
        return
    if kind != "postgresql":
        raise ValueError(f"unknown database kind {kind!r}")
    server = make_url(postgres_server_url())
    name = f"postflows_test_{uuid4().hex[:20]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        url = server.set(database=name).render_as_string(hide_password=False)
        try:
            yield url
        finally:
            dispose_engines(url)
            with admin.connect() as connection:
                connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


def session_factory_for(url: str) -> sessionmaker[Session]:
    """The history's own session factory for ``url`` (migrated on first use), for tests of other packages."""
    return session_factory(url)


@pytest.fixture(
    params=[pytest.param("sqlite"), pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of an empty history database; parametrized over SQLite and PostgreSQL."""
    with fresh_database_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def history_factory(database_url: str) -> sessionmaker[Session]:
    """A migrated session factory on the test's database."""
    return session_factory_for(database_url)
