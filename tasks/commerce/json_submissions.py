"""Submitting the JSON bodies a user supplies for the operations whose shapes the spec does not show (address
labels, return orders: §4.4, §2.13), each under the one submit-once protocol (:mod:`tasks.submission`), with
its answer kept as received.

Each body is its own piece of work: its key is derived from the body (canonical JSON), how many identical
bodies came before it in the file, and the service; so a re-run of the same file (reordered or not) resumes
every body, and two identical bodies in one file are two requests (two parcels to one address need two
labels). The answer is kept under the data dir (:mod:`fileio.commerce.kept_answers`), its SHA-256 recorded
with the job: a resumed body's answer is taken from there, never asked for again. A body whose answer was
lost (dropped connection, 5xx), or refused with a 400 (§7 shows no row for these endpoints), may have been
processed: it is not sent again until ``--resubmit``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.commerce import ReceivedAnswer
from connectors.errors import ApiError, RemoteRejected
from core.errors import PostflowsError
from fileio.commerce.json_bodies import JsonBody
from fileio.commerce.kept_answers import KeptAnswer, KeptAnswers
from fileio.lazy import lazy_module
from history.identity import Endpoint, body_fingerprint, derive_key
from history.jobs import JobData, JobSnapshot
from history.models import JobState
from history.recorder import RunRecorder
from tasks.commerce.remote_ids import RemoteIds, answered_id
from tasks.progress import Progress
from tasks.submission import (
    SubmissionJob,
    SubmissionUncertain,
    SubmitContext,
    submit_each,
    submit_once,
)

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

API = "commerce"
SHOWN_REASONS = 3
MAX_SHOWN = 50

Sender = Callable[[dict[str, Any]], Awaitable[ReceivedAnswer]]
"""Posts one body; returns the answer as received."""


class BodyStatus(StrEnum):
    """How a body ended."""

    CREATED = "created"
    RESUMED = "resumed"
    UNCERTAIN = "uncertain"
    REFUSED = "refused"


@dataclass(frozen=True)
class Submitted:
    """What the bodies create.

    Attributes:
        kind: the job kind in the run history, and the name its keys are derived under.
        what: how messages name one (``address label``).
        hint: how a user checks whether an uncertain one exists.
        id_of: the service's id in an answer, when it names one.
    """

    kind: str
    what: str
    hint: str
    id_of: Callable[[ReceivedAnswer], str | None]


@dataclass(frozen=True)
class BodyService:
    """Where the bodies go.

    Attributes:
        send: posts one body there; returns the answer as received.
        endpoint: the service as the bodies' keys are derived for it.
    """

    send: Sender
    endpoint: Endpoint


@dataclass(frozen=True)
class BodyOutcome:
    """What became of one body: its position in the file, its key, how it ended, whether it has an answer
    (this run's, or the one kept for an earlier run's request) and its record, the id the service gave it, a
    message, and whether it is uncertain since an earlier run (this run sent nothing for it).

    An outcome holds no answer: :meth:`answer` reads it from where it is kept, so a run of many bodies holds
    one answer at a time, however many it made."""

    position: int
    key: str
    status: BodyStatus
    answered: bool = False
    kept: KeptAnswer | None = None
    answer_id: str = ""
    message: str = ""
    sent_before: bool = False

    def answer(self, kept: KeptAnswers) -> ReceivedAnswer | None:
        """The answer as kept in ``kept``; None without one, or when it is no longer kept as recorded."""
        return kept.load(self.key, self.kept) if self.answered else None


class BodyJobData(JobData):
    """The facts of a submitted body: its position in the file, its answer as kept, the service's id."""

    position: int | None = None
    answer_sha256: str | None = None
    content_type: str | None = None
    answer_id: str | None = None


class SubmissionsUncertain(PostflowsError):
    """Bodies were sent but their answer never arrived; they are not sent again without ``--resubmit``.
    ``exit_code`` 2 when one of them was sent by an earlier run (the run after an uncertain submission stops
    until the user confirms), else 1 (this run's own requests lost their answers)."""

    def __init__(self, what: str, outcomes: Sequence[BodyOutcome], results: str, hint: str) -> None:
        positions = [outcome.position for outcome in outcomes]
        listed = ", ".join(str(n) for n in positions[:20]) + (" …" if len(positions) > 20 else "")
        why = "; ".join(
            f"{what} {outcome.position}: {outcome.message.split(_MAY_EXIST, 1)[0]}"
            for outcome in outcomes[:SHOWN_REASONS]
        )
        super().__init__(
            f"{len(positions)} {what}(s) may have been created although no answer arrived (positions "
            f"{listed}; see {results}; {why}). {hint[:1].upper()}{hint[1:]}, then run the same command "
            "again with --resubmit to send them again"
        )
        self.positions = positions
        self.exit_code = 2 if any(outcome.sent_before for outcome in outcomes) else 1


def id_field(answer: ReceivedAnswer) -> str | None:
    """The ``id`` of a JSON object answer, when it has one (a string or a number)."""
    try:
        body = json.loads(answer.content)
    except ValueError:
        return None
    found = body.get("id") if isinstance(body, dict) else None
    return (
        str(found) if isinstance(found, str | int) and not isinstance(found, bool) and found != "" else None
    )


def body_keys(bodies: Sequence[JsonBody], *, kind: str, endpoint: Endpoint) -> list[str]:
    """The key of each body: the body, how many identical bodies come before it, and the service."""
    seen: dict[str, int] = {}
    keys = []
    for item in bodies:
        fingerprint = body_fingerprint(item.body)
        seen[fingerprint] = seen.get(fingerprint, 0) + 1
        parameters = {"body": item.body, "occurrence": seen[fingerprint]}
        keys.append(derive_key(kind, endpoint=endpoint, parameters=parameters))
    return keys


@task(name="commerce-submit-json-bodies", cache_policy=NO_CACHE)
async def submit_bodies(
    service: BodyService,
    recorder: RunRecorder,
    bodies: Sequence[JsonBody],
    *,
    submitted: Submitted,
    kept: KeptAnswers,
    resubmit: bool = False,
    concurrency: int = 1,
) -> list[BodyOutcome]:
    """Send every body once to ``service`` (its ``send`` posts one), at most ``concurrency`` at a time.

    Returns:
        One outcome per body, in file order.

    Raises:
        ApiError: a failure that is not about one body (sign-in refused, a wrong path: GuessedPathNotFound
            names its setting, the service unreachable before anything was sent): nothing more is sent, the
            requests in flight end, and a re-run resumes.
    """
    keys = body_keys(bodies, kind=submitted.kind, endpoint=service.endpoint)
    remote_ids = RemoteIds(recorder, api=API, kind=submitted.kind)
    progress = await Progress.start(f"{submitted.what}s ({len(bodies)})")
    outcomes: list[BodyOutcome] = []

    async def one(body: tuple[JsonBody, str]) -> None:
        item, key = body
        sender = _BodySubmission(service.send, recorder.for_key(key), remote_ids, submitted, kept)
        outcomes.append(await sender.submit(item, key, resubmit=resubmit))
        await progress.update(100.0 * len(outcomes) / max(1, len(bodies)), f"{len(outcomes)}/{len(bodies)}")

    await submit_each(zip(bodies, keys, strict=True), one, concurrency=concurrency)
    return sorted(outcomes, key=lambda outcome: outcome.position)


@dataclass(frozen=True)
class _Answered:
    answer: ReceivedAnswer
    kept: KeptAnswer
    remote_id: str


class _BodySubmission:
    """Submits one body under its own key."""

    def __init__(
        self,
        send: Sender,
        recorder: RunRecorder,
        remote_ids: RemoteIds,
        submitted: Submitted,
        kept: KeptAnswers,
    ) -> None:
        self.send = send
        self.recorder = recorder
        self.remote_ids = remote_ids
        self.submitted = submitted
        self.kept = kept

    async def submit(self, item: JsonBody, key: str, *, resubmit: bool) -> BodyOutcome:
        what = f"{self.submitted.what} {item.position}"

        async def send() -> _Answered:
            # Kept before the job is recorded (a resumed job always has it); the answer as kept, scrubbed,
            # replaces the one received: one copy of it is held.
            kept, answer = self.kept.keep(key, await self.send(item.body))
            remote_id = await self.remote_ids.claim(self.submitted.id_of(answer) or key, key)
            return _Answered(answer, kept, remote_id)

        try:
            submission = await submit_once(
                SubmitContext(self.recorder, API, resubmit=resubmit),
                SubmissionJob(
                    self.submitted.kind,
                    what,
                    hint=self.submitted.hint,
                    data=BodyJobData(position=item.position),
                    fingerprint=body_fingerprint(item.body),
                ),
                send,
                lambda answered: answered.remote_id,
            )
        except SubmissionUncertain:
            message = _uncertain("an earlier run's request")
            return BodyOutcome(item.position, key, BodyStatus.UNCERTAIN, message=message, sent_before=True)
        except ApiError as error:
            if error.outcome_unknown:
                return self._outcome(
                    item, key, BodyStatus.UNCERTAIN, _uncertain(f"the request ({_reason(error)})")
                )
            if isinstance(error, RemoteRejected):
                return self._outcome(item, key, BodyStatus.REFUSED, _reason(error))
            raise
        if submission.answer is None:
            return self._resumed(item, key, submission.job)
        answer, facts = submission.answer.answer, submission.answer.kept
        answer_id = self.submitted.id_of(answer) or ""
        await self.recorder.update_job(
            submission.job,
            status=JobState.COMPLETED,
            finished=True,
            data=BodyJobData(
                answer_sha256=facts.sha256, content_type=facts.content_type, answer_id=answer_id or None
            ),
        )
        return BodyOutcome(item.position, key, BodyStatus.CREATED, True, facts, answer_id)

    def _resumed(self, item: JsonBody, key: str, job: JobSnapshot) -> BodyOutcome:
        facts = job.facts(BodyJobData)
        answer_id = facts.answer_id or (
            "" if answered_id(job.remote_id) == key else answered_id(job.remote_id)
        )
        recorded = KeptAnswer(facts.answer_sha256, facts.content_type or "") if facts.answer_sha256 else None
        answered = self.kept.load(key, recorded) is not None
        message = f"created by run {job.run_id}" + (
            "" if answered else f"; its answer is no longer kept in {self.kept.path(key)}"
        )
        return BodyOutcome(item.position, key, BodyStatus.RESUMED, answered, recorded, answer_id, message)

    def _outcome(self, item: JsonBody, key: str, status: BodyStatus, message: str) -> BodyOutcome:
        return BodyOutcome(item.position, key, status, message=message)


_MAY_EXIST = ": it may exist"


def _uncertain(what: str) -> str:
    return (
        f"{what} got no answer that proves it was not processed{_MAY_EXIST}; check, then run again with "
        "--resubmit"
    )


def _reason(error: ApiError) -> str:
    return " ".join(str(error).split())[:500]


def status_counts(outcomes: Sequence[BodyOutcome]) -> dict[str, int]:
    """Bodies per status, every status named."""
    counts = {str(status): 0 for status in BodyStatus}
    for outcome in outcomes:
        counts[str(outcome.status)] += 1
    return counts


def index_row(outcome: BodyOutcome, line: int, *, id_column: str) -> dict[str, Any]:
    """The fields every index of submitted bodies starts with: position and line in the file, key, the
    service's id (as ``id_column``), the answer's file (none yet), status and message."""
    return {
        "position": outcome.position,
        "line": line,
        "key": outcome.key,
        id_column: outcome.answer_id,
        "answer": "",
        "status": str(outcome.status),
        "message": outcome.message,
    }


def submissions_summary(
    title: str, index: pd.DataFrame, *, counts: Mapping[str, int], service: str, note: str, index_file: str
) -> str:
    """A run's markdown summary: the ``counts`` per status, a ``note``, and the bodies that did not end
    created or resumed, from the ``index`` (no body content: it may be personal)."""
    lines = [f"# {title}", "", f"Service: {service}", "", "| status | count |", "| --- | --- |"]
    lines += [f"| {status} | {count} |" for status, count in counts.items()]
    lines += ["", note]
    attention = index[~index["status"].isin([str(BodyStatus.CREATED), str(BodyStatus.RESUMED)])]
    if len(attention):
        lines += [
            "",
            "## To look at",
            "",
            "| position | line | status | message |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| {row.position} | {row.line} | {row.status} | {str(row.message).replace('|', '/')} |"
            for row in attention.head(MAX_SHOWN).itertuples()
        ]
        if len(attention) > MAX_SHOWN:
            lines.append(f"\n_… {len(attention) - MAX_SHOWN} more in {index_file}_")
    return "\n".join(lines) + "\n"
