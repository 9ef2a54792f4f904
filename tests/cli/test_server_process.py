"""``postflows server start`` runs Prefect's server with SQLite transactions that take the write lock when
they begin: the process hands Prefect a database configuration of its own (checked in a process of its own,
as the server's configuration is the process's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CHECK = """
import asyncio, sqlite3, sys
import sqlalchemy as sa
from prefect.server.database.dependencies import provide_database_interface
from postflows.server_process import writes_lock_when_they_begin

if sys.argv[2] == "ours":
    writes_lock_when_they_begin()
config = provide_database_interface().database_config
print(type(config).__name__)

async def main():
    engine = await config.engine()
    session = await config.session(engine)
    async with session:
        async with config.begin_transaction(session):  # a transaction Prefect does not mark for update
            await session.execute(sa.text("SELECT 1"))  # it begins with its first statement
            other = sqlite3.connect(sys.argv[1], timeout=0)
            try:
                other.execute("BEGIN IMMEDIATE")
                print("other writer got the lock")
            except sqlite3.OperationalError as error:
                print("other writer:", error)
            finally:
                other.close()
    await engine.dispose()

asyncio.run(main())
"""


def _run(database: Path, configuration: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(database), configuration],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{database}",
            "PREFECT_HOME": str(database.parent / "prefect-home"),
        },
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_on_sqlite_every_server_transaction_takes_the_write_lock_when_it_begins(tmp_path: Path) -> None:
    database = tmp_path / "prefect.db"
    assert _run(database, "ours") == ["ImmediateSqliteConfiguration", "other writer: database is locked"]
    # Prefect's own begins a transaction that has only read deferred: another writer is not held up.
    assert _run(database, "prefect's") == ["AioSqliteConfiguration", "other writer got the lock"]
