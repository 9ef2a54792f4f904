"""Alembic environment for the run history: runs against a passed-in connection or a URL.

``history.db.migrate`` hands over an open connection in ``config.attributes["connection"]``, and says that an
empty database may get the newest schema at once (:data:`history.db.BUILD_EMPTY_AT_ONCE`). From the
command line the URL comes from ``-x url=...``, else it is the run history the settings name
(``POSTFLOWS_DATABASE_URL``, else SQLite in the data dir; :func:`core.locations.history_url`).
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection, inspect, text

from history.db import BUILD_EMPTY_AT_ONCE, create_engine_for
from history.schema import METADATA

# Any constant works; it only has to be the same for every process migrating the same database.
MIGRATION_LOCK_ID = 0x706F7374666C6F77  # "postflow"

config = context.config
target_metadata = METADATA


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
    if url:
        return str(url)
    # The Alembic command line is a way into the run history like any postflows command: it finds the
    # history where the settings say it is (the one arrow from history up to postflows, in pyproject.toml).
    from core.locations import history_url

    return history_url()


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Two processes starting at once must not both create the schema: the second waits here and
            # then finds the version table already at head.
            connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": MIGRATION_LOCK_ID})
        if config.attributes.get(BUILD_EMPTY_AT_ONCE) and _empty(connection):
            # The schema every migration in turn would build (tests/history/test_db.py holds the two equal),
            # made in one step and stamped at head: a new history costs a few statements, not each
            # migration's table rebuilds.
            target_metadata.create_all(connection)
            context.get_context().stamp(context.script, "head")
        else:
            context.run_migrations()


def _empty(connection: Connection) -> bool:
    """Whether the database holds none of the history's tables (new, or taken down to base)."""
    return not set(inspect(connection).get_table_names()) & set(target_metadata.tables)


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    if config.config_file_name is not None:
        fileConfig(config.config_file_name, disable_existing_loggers=False)
    engine = create_engine_for(_url())
    try:
        with engine.begin() as connection:
            _run(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
