"""Files and batch jobs of one sandbox instance, and how a job's state follows from elapsed time.

Records are kept in the tables of the app's :class:`~sandbox.state.SandboxState`; file contents and job
outputs in tables of their own, so polling a job never reads its bytes.

A job advances by the clock alone (no background thread): for a duration ``D`` it is New for the first
10 %, Waiting until 25 %, then Running with Progress rising to 100 %, and at ``D`` it reaches its outcome
(Finished, or Failed/Error/Canceled/Unknown when a fault asked for it).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from enum import IntEnum
from typing import Literal

from sandbox.state import SandboxState

MAX_FILES = 1000
MAX_JOBS = 500


# The sandbox's own copy of the §2.6 table (it never imports the connector: STYLE.md 12).
# pylint: disable=duplicate-code
class TokenStatus(IntEnum):
    """§2.6 batch token status."""

    NEW = 0
    ERROR = 1
    WAITING = 2
    RUNNING = 3
    FINISHED = 4
    FAILED = 5
    CANCELED = 6
    UNKNOWN = 7


# pylint: enable=duplicate-code
OUTCOME_OF_FAULT: dict[str, TokenStatus] = {
    "failed": TokenStatus.FAILED,
    "error": TokenStatus.ERROR,
    "canceled": TokenStatus.CANCELED,
    "unknown": TokenStatus.UNKNOWN,
}
_MESSAGES = {
    TokenStatus.NEW: "Batch created",
    TokenStatus.WAITING: "Waiting for processing",
    TokenStatus.FINISHED: "Batch finished",
    TokenStatus.FAILED: "Batch failed",
    TokenStatus.ERROR: "Error while processing the batch",
    TokenStatus.CANCELED: "Batch canceled",
    TokenStatus.UNKNOWN: "Batch state unknown",
}


@dataclass
class StoredFile:
    """An uploaded file or a created output file (``content`` only as read by :meth:`JobStore.file`)."""

    token: str
    kind: Literal["upload", "output"]
    created_at: float
    content: bytes = b""
    batch_token: str | None = None


@dataclass
class BatchJob:
    """A submitted alignment. ``output`` is computed at submission and released when the job finishes; only
    :meth:`JobStore.job_of_output` reads it back."""

    token: str
    key: str
    input_token: str
    output_token: str
    started_at: float
    duration: float
    outcome: TokenStatus
    settlement_id: int
    output: bytes = b""
    output_is_zip: bool = False
    failure: str = ""
    billing_reference: str = ""
    client_identifier: str = ""
    client_name: str = ""
    # Replace item -> token of the created file receiving that extra output (aligned keys).
    extra_outputs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BatchProgress:
    token_status: TokenStatus
    progress: int
    remaining_seconds: int
    message: str
    start: float
    last_update: float


def progress_of(job: BatchJob, now: float, *, waiting: bool = True) -> BatchProgress:
    """The state of ``job`` at epoch second ``now``; without ``waiting`` it stays New until it runs (the
    other answer of the guess ``address-service.token-status-transitions``)."""
    elapsed = max(0.0, now - job.started_at)
    duration = max(0.0, job.duration)
    remaining = max(0, math.ceil(duration - elapsed))
    if elapsed >= duration:
        message = job.failure or _MESSAGES[job.outcome]
        progress = 100 if job.outcome == TokenStatus.FINISHED else 0
        return BatchProgress(job.outcome, progress, 0, message, job.started_at, job.started_at + duration)
    if elapsed < 0.1 * duration or (not waiting and elapsed < 0.25 * duration):
        return BatchProgress(
            TokenStatus.NEW, 0, remaining, _MESSAGES[TokenStatus.NEW], job.started_at, job.started_at
        )
    if elapsed < 0.25 * duration:
        changed = job.started_at + 0.1 * duration
        return BatchProgress(
            TokenStatus.WAITING, 0, remaining, _MESSAGES[TokenStatus.WAITING], job.started_at, changed
        )
    percent = min(99, int((elapsed - 0.25 * duration) / (0.75 * duration) * 100))
    return BatchProgress(
        TokenStatus.RUNNING, percent, remaining, f"Running ({percent} %)", job.started_at, now
    )


def _service_zone() -> tzinfo:
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo("Europe/Zurich")
    except Exception:  # no time zone database installed: Swiss standard time
        return timezone(timedelta(hours=1))


_ZONE = _service_zone()


def date_literal(epoch_seconds: float) -> str:
    """``/Date(<ms since epoch><+hhmm>)/`` with the service's (Swiss) UTC offset at that instant."""
    instant = datetime.fromtimestamp(epoch_seconds, UTC).astimezone(_ZONE)
    return f"/Date({int(round(epoch_seconds * 1000))}{instant.strftime('%z')})/"


class JobStore:
    """Files and jobs, bounded (the oldest entries go first)."""

    def __init__(self, state: SandboxState) -> None:
        self._state = state
        self._files = state.table("address.files")
        self._contents = state.table("address.file_contents")
        self._jobs = state.table("address.jobs")
        self._outputs = state.table("address.job_outputs")

    @staticmethod
    def new_token() -> str:
        return str(uuid.uuid4())

    def next_settlement(self) -> int:
        return self._state.next_id("address.settlement", 4_200_001)

    def add_file(self, stored: StoredFile) -> None:
        with self._state.atomic():
            self._files.put(stored.token, replace(stored, content=b""))
            self._contents.put(stored.token, stored.content)
            for token in self._files.trim(MAX_FILES):
                self._contents.pop(token)

    def file(self, token: str) -> StoredFile | None:
        """The file with its content."""
        with self._state.atomic():
            stored: StoredFile | None = self._files.get(token)
            if stored is None:
                return None
            return replace(stored, content=self._contents.get(token) or b"")

    def add_job(self, job: BatchJob, extras: Mapping[str, bytes] | None = None) -> None:
        """Keep ``job`` with its output; ``extras`` (file token -> content) become the contents of its extra
        output files, which count among the files like any other."""
        with self._state.atomic():
            self._jobs.put(job.token, replace(job, output=b""))
            self._outputs.put(job.token, job.output)
            for token in self._jobs.trim(MAX_JOBS):
                self._outputs.pop(token)
            for token in (job.output_token, *job.extra_outputs.values()):
                stored: StoredFile | None = self._files.get(token)
                if stored is not None:
                    self._files.put(token, replace(stored, batch_token=job.token))
            for token, content in (extras or {}).items():
                if self._files.get(token) is not None:
                    self._contents.put(token, content)

    def job(self, token: str) -> BatchJob | None:
        """The job without its output bytes."""
        found: BatchJob | None = self._jobs.get(token)
        return found

    def job_of_output(self, token: str) -> BatchJob | None:
        """The job writing to output file ``token``, or the job whose batch token it is, with its output."""
        with self._state.atomic():
            job: BatchJob | None = self._jobs.get(token)
            if job is None:
                stored: StoredFile | None = self._files.get(token)
                if stored is None or stored.batch_token is None:
                    return None
                job = self._jobs.get(stored.batch_token)
            if job is None or token not in (job.token, job.output_token):
                return None
            return replace(job, output=self._outputs.get(job.token) or b"")

    def extra_output(self, token: str) -> tuple[BatchJob, str, bytes] | None:
        """The job writing extra output file ``token``, its replace item and the content, or None."""
        with self._state.atomic():
            stored: StoredFile | None = self._files.get(token)
            if stored is None or stored.batch_token is None:
                return None
            job: BatchJob | None = self._jobs.get(stored.batch_token)
            if job is None:
                return None
            item = next((item for item, file in job.extra_outputs.items() if file == token), None)
            if item is None:
                return None
            return job, item, self._contents.get(token) or b""

    def file_tokens(self) -> list[str]:
        """The tokens of every file the service still holds (uploaded, created or written by a job)."""
        return self._files.keys()

    def delete(self, token: str) -> bool:
        """Forget a file or a job (its output files with it); False when the token is unknown."""
        with self._state.atomic():
            job: BatchJob | None = self._jobs.pop(token)
            if job is not None:
                self._outputs.pop(token)
                for file in (job.output_token, *job.extra_outputs.values()):
                    self._forget_file(file)
                return True
            return self._forget_file(token)

    def _forget_file(self, token: str) -> bool:
        self._contents.pop(token)
        return self._files.pop(token) is not None
