"""Submitting at most once: the one protocol for every request that bills, orders or changes something.

Under a held idempotency key, :func:`submit_once`

1. looks for the submission recorded under the key: a job the service holds is resumed, not sent again;
   one whose outcome is unknown stops the run (:class:`SubmissionUncertain`) until the user has checked and
   asks for ``--resubmit``; one that certainly ended (rejected, failed, never sent) is followed by a new one;
2. commits a PENDING marker, in the same transaction as the check that this run still holds the key;
3. sends the request, and records the service's id on the marker (SUBMITTED); NOT_SENT when the request
   certainly never left (however it failed, while no request of it had been handed to a transport:
   :mod:`connectors.sending`); REJECTED only when the answer is on the API's list of answers that certainly
   mean "not processed" (``ApiError.not_processed``; the lists live beside each connector's code tables);
   every other ending is UNCERTAIN (a dropped connection, a read timeout, a 5xx, an error code the lists do
   not hold, an answer that cannot be read, a cancellation while in flight). A process killed in between
   leaves PENDING, which the next holder of the key reads as UNCERTAIN.

Only ``--resubmit`` sends again over an uncertain submission, or replaces a recorded job that a flow says
may be replaced (a batch job whose result never arrived). :func:`submit_each` sends many submissions side by
side, and stops them all without cutting one off in flight.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from connectors.errors import ApiError
from connectors.sending import watch_sending
from core.errors import PostflowsError
from history.jobs import JobData, JobSnapshot, job_data_changes
from history.models import JobState
from history.recorder import RunRecorder, record_shielded
from history.remote_jobs import RemoteReport

logger = logging.getLogger("postflows.submission")

PENDING_PREFIX = "pending:"

R = TypeVar("R")
T = TypeVar("T")


class ResumeMismatch(PostflowsError):
    """The work recorded under this key was made from other input; its results are not this input's."""

    exit_code = 2

    def __init__(self, what: str, key: str, recorded: str, current: str) -> None:
        super().__init__(
            f"the {what} recorded under key {key} was submitted for other input (sha256 {recorded}); this "
            f"input is sha256 {current}. Use another --idempotency-key for this input"
        )
        self.recorded = recorded
        self.current = current


class SubmissionUncertain(PostflowsError):
    """An earlier submission under this key may have reached the service; it is not sent again on its own."""

    exit_code = 2

    def __init__(self, what: str, key: str, hint: str, *, run_id: int | None = None) -> None:
        by = f" by run {run_id}" if run_id is not None else ""
        super().__init__(
            f"an earlier {what} (key {key}) was sent{by} and its answer does not prove that it was not "
            f"processed, so it may exist already. {hint[:1].upper()}{hint[1:]}; if it does not, run the "
            "same command again with --resubmit"
        )
        self.what = what
        self.key = key


@dataclass(frozen=True)
class Submission(Generic[R]):
    """The recorded job of a submission.

    Attributes:
        job: the job as recorded (state SUBMITTED or later; ``remote_id`` is the service's id).
        resumed: an earlier run's job was found and nothing was sent.
        answer: the service's answer to this run's request (None when resumed).
        replaced: the earlier job this submission follows, when that one had ended without a result.
    """

    job: JobSnapshot
    resumed: bool
    answer: R | None = None
    replaced: JobSnapshot | None = None


def is_marker(job: JobSnapshot) -> bool:
    """True for a submission whose service id was never recorded."""
    return job.remote_id.startswith(PENDING_PREFIX)


def failed_submission_state(error: BaseException, *, started: bool | None = None) -> JobState:
    """How a request that creates something ended when it raised ``error``: NOT_SENT (it never left),
    REJECTED (the service's answer certainly means "not processed"), or UNCERTAIN (anything else).

    ``started``: whether a request of the submission was handed to a transport (:mod:`connectors.sending`),
    when that was watched. A connector's error says itself whether its request was sent; any other failure
    (a refused token before the request, a body refused here, a cancellation, a crash) proves that nothing
    left only when no request had been handed over.
    """
    if isinstance(error, ApiError):
        if not error.sent:
            return JobState.NOT_SENT
        return JobState.REJECTED if error.not_processed else JobState.UNCERTAIN
    if started is not None:
        return JobState.UNCERTAIN if started else JobState.NOT_SENT
    # Unwatched: our own checks fail before anything is sent; anything else (a cancellation, a crash) may
    # have hit while the request was on the wire.
    return JobState.NOT_SENT if isinstance(error, PostflowsError) else JobState.UNCERTAIN


def outcome_unknown(error: BaseException) -> bool:
    """Whether a failed submission may nevertheless have been acted on by the service."""
    return failed_submission_state(error) is JobState.UNCERTAIN


@dataclass(frozen=True)
class SubmitContext:
    """The batch context of the submit protocol: what every submission of a run (or of one body's key)
    shares.

    Attributes:
        recorder: the run's recorder; its idempotency key names the submission, and the run must hold it.
        api: the API the jobs belong to.
        resubmit: the user has checked that an uncertain earlier submission does not exist: send anew
            (``--resubmit``).
    """

    recorder: RunRecorder
    api: str
    resubmit: bool = False


@dataclass(frozen=True)
class SubmissionJob:
    """The job one submission records, and what becomes of one recorded under the key before.

    Attributes:
        kind: the job kind (``batch``, ``order``, ``purchase``, ``statistics``, ...).
        what: the submission's name in messages.
        hint: how the user can check whether an uncertain submission exists.
        data: facts recorded with the job (the marker already carries them).
        fingerprint: the SHA-256 of what is sent; a recorded job with another one is never resumed.
        resumable: whether a recorded job can still be resumed; default: its state says so, or it completed.
        replaceable: which resumable recorded jobs ``resubmit`` replaces with a new submission (a batch job
            whose result never arrived); default none: ``resubmit`` only sends over an uncertain one.
        answer_data: facts of the service's answer recorded with its id (a batch job's settlement id).
    """

    kind: str
    what: str
    hint: str = "check with the service whether it exists"
    data: JobData | None = None
    fingerprint: str | None = None
    resumable: Callable[[JobSnapshot], bool] | None = None
    replaceable: Callable[[JobSnapshot], bool] | None = None
    answer_data: Callable[[Any], JobData] | None = None

    def resumes(self, job: JobSnapshot) -> bool:
        """Whether the recorded ``job`` can still be resumed (see ``resumable``)."""
        return (self.resumable or _resumable)(job)

    def marker_facts(self) -> dict[str, Any]:
        """The facts the PENDING marker carries: ``data`` and the fingerprint."""
        return {
            **(job_data_changes(self.data) or {}),
            **(JobData(fingerprint=self.fingerprint).changes() if self.fingerprint else {}),
        }


async def submit_once(
    context: SubmitContext,
    job: SubmissionJob,
    send: Callable[[], Awaitable[R]],
    remote_id_of: Callable[[R], str],
    *,
    prepare: Callable[[], Awaitable[Mapping[str, Any]]] | None = None,
) -> Submission[R]:
    """Send ``send()`` at most once per idempotency key, guarded by the run history.

    Args:
        context: the run's recorder (whose key names the submission), the API, ``--resubmit``.
        job: the job to record, and what becomes of one recorded under the key before.
        send: sends the request; returns the service's answer.
        remote_id_of: the service's id in the answer.
        prepare: free preparatory calls (uploads) made only when a new submission is sent, before its marker;
            the facts it returns (file tokens) are recorded on the marker.

    Returns:
        The submission; ``resumed`` when an earlier run's job was found and nothing was sent.

    Raises:
        SubmissionUncertain: an earlier submission's outcome is unknown and ``context.resubmit`` is False.
        ResumeMismatch: the job recorded under the key was made from other input.
    """
    recorder = context.recorder
    found = await recorder.find_job(api=context.api, kind=job.kind)
    if found is not None:
        resumed = await _settle_recorded(context, found, job)
        if resumed is not None:
            return resumed
    facts = job.marker_facts()
    if prepare is not None:
        facts.update(await prepare())
    marker = await recorder.save_job(
        api=context.api,
        kind=job.kind,
        remote_id=f"{PENDING_PREFIX}{recorder.run_id}:{uuid.uuid4().hex}",
        status=JobState.PENDING,
        data=facts,
        submission=True,
    )
    answer = await _send_marked(recorder, marker, send, job.what)
    submitted = await recorder.update_job(
        marker,
        status=JobState.SUBMITTED,
        report=RemoteReport(remote_id=str(remote_id_of(answer))),
        data=job.answer_data(answer) if job.answer_data is not None else None,
    )
    return Submission(submitted, resumed=False, answer=answer, replaced=found)


async def submit_each(
    items: Iterable[T], submit: Callable[[T], Awaitable[None]], *, concurrency: int
) -> None:
    """``submit(item)`` for every item, at most ``concurrency`` at a time.

    A failure ends the work: no item starts after it, and the ones in flight finish (cut off in flight, a
    request would be left uncertain, although its answer may prove that it was not processed: a wrong path
    answers every request so); then the first failure is raised. A cancellation cuts them off at once.
    """
    semaphore = asyncio.Semaphore(max(1, concurrency))
    failures: list[Exception] = []

    async def one(item: T) -> None:
        async with semaphore:
            if failures:
                return
            try:
                await submit(item)
            except Exception as error:  # noqa: BLE001 - raised below, once the others in flight have ended
                failures.append(error)

    async with asyncio.TaskGroup() as group:
        for item in items:
            group.create_task(one(item))
    if failures:
        raise failures[0]


async def _settle_recorded(
    context: SubmitContext, found: JobSnapshot, job: SubmissionJob
) -> Submission[Any] | None:
    """What becomes of the submission recorded under the key (step 1 of :func:`submit_once`): the
    submission to resume, or None when a new one follows it (the recorded one marked SUPERSEDED when it was
    uncertain or is replaced).

    Raises:
        SubmissionUncertain: its outcome is unknown and ``resubmit`` is False.
        ResumeMismatch: it was made from other input.
    """
    recorder, what, resubmit = context.recorder, job.what, context.resubmit
    key = recorder.idempotency_key or ""
    state = found.state
    uncertain = state in (JobState.PENDING, JobState.UNCERTAIN)
    resumes = not uncertain and job.resumes(found)
    recorded, fingerprint = found.facts(JobData).fingerprint, job.fingerprint
    if (uncertain or resumes) and fingerprint and recorded and recorded != fingerprint:
        raise ResumeMismatch(what, key, str(recorded), fingerprint)
    replaces = resumes and resubmit and job.replaceable is not None and job.replaceable(found)
    if resumes and not replaces:
        recorder.note_reused(what, f"{found.remote_id}, recorded by run {found.run_id}")
        return Submission(found, resumed=True)
    if replaces:
        detail = f"replaced by run {recorder.run_id} (--resubmit)"
        await recorder.update_job(found, status=JobState.SUPERSEDED, finished=True, detail=detail)
        logger.warning(
            "%s: replacing the recorded job %s (%s, run %s) with a new submission (--resubmit)",
            what,
            found.remote_id,
            found.status,
            found.run_id,
        )
    elif uncertain:
        if not resubmit:
            if state is JobState.PENDING:
                # Its run died with the request in flight (this run holds the key, so it is not alive).
                await recorder.update_job(found, status=JobState.UNCERTAIN, detail="its run ended")
            raise SubmissionUncertain(what, key, job.hint, run_id=found.run_id)
        superseded_by = f"resubmitted by run {recorder.run_id}"
        await recorder.update_job(found, status=JobState.SUPERSEDED, finished=True, detail=superseded_by)
        logger.warning("%s: resubmitting over an uncertain earlier submission (--resubmit)", what)
    else:
        logger.info("%s: the earlier job %s ended %s; submitting a new one", what, found.remote_id, state)
    if replaces or uncertain:
        recorder.note_replaced(what, f"{found.remote_id} ({found.status}, run {found.run_id})")
    return None


async def _send_marked(
    recorder: RunRecorder, marker: JobSnapshot, send: Callable[[], Awaitable[R]], what: str
) -> R:
    """Send the request under its PENDING ``marker`` (step 3 of :func:`submit_once`); when it fails, the
    marker records how (NOT_SENT, REJECTED or UNCERTAIN) and the error is raised on."""
    with watch_sending() as watch:
        try:
            return await send()
        except BaseException as error:
            state = failed_submission_state(error, started=watch.started)
            if state is JobState.UNCERTAIN:
                detail = f"outcome unknown: {type(error).__name__}: {error}"[:500]
                logger.warning(
                    "%s: the answer (%s) does not prove that it was not processed; the next run with this "
                    "work stops until you check and confirm with --resubmit",
                    what,
                    type(error).__name__,
                )
            else:
                detail = f"{type(error).__name__}: {error}"[:500]
            await record_shielded(
                recorder.update_job(marker, status=state, finished=state.final, detail=detail)
            )
            raise


def _resumable(job: JobSnapshot) -> bool:
    state = job.state
    return state is not None and (state.resumable or state is JobState.COMPLETED)
