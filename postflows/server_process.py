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
    """Make every transaction of Prefect's SQLite database configuration begin immediate."""
    from prefect.server.database.configurations import AioSqliteConfiguration

    begin = AioSqliteConfiguration.begin_transaction

    @asynccontextmanager
    async def begin_immediate(
        self: AioSqliteConfiguration, session: Any, with_for_update: bool = False
    ) -> AsyncIterator[Any]:
        del with_for_update  # every transaction here may write: all of them take the lock first
        async with begin(self, session, with_for_update=True) as transaction:
            yield transaction

    AioSqliteConfiguration.begin_transaction = begin_immediate  # type: ignore[method-assign]


def main(argv: Sequence[str]) -> None:  # pragma: no cover - runs the server until it is stopped
    writes_lock_when_they_begin()
    from prefect.cli import app

    sys.argv = ["prefect", "server", "start", *argv]  # Prefect's command line reads its arguments there
    app()


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
