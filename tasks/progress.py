"""Progress of long work, shown twice: a Prefect progress artifact in the UI, and any in-process listener
(the CLI attaches a rich progress bar). Outside a flow run only the listeners are told.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from uuid import UUID

logger = logging.getLogger("postflows.progress")

ProgressListener = Callable[[str, float, str], None]
"""Called with (label, percent 0-100, detail)."""

_listeners: list[ProgressListener] = []


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
    """One tracked piece of work, such as a batch job or a run of individual queries."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.percent = 0.0
        self._artifact: UUID | None = None

    @classmethod
    async def start(cls, label: str) -> Progress:
        """Begin tracking ``label`` at 0 %."""
        progress = cls(label)
        flow = _flow_name()
        if flow is not None:
            from prefect.artifacts import acreate_progress_artifact

            try:
                progress._artifact = await acreate_progress_artifact(
                    0.0, key=artifact_key(flow), description=label
                )
            except Exception as error:  # noqa: BLE001 - progress display must never fail the run
                logger.debug("progress artifact unavailable: %s", error)
        progress._notify("")
        return progress

    async def update(self, percent: float, detail: str = "") -> None:
        """Set the progress to ``percent`` (clamped to 0-100)."""
        self.percent = max(0.0, min(100.0, float(percent)))
        if self._artifact is not None:
            from prefect.artifacts import aupdate_progress_artifact

            try:
                await aupdate_progress_artifact(
                    self._artifact, self.percent, description=detail or self.label
                )
            except Exception as error:  # noqa: BLE001
                logger.debug("progress artifact update failed: %s", error)
        self._notify(detail)

    def _notify(self, detail: str) -> None:
        for listener in list(_listeners):
            listener(self.label, self.percent, detail)
