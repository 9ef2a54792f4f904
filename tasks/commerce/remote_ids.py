"""The remote ids a run records for the jobs of one kind: the run history holds each (api, kind, remote id)
once, so an id the service answers for a second request (the same user written differently, the same label
asked for twice) is recorded as ``<id><SEPARATOR><its key>``."""

from __future__ import annotations

import asyncio

from history.recorder import RunRecorder

SEPARATOR = " for "


class RemoteIds:
    """The remote ids this run's jobs of ``kind`` hold or are about to record, so that two requests the
    service answers with one id, sent at the same time, do not both claim it (the run's lease keeps other
    runs out)."""

    def __init__(self, recorder: RunRecorder, *, api: str, kind: str) -> None:
        self._recorder = recorder
        self._api = api
        self._kind = kind
        self._claimed: set[str] = set()
        self._lock = asyncio.Lock()

    async def claim(self, remote_id: str, key: str) -> str:
        """The remote id to record for ``remote_id`` answered to the request with ``key``."""
        async with self._lock:
            taken = remote_id in self._claimed or (
                await self._recorder.job_with_remote_id(api=self._api, kind=self._kind, remote_id=remote_id)
                is not None
            )
            recorded = f"{remote_id}{SEPARATOR}{key}" if taken else remote_id
            self._claimed.add(recorded)
            return recorded


def answered_id(recorded: str) -> str:
    """The service's id in a recorded remote id."""
    return recorded.split(SEPARATOR, 1)[0]
