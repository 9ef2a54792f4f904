"""How many requests reached each API endpoint of the sandbox, and how many of them the API accepted, so
that tests can prove what a client sent (``/_sandbox/requests``, ``/_sandbox/accepted``); kept in the
sandbox's state, shared by every process using its directory.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from sandbox.state import MemoryState, SandboxState, Table


class RequestCount(BaseModel):
    api: str
    method: str
    endpoint: str
    count: int


class RequestCounter:
    """How many requests reached each (api, method, endpoint), faulted ones included; thread-safe."""

    def __init__(self, state: SandboxState | None = None) -> None:
        self._state = state or MemoryState()
        self._counts: Table[int] = self._state.table("sandbox.requests")
        self._accepted: Table[int] = self._state.table("sandbox.accepted")

    def record(self, api: str, method: str, endpoint: str) -> None:
        self._add(self._counts, api, method, endpoint)

    def record_accepted(self, api: str, method: str, endpoint: str) -> None:
        """Count a request the API accepted (answered as a success, whatever reached the client)."""
        self._add(self._accepted, api, method, endpoint)

    def counts(self) -> list[RequestCount]:
        return self._listed(self._counts)

    def accepted(self) -> list[RequestCount]:
        """The accepted requests per (api, method, endpoint)."""
        return self._listed(self._accepted)

    def reset(self) -> None:
        self._counts.clear()
        self._accepted.clear()

    def _add(self, table: Table[int], api: str, method: str, endpoint: str) -> None:
        key = json.dumps([api, method.upper(), endpoint])
        with self._state.atomic():
            table.put(key, (table.get(key) or 0) + 1)

    @staticmethod
    def _listed(table: Table[int]) -> list[RequestCount]:
        items = sorted((tuple(json.loads(key)), count) for key, count in table.items())
        return [RequestCount(api=a, method=m, endpoint=e, count=n) for (a, m, e), n in items]
