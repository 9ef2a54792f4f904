"""Submitting at most once: a POST to the newspaper API is guarded by the run history.

Before the POST a pending marker is recorded (a remote job with ``remote_id`` ``pending:<key>:<run>``,
status ``SUBMITTING``); after it the service's id replaces the marker. A re-run that finds a recorded id
resumes with it. A re-run that finds only a marker cannot know whether the service received the earlier
POST, so it refuses until the user checks and asks for a resubmission explicitly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from connectors.errors import (
    AuthFailed,
    NotFound,
    PostflowsError,
    RateLimited,
    RemoteRejected,
    TransportFailure,
)
from connectors.newspaper import ApiResult, NewspaperMessage, NewspaperRejected
from tasks.run_history import JobSnapshot, RunRecorder

API = "newspaper"
PENDING_PREFIX = "pending:"
SUBMITTING = "SUBMITTING"

R = TypeVar("R")


class SubmissionUncertain(PostflowsError):
    """An earlier POST of this submission may have reached the service; it is not sent again blindly."""

    def __init__(self, what: str, key: str, hint: str) -> None:
        super().__init__(
            f"an earlier {what} submission (key {key}) was sent but its answer never arrived, so it may "
            f"exist already; {hint}; if you are sure it does not, run again with --resubmit"
        )
        self.what = what
        self.key = key


@dataclass(frozen=True)
class Submission:
    """The recorded remote job of a submission and whether this run resumed it instead of posting."""

    job: JobSnapshot
    resumed: bool
    warnings: tuple[NewspaperMessage, ...] = ()
    answer: Any = None  # the service's answer to this run's POST (None when resumed)


def is_pending(job: JobSnapshot) -> bool:
    """True for a pending marker (the POST's answer was never recorded)."""
    return job.remote_id.startswith(PENDING_PREFIX)


def nothing_was_created(error: BaseException) -> bool:
    """True when a failed POST certainly created nothing: the service refused it or never received it."""
    if isinstance(error, RemoteRejected | AuthFailed | NotFound | RateLimited):
        return True
    return isinstance(error, TransportFailure) and not error.sent


def record_warnings(recorder: RunRecorder, where: str, warnings: Iterable[NewspaperMessage]) -> list[str]:
    """Record each API warning as a run message; returns them as display lines."""
    lines = []
    for warning in warnings:
        recorder.message("warning", warning.code or where, f"{where}: {warning}")
        lines.append(f"{where}: {warning}")
    return lines


class WarningLog:
    """The API warnings of one run: each distinct one recorded once as a run message, kept for the summary."""

    def __init__(self, recorder: RunRecorder) -> None:
        self._recorder = recorder
        self.lines: list[str] = []

    def add(self, where: str, warnings: Iterable[NewspaperMessage]) -> None:
        for warning in warnings:
            line = f"{where}: {warning}"
            if line not in self.lines:
                self._recorder.message("warning", warning.code or where, line)
                self.lines.append(line)


def record_rejection(recorder: RunRecorder, where: str, error: NewspaperRejected) -> None:
    """Record the error and warning messages of a rejection."""
    for message in error.errors:
        recorder.message("error", message.code or where, f"{where}: {message}")
    record_warnings(recorder, where, error.warnings)


async def submit_once(
    recorder: RunRecorder,
    *,
    kind: str,
    what: str,
    post: Callable[[], Awaitable[ApiResult[R]]],
    remote_id_of: Callable[[R], str],
    resubmit: bool = False,
    hint: str = "check with the service whether it exists",
    data: dict[str, Any] | None = None,
) -> Submission:
    """POST once per idempotency key, guarded by the run history.

    Args:
        recorder: the run's recorder; its idempotency key identifies the submission.
        kind: the remote job kind (``order``, ``purchase``, ``statistics``).
        what: the submission's name in messages.
        post: sends the POST and returns the service's answer.
        remote_id_of: the remote id to record for the answer.
        resubmit: post even though a pending marker says an earlier POST may have arrived.
        hint: how the user can check whether the earlier submission exists.
        data: facts recorded with the remote job.

    Returns:
        The recorded job; ``resumed`` when an earlier run's id was found and nothing was posted.

    Raises:
        SubmissionUncertain: only a pending marker was found and ``resubmit`` is False.
    """
    key = recorder.idempotency_key or ""
    found = recorder.find_job(api=API, kind=kind)
    if found is not None and not is_pending(found):
        return Submission(found, resumed=True)
    if found is not None and not resubmit:
        raise SubmissionUncertain(what, key, hint)
    if found is not None:
        recorder.update_job(found, status="SUPERSEDED", finished=True, deleted=True)
    marker = recorder.save_job(
        api=API,
        kind=kind,
        remote_id=f"{PENDING_PREFIX}{key}:{recorder.run_id}",
        status=SUBMITTING,
        data=data,
    )
    try:
        result = await post()
    except NewspaperRejected as error:
        record_rejection(recorder, what, error)
        recorder.update_job(marker, status="REJECTED", finished=True, deleted=True)
        raise
    except BaseException as error:
        if nothing_was_created(error):
            recorder.update_job(marker, status="NOT_SENT", finished=True, deleted=True)
        raise
    job = recorder.save_job(
        api=API, kind=kind, remote_id=remote_id_of(result.value), status="SUBMITTED", data=data
    )
    recorder.update_job(marker, status="SUBMITTED", finished=True, deleted=True)
    record_warnings(recorder, what, result.warnings)
    return Submission(job, resumed=False, warnings=result.warnings, answer=result.value)
