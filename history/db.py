"""Engines, migrations and the one session factory per database URL.

SQLite (the default) is tuned for many concurrent writers: WAL, foreign keys on, a generous busy timeout and
``BEGIN IMMEDIATE`` so a transaction never has to upgrade a read lock (which fails at once instead of
waiting). Its commits are not synced one by one (``synchronous=NORMAL``): a crash of the process loses none,
a power cut may lose the last ones; a commit that must survive even that is made with :func:`durable_begin`.
PostgreSQL needs nothing special; concurrent first use is serialised with an advisory lock in the
migration environment. A SQLite history file is its owner's alone (0600, and so are its ``-wal`` and
``-shm`` files, which SQLite gives the database's permissions), the directory made for it 0700.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
HEAD_REVISION = "0009"
"""The newest migration's revision (``migrations/versions``; a test holds it to Alembic's head): a database
stamped with it is at the newest schema, which a run's process learns from one query, without Alembic."""
SQLITE_BUSY_TIMEOUT_MS = 60_000
PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700

_factories: dict[str, sessionmaker[Session]] = {}
_factories_lock = threading.Lock()


def _is_sqlite(url: URL) -> bool:
    return url.get_backend_name() == "sqlite"


def _sqlite_file(url: URL) -> Path | None:
    database = url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def _private_sqlite_file(file: Path) -> None:
    """Create the database file (and its directory) readable by its owner only before SQLite opens it, and
    take group and others' access away from one that exists, with its WAL files."""
    if not file.parent.exists():
        file.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        os.chmod(file.parent, PRIVATE_DIR_MODE)
    # An existing history (or one another process made just now) keeps its content; its mode is checked below.
    with contextlib.suppress(FileExistsError):
        os.close(os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))
    for path in (file, file.with_name(file.name + "-wal"), file.with_name(file.name + "-shm")):
        try:
            info = path.stat()
        except FileNotFoundError:
            continue
        if info.st_mode & 0o177 and info.st_uid == os.getuid():
            os.chmod(path, PRIVATE_FILE_MODE)


def _configure_sqlite(engine: Engine, *, file_backed: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the sqlite3 module so "begin" below decides the lock mode.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys = ON")
            if file_backed:
                cursor.execute("PRAGMA journal_mode = WAL")
                cursor.execute("PRAGMA synchronous = NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def create_engine_for(url: str) -> Engine:
    """Create an engine for the history database at ``url``.

    Args:
        url: A SQLAlchemy URL, e.g. ``sqlite:////data/history.db`` or
            ``postgresql+psycopg://user@host/db``.

    Returns:
        The engine; for a SQLite file its parent directory and the file are created (its owner's alone) and
        the connection is set up for concurrent writers (WAL, ``foreign_keys=ON``, busy timeout, immediate
        transactions).
    """
    parsed = make_url(url)
    if not _is_sqlite(parsed):
        return create_engine(parsed, pool_pre_ping=True)
    file = _sqlite_file(parsed)
    connect_args = {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False}
    if file is None:
        # An in-memory database lives in its connection: every session must share that one connection.
        engine = create_engine(parsed, connect_args=connect_args, poolclass=StaticPool)
    else:
        _private_sqlite_file(file)
        engine = create_engine(parsed, connect_args=connect_args, pool_size=20, max_overflow=20)
    _configure_sqlite(engine, file_backed=file is not None)
    return engine


def alembic_config() -> Config:
    """An Alembic configuration pointing at the migrations shipped inside this package."""
    # Imported here: Alembic costs half a second to import and most processes only need it once.
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    return config


BUILD_EMPTY_AT_ONCE = "build_empty_at_once"
"""The Alembic config attribute by which :func:`migrate` lets the migration environment build an empty
database's newest schema in one step (the models' tables, stamped at head) instead of running every
migration."""


def at_head(engine: Engine) -> bool:
    """Whether the database behind ``engine`` is stamped with :data:`HEAD_REVISION` alone (False when it has
    no version table, is empty, or is at another revision: older, or newer than this code knows)."""
    try:
        with engine.connect() as connection:
            stamped = connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalars().all()
    except DBAPIError:
        return False
    return stamped == [HEAD_REVISION]


def migrate(engine: Engine) -> None:
    """Bring the database behind ``engine`` to the newest schema (Alembic ``upgrade head``); an empty one
    gets it in one step. A database already at :data:`HEAD_REVISION` is left as it is without loading
    Alembic (half a second that every run's process would pay).

    Safe to call repeatedly and from several processes at once: SQLite serialises on its write lock and
    PostgreSQL on an advisory lock taken by the migration environment.
    """
    if at_head(engine):
        return
    from alembic import command

    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        config.attributes[BUILD_EMPTY_AT_ONCE] = True
        command.upgrade(config, "head")


def session_factory(url: str) -> sessionmaker[Session]:
    """The session factory for ``url``, creating the engine and migrating the database on first use.

    Factories are cached per URL for the life of the process. Objects stay usable after their transaction
    commits (``expire_on_commit=False``) so a ``Run`` can be handed from one ``factory.begin()`` block to
    the next.

    Args:
        url: SQLAlchemy URL of the history database.

    Returns:
        A ``sessionmaker``; use it as ``with factory.begin() as session: ...``.
    """
    with _factories_lock:
        factory = _factories.get(url)
        if factory is None:
            engine = create_engine_for(url)
            try:
                migrate(engine)
            except BaseException:
                engine.dispose()
                raise
            factory = sessionmaker(bind=engine, expire_on_commit=False)
            _factories[url] = factory
        return factory


SQLITE_SYNCHRONOUS_FULL = 2
"""``PRAGMA synchronous`` at which SQLite syncs the write-ahead log at every commit."""


@contextlib.contextmanager
def durable_begin(factory: sessionmaker[Session]) -> Iterator[Session]:
    """``factory.begin()`` whose commit is on disk when the block ends, even should the power fail next.

    A SQLite history's commits are otherwise only as safe as the operating system's cache (WAL with
    ``synchronous=NORMAL``): this transaction runs on a connection at ``synchronous=FULL``, whose commit
    syncs the log with every commit before it, and the connection returns to its level afterwards. On
    PostgreSQL the transaction waits for its commit record to be flushed (``synchronous_commit`` on for it
    alone) should the server or the role have turned it off for speed; a stronger setting stays. It is
    what a submission's marker is written with before its request leaves, so a re-run after a power cut
    still finds it. An in-memory database has nothing to sync.
    """
    engine = factory.kw["bind"]
    if not _is_sqlite(engine.url):
        with factory.begin() as session:
            # "local", "remote_write", "on" and "remote_apply" all flush the commit here first: kept as set.
            if session.execute(text("SHOW synchronous_commit")).scalar() == "off":
                session.execute(text("SET LOCAL synchronous_commit TO on"))
            yield session
        return
    if _sqlite_file(engine.url) is None:
        with factory.begin() as session:
            yield session
        return
    with engine.connect() as connection:
        driver = connection.connection.driver_connection
        # Outside a transaction: SQLite refuses to change the level inside one.
        level = int(driver.execute("PRAGMA synchronous").fetchone()[0])
        if level < SQLITE_SYNCHRONOUS_FULL:
            driver.execute(f"PRAGMA synchronous = {SQLITE_SYNCHRONOUS_FULL}")
        try:
            with Session(bind=connection, expire_on_commit=False) as session, session.begin():
                yield session
        finally:
            if level < SQLITE_SYNCHRONOUS_FULL:
                driver.execute(f"PRAGMA synchronous = {level}")


def dispose_engines(url: str | None = None) -> None:
    """Close the pooled connections of cached factories (all, or the one for ``url``) and forget them."""
    with _factories_lock:
        urls = list(_factories) if url is None else [url]
        for key in urls:
            factory = _factories.pop(key, None)
            if factory is not None and factory.kw.get("bind") is not None:
                factory.kw["bind"].dispose()
