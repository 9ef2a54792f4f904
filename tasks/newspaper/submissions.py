"""Newspaper submissions on the one submit-once protocol (:mod:`tasks.submission`): the API's warnings and
rejection messages are recorded with the run, and the errors of an answer that took a submission all the
same (an order or purchase answered with its id) are named with that id, recorded with its job and shown by
every run that follows it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from connectors.newspaper import ApiResult, NewspaperMessage, NewspaperRejected
from history.identity import body_fingerprint as body_fingerprint
from history.jobs import JobData
from history.recorder import RunRecorder
from tasks.submission import Submission, SubmissionJob, SubmitContext, submit_once

API = "newspaper"

logger = logging.getLogger("postflows.newspaper.submissions")

R = TypeVar("R")


class TakenWithErrors(JobData):
    """The facts of a submission whose answer carried its id and errors: each error, named with the id."""

    answer_errors: list[str] | None = None


class WarningLog:
    """The API messages of one run: each distinct warning recorded once as a run message and kept for the
    summary (``lines``), and the errors of an answer that took a submission all the same (``errors``)."""

    def __init__(self, recorder: RunRecorder) -> None:
        self._recorder = recorder
        self.lines: list[str] = []
        self.errors: list[str] = []

    async def add(self, where: str, warnings: Iterable[NewspaperMessage]) -> None:
        for warning in warnings:
            line = f"{where}: {warning}"
            if line not in self.lines:
                self.lines.append(line)
                await self._recorder.message("warning", warning.code or where, line)

    async def add_errors(self, errors: Iterable[tuple[str | None, str]]) -> list[str]:
        """Record and log each error line (with its code, if known) once; returns the lines added."""
        added: list[str] = []
        for code, line in errors:
            if line not in self.errors:
                self.errors.append(line)
                added.append(line)
                await self._recorder.message("error", code or "taken-with-errors", line)
                logger.error("%s", line)
        return added


def newspaper_context(recorder: RunRecorder, *, resubmit: bool) -> SubmitContext:
    """The submit protocol's context of a run's newspaper submissions."""
    return SubmitContext(recorder, API, resubmit=resubmit)


async def record_rejection(recorder: RunRecorder, where: str, error: NewspaperRejected) -> None:
    """Record the error and warning messages of a rejection."""
    for message in error.errors:
        await recorder.message("error", message.code or where, f"{where}: {message}")
    for warning in error.warnings:
        await recorder.message("warning", warning.code or where, f"{where}: {warning}")


async def submit_newspaper(
    context: SubmitContext,
    warnings: WarningLog,
    job: SubmissionJob,
    send: Callable[[], Awaitable[ApiResult[R]]],
    remote_id_of: Callable[[R], str] = str,
) -> Submission[ApiResult[R]]:
    """Submit once (see :func:`tasks.submission.submit_once`; ``context`` of the newspaper API:
    :func:`newspaper_context`), recording the API's messages.

    An answer that carries the service's id took the submission, errors or not: it is recorded SUBMITTED
    with the id like any other, and its errors and warnings are named with the id (``<what> <id>: ...``),
    recorded with the run and the job, and logged; a run that resumes the job names the errors again.
    """
    recorder, what = context.recorder, job.what
    try:
        submission = await submit_once(context, job, send, lambda result: remote_id_of(result.value))
    except NewspaperRejected as error:
        await record_rejection(recorder, what, error)
        raise
    answer = submission.answer
    if answer is None:
        recorded = submission.job.facts(TakenWithErrors).answer_errors or []
        await warnings.add_errors((None, line) for line in recorded)
        return submission
    # An order or purchase answers with its id: its messages are named with it.
    where = f"{what} {answer.value}" if isinstance(answer.value, int) else what
    await warnings.add(where, answer.warnings)
    if not answer.errors:
        return submission
    lines = await warnings.add_errors((error.code, f"{where}: {error}") for error in answer.errors)
    taken = await recorder.update_job(
        submission.job,
        data=TakenWithErrors(answer_errors=lines),
        detail=f"taken with errors: {'; '.join(lines)}"[:500],
    )
    return dataclasses.replace(submission, job=taken)
