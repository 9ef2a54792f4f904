"""Newspaper submissions on the one submit-once protocol (:mod:`tasks.submission`): the API's warnings and
rejection messages are recorded with the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from connectors.newspaper import ApiResult, NewspaperMessage, NewspaperRejected
from history.identity import body_fingerprint as body_fingerprint
from history.jobs import JobData, JobSnapshot
from history.recorder import RunRecorder
from tasks.submission import Submission, submit_once

API = "newspaper"

R = TypeVar("R")


class WarningLog:
    """The API warnings of one run: each distinct one recorded once as a run message, kept for the summary."""

    def __init__(self, recorder: RunRecorder) -> None:
        self._recorder = recorder
        self.lines: list[str] = []

    async def add(self, where: str, warnings: Iterable[NewspaperMessage]) -> None:
        for warning in warnings:
            line = f"{where}: {warning}"
            if line not in self.lines:
                self.lines.append(line)
                await self._recorder.message("warning", warning.code or where, line)


async def record_rejection(recorder: RunRecorder, where: str, error: NewspaperRejected) -> None:
    """Record the error and warning messages of a rejection."""
    for message in error.errors:
        await recorder.message("error", message.code or where, f"{where}: {message}")
    for warning in error.warnings:
        await recorder.message("warning", warning.code or where, f"{where}: {warning}")


async def submit_newspaper(
    recorder: RunRecorder,
    warnings: WarningLog,
    *,
    kind: str,
    what: str,
    send: Callable[[], Awaitable[ApiResult[R]]],
    remote_id_of: Callable[[R], str] = str,
    resubmit: bool = False,
    hint: str,
    data: JobData | None = None,
    fingerprint: str | None = None,
    resumable: Callable[[JobSnapshot], bool] | None = None,
) -> Submission[ApiResult[R]]:
    """Submit once (see :func:`tasks.submission.submit_once`), recording the API's messages."""
    try:
        submission = await submit_once(
            recorder,
            api=API,
            kind=kind,
            what=what,
            send=send,
            remote_id_of=lambda result: remote_id_of(result.value),
            resubmit=resubmit,
            hint=hint,
            data=data,
            fingerprint=fingerprint,
            resumable=resumable,
        )
    except NewspaperRejected as error:
        await record_rejection(recorder, what, error)
        raise
    if submission.answer is not None:
        await warnings.add(what, submission.answer.warnings)
    return submission
