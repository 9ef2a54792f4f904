"""The process ``postflows server start`` runs: Prefect's own ``prefect server start``, with one change when
the server's database is SQLite: a transaction the server opens to write takes SQLite's write lock when it
begins (``BEGIN IMMEDIATE``), not at its first write.

Prefect begins those transactions deferred. Two requests that each read and then write at once (two flow
runs created from one deployment by concurrent triggers, two slots of a rate limit taken) then collide: the
later one finds that the other wrote after its read, and SQLite refuses its write at once ("database is
locked"; its busy timeout does not apply to that case), which the server answers with 503. Begun immediate,
the later one waits for the other's commit (the busy timeout Prefect sets) and then goes through. Requests
that only read are not transactions and are not held up. PostgreSQL is left as Prefect has it.

``python -m postflows.server_process [options of prefect server start]``; :mod:`postflows.prefect_server`
starts it and recognises the process by :data:`SERVER_MODULE` in its arguments.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

SERVER_MODULE = "postflows.server_process"


def writes_lock_when_they_begin() -> None:
    """Hand Prefect's server, when its database is SQLite, a database configuration whose transactions all
    begin immediate: Prefect's SQLite configuration with ``begin_transaction`` overridden, given to the
    server through its documented injection point (``set_database_config``). Prefect 3.8.8 has no setting
    for the begin mode: it begins immediate only the transactions its code marks ``with_for_update``."""
    from prefect.server.database.configurations import AioSqliteConfiguration
    from prefect.server.database.dependencies import set_database_config
    from prefect.server.utilities.database import get_dialect
    from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL

    class ImmediateSqliteConfiguration(AioSqliteConfiguration):
        @asynccontextmanager
        async def begin_transaction(self, session: Any, with_for_update: bool = False) -> AsyncIterator[Any]:
            del with_for_update  # every transaction here may write: all of them take the lock first
            async with super().begin_transaction(session, with_for_update=True) as transaction:
                yield transaction

    url = PREFECT_API_DATABASE_CONNECTION_URL.value()
    if get_dialect(url).name == "sqlite":
        set_database_config(ImmediateSqliteConfiguration(connection_url=url))


def main(argv: Sequence[str]) -> None:  # pragma: no cover - runs the server until it is stopped
    writes_lock_when_they_begin()
    from prefect.cli import app

    sys.argv = ["prefect", "server", "start", *argv]  # Prefect's command line reads its arguments there
    app()


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
