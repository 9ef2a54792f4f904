"""Progress of long work, shown twice: a Prefect progress artifact in the UI, and any in-process listener
(the CLI attaches a rich progress bar). Outside a flow run only the listeners are told. A detail (a service's
status text) is scrubbed of the registered secrets before either sees it.

The artifact shows work that lasts (:data:`SHOW_AFTER_S`): a bar is for work someone watches, and each of its
updates is a request to the Prefect API. A batch job done at its first status look makes three requests
fewer; its run's summary says it is done.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from uuid import UUID

from core.redaction import redact

logger = logging.getLogger("postflows.progress")

ProgressListener = Callable[[str, float, str], None]
"""Called with (label, percent 0-100, detail)."""

_listeners: list[ProgressListener] = []

SHOW_AFTER_S = 5.0
"""Work that ends sooner shows no progress artifact; work that goes on longer shows it from its first update
after that (a batch job's next status look)."""


@contextmanager
def listening(listener: ProgressListener) -> Iterator[None]:
    """Tell ``listener`` about every progress update while the block runs."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


def _flow_name() -> str | None:
    """The name of the flow whose run this is; None outside a flow run."""
    try:
        from prefect.context import FlowRunContext
    except ImportError:  # pragma: no cover
        return None
    context = FlowRunContext.get()
    if context is None:
        return None
    return context.flow.name if context.flow is not None else "flow"


def artifact_key(flow: str) -> str:
    """The progress artifact's key: one per flow (``address-batch-progress``), whatever is tracked, so the
    UI finds a flow's progress under the same key in every run."""
    return re.sub(r"[^a-z0-9-]+", "-", f"{flow}-progress".lower()).strip("-")[:100]


class Progress:
    """One tracked piece of work, such as a batch job or a run of individual queries.

    The artifact is written in the background, one request at a time, always with the latest value: the work
    never waits for the Prefect server to show its progress, except for the last update (100 %), which
    is awaited so the UI ends on it. It is made at the first update once the work has lasted
    :data:`SHOW_AFTER_S`; listeners are told of every update from the start.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.percent = 0.0
        self._began = time.monotonic()
        self._artifact: UUID | None = None
        self._flow: str | None = None
        self._wanted: tuple[float, str] | None = None
        self._sender: asyncio.Future[None] | None = None

    @classmethod
    async def start(cls, label: str) -> Progress:
        """Begin tracking ``label`` at 0 %."""
        progress = cls(label)
        progress._flow = _flow_name()
        if progress._flow is not None and progress._lasted():
            progress._show(0.0, label)
        progress._notify("")
        return progress

    async def update(self, percent: float, detail: str = "") -> None:
        """Set the progress to ``percent`` (clamped to 0-100)."""
        self.percent = max(0.0, min(100.0, float(percent)))
        if self._flow is not None and self._lasted():
            self._show(self.percent, detail or self.label)
            if self.percent >= 100.0:
                await self.settled()
        self._notify(detail)

    async def settled(self) -> None:
        """Wait until the artifact shows the latest update."""
        if self._sender is not None:
            await asyncio.shield(self._sender)

    def _lasted(self) -> bool:
        """Whether the work has lasted long enough to show (or is shown already)."""
        return self._sender is not None or time.monotonic() - self._began >= SHOW_AFTER_S

    def _show(self, percent: float, description: str) -> None:
        self._wanted = (percent, redact(description))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.ensure_future(self._send())

    async def _send(self) -> None:
        from prefect.artifacts import acreate_progress_artifact, aupdate_progress_artifact

        while self._wanted is not None and self._flow is not None:
            percent, description = self._wanted
            self._wanted = None
            try:
                if self._artifact is None:
                    self._artifact = await acreate_progress_artifact(
                        percent, key=artifact_key(self._flow), description=description
                    )
                else:
                    await aupdate_progress_artifact(self._artifact, percent, description=description)
            except Exception as error:  # noqa: BLE001 - progress display must never fail the run
                logger.debug("progress artifact unavailable: %s", error)
                if self._artifact is None:
                    self._flow = None

    def _notify(self, detail: str) -> None:
        detail = redact(detail)
        for listener in list(_listeners):
            listener(self.label, self.percent, detail)
