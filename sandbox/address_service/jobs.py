"""Files and batch jobs of one sandbox instance, and how a job's state follows from elapsed time.

A job advances by the clock alone (no background thread): for a duration ``D`` it is New for the first
10 %, Waiting until 25 %, then Running with Progress rising to 100 %, and at ``D`` it reaches its outcome
(Finished, or Failed/Error/Canceled/Unknown when a fault asked for it).
"""

from __future__ import annotations

import math
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from enum import IntEnum
from typing import Literal

MAX_FILES = 1000
MAX_JOBS = 500


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
    token: str
    kind: Literal["upload", "output"]
    created_at: float
    content: bytes = b""
    batch_token: str | None = None


@dataclass
class BatchJob:
    """A submitted alignment. ``output`` is computed at submission and released when the job finishes."""

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


@dataclass(frozen=True)
class BatchProgress:
    token_status: TokenStatus
    progress: int
    remaining_seconds: int
    message: str
    start: float
    last_update: float


def progress_of(job: BatchJob, now: float) -> BatchProgress:
    """The state of ``job`` at epoch second ``now``."""
    elapsed = max(0.0, now - job.started_at)
    duration = max(0.0, job.duration)
    remaining = max(0, math.ceil(duration - elapsed))
    if elapsed >= duration:
        message = job.failure or _MESSAGES[job.outcome]
        progress = 100 if job.outcome == TokenStatus.FINISHED else 0
        return BatchProgress(job.outcome, progress, 0, message, job.started_at, job.started_at + duration)
    if elapsed < 0.1 * duration:
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
    """Files and jobs in memory, guarded by one lock and bounded (the oldest entries go first)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.files: OrderedDict[str, StoredFile] = OrderedDict()
        self.jobs: OrderedDict[str, BatchJob] = OrderedDict()
        self._settlements = 0

    @staticmethod
    def new_token() -> str:
        return str(uuid.uuid4())

    def next_settlement(self) -> int:
        with self.lock:
            self._settlements += 1
            return 4_200_000 + self._settlements

    def add_file(self, stored: StoredFile) -> None:
        with self.lock:
            self.files[stored.token] = stored
            while len(self.files) > MAX_FILES:
                self.files.popitem(last=False)

    def file(self, token: str) -> StoredFile | None:
        with self.lock:
            return self.files.get(token)

    def add_job(self, job: BatchJob) -> None:
        with self.lock:
            self.jobs[job.token] = job
            while len(self.jobs) > MAX_JOBS:
                self.jobs.popitem(last=False)
            output = self.files.get(job.output_token)
            if output is not None:
                output.batch_token = job.token

    def job(self, token: str) -> BatchJob | None:
        with self.lock:
            return self.jobs.get(token)

    def job_of_output(self, token: str) -> BatchJob | None:
        """The job writing to output file ``token``, or the job whose batch token it is."""
        with self.lock:
            if token in self.jobs:
                return self.jobs[token]
            stored = self.files.get(token)
            if stored is None or stored.batch_token is None:
                return None
            return self.jobs.get(stored.batch_token)

    def delete(self, token: str) -> bool:
        """Forget a file or a job (its output file with it); False when the token is unknown."""
        with self.lock:
            job = self.jobs.pop(token, None)
            if job is not None:
                self.files.pop(job.output_token, None)
                return True
            return self.files.pop(token, None) is not None
