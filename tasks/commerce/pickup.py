"""Registering pickup users (§4.3 POST pickup/v1/users) row by row, each under the one submit-once protocol
(:mod:`tasks.submission`), and the results table.

Every row is its own piece of work: its key is derived from its normalised request body and the service, so
a re-run of the same file (or any file naming the same user the same way) finds the id recorded for it and
sends nothing. A row whose answer was lost (dropped connection, 5xx) may have been registered: it is not
sent again until ``--resubmit``; the service answers the same id for a user it knows. §7 lists no 400 for
pickup users, so a 400 leaves a row uncertain too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.commerce import CommerceClient, PickupUser, PickupUserRequest
from connectors.errors import ApiError, RemoteRejected
from core.errors import PostflowsError
from fileio.commerce.pickup_input import PickupInput, PickupRow
from fileio.lazy import lazy_module
from fileio.rejected_rows import LINE, ROW
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
KIND = "pickup-user"
KEY_NAME = "pickup-user"
RESULT_COLUMNS = ("pickupId", "verified", "status", "message")
MAX_ROWS_SHOWN = 50


class RowStatus(StrEnum):
    """How a row ended."""

    REGISTERED = "registered"
    RESUMED = "resumed"
    UNCERTAIN = "uncertain"
    REFUSED = "refused"


@dataclass(frozen=True)
class RowOutcome:
    """What became of one row; ``sent_before``: uncertain since an earlier run, nothing sent by this one."""

    row: int
    status: RowStatus
    pickup_id: str = ""
    verified: str = ""
    message: str = ""
    sent_before: bool = False


class PickupUncertain(PostflowsError):
    """Rows were sent but their answer never arrived; they are not sent again without ``--resubmit``. The
    message names why for the first rows (the failure each request met). ``exit_code`` 2 when one of them was
    sent by an earlier run (the run after an uncertain submission stops until the user confirms), else 1."""

    SHOWN_REASONS = 3

    def __init__(self, outcomes: Sequence[RowOutcome], results: str) -> None:
        rows = [outcome.row for outcome in outcomes]
        listed = ", ".join(str(row) for row in rows[:20]) + (" …" if len(rows) > 20 else "")
        why = "; ".join(
            f"row {outcome.row}: {outcome.message.split(_MAY_BE_REGISTERED, 1)[0]}"
            for outcome in outcomes[: self.SHOWN_REASONS]
        )
        super().__init__(
            f"{len(rows)} row(s) may have been registered although no answer arrived (rows {listed}; see "
            f"{results}; {why}). Check with the pickup service, then run the same command again with "
            "--resubmit to send them again (a user it knows keeps its id)"
        )
        self.rows = rows
        self.exit_code = 2 if any(outcome.sent_before for outcome in outcomes) else 1


@dataclass(frozen=True)
class _Registered:
    user: PickupUser
    remote_id: str


def row_key(request: PickupUserRequest, endpoint: Endpoint) -> str:
    """The idempotency key of one row: its normalised request body at this service."""
    return derive_key(KEY_NAME, endpoint=endpoint, parameters={"body": request.to_body()})


@task(name="commerce-register-pickup-users", cache_policy=NO_CACHE)
async def register_pickup_users(
    client: CommerceClient,
    recorder: RunRecorder,
    rows: Sequence[PickupRow],
    *,
    endpoint: Endpoint,
    resubmit: bool = False,
    concurrency: int = 4,
) -> list[RowOutcome]:
    """Register every row once; rows with the same request are sent once and share its outcome.

    Returns:
        One outcome per row, in row order.

    Raises:
        ApiError: a failure that is not about one row (sign-in refused, service unreachable before
            anything was sent, too many requests, a wrong path: GuessedPathNotFound names its setting):
            nothing more is sent, the requests in flight end, and a re-run resumes.
    """
    groups: dict[str, list[PickupRow]] = {}
    for row in rows:
        groups.setdefault(row_key(row.request, endpoint), []).append(row)
    remote_ids = RemoteIds(recorder, api=API, kind=KIND)
    progress = await Progress.start(f"pickup registrations ({len(groups)} users)")
    outcomes: list[RowOutcome] = []
    done = 0

    async def one(group: tuple[str, list[PickupRow]]) -> None:
        nonlocal done
        key, same = group
        first = await _register(client, recorder.for_key(key), remote_ids, same[0], key, resubmit=resubmit)
        outcomes.append(first)
        outcomes.extend(_same_as(first, row) for row in same[1:])
        done += 1
        await progress.update(100.0 * done / max(1, len(groups)), f"{done}/{len(groups)} users")

    await submit_each(groups.items(), one, concurrency=concurrency)
    return sorted(outcomes, key=lambda outcome: outcome.row)


async def _register(
    client: CommerceClient,
    recorder: RunRecorder,
    remote_ids: RemoteIds,
    row: PickupRow,
    key: str,
    *,
    resubmit: bool,
) -> RowOutcome:
    body = row.request.to_body()

    async def send() -> _Registered:
        user = await client.register_pickup_user(row.request)
        return _Registered(user, await remote_ids.claim(user.id, key))

    try:
        submission = await submit_once(
            SubmitContext(recorder, API, resubmit=resubmit),
            SubmissionJob(
                KIND,
                f"pickup registration of row {row.row}",
                hint="check with the pickup service whether the user was registered",
                data=PickupJobData(row=row.row),
                fingerprint=body_fingerprint(body),
            ),
            send,
            lambda registered: registered.remote_id,
        )
    except SubmissionUncertain:
        message = _uncertain("an earlier run's request")
        return RowOutcome(row.row, RowStatus.UNCERTAIN, message=message, sent_before=True)
    except ApiError as error:
        if error.outcome_unknown:
            return RowOutcome(
                row.row, RowStatus.UNCERTAIN, message=_uncertain(f"the request ({_reason(error)})")
            )
        if isinstance(error, RemoteRejected):
            return RowOutcome(row.row, RowStatus.REFUSED, message=_reason(error))
        raise
    if submission.answer is None:
        pickup_id, verified = _recorded(submission.job)
        return RowOutcome(row.row, RowStatus.RESUMED, pickup_id, verified, "registered by an earlier run")
    user = submission.answer.user
    verified = str(user.verified or "")
    await recorder.update_job(
        submission.job,
        status=JobState.COMPLETED,
        finished=True,
        data=PickupJobData(pickup_id=user.id, verified=verified),
    )
    return RowOutcome(row.row, RowStatus.REGISTERED, user.id, verified)


class PickupJobData(JobData):
    """The facts of a pickup registration: the file row it came from, the user the service registered."""

    row: int | None = None
    pickup_id: str | None = None
    verified: str | None = None


def _recorded(job: JobSnapshot) -> tuple[str, str]:
    """The pickup id and verification a job recorded (the id from its remote id if its data lacks it)."""
    facts = job.facts(PickupJobData)
    return facts.pickup_id or answered_id(job.remote_id), facts.verified or ""


def _same_as(first: RowOutcome, row: PickupRow) -> RowOutcome:
    message = f"same request as row {first.row}; sent once" + (f": {first.message}" if first.message else "")
    return RowOutcome(row.row, first.status, first.pickup_id, first.verified, message, first.sent_before)


def _uncertain(what: str) -> str:
    return (
        f"{what} got no answer that proves it was not processed{_MAY_BE_REGISTERED}; check, then run "
        "again with --resubmit"
    )


_MAY_BE_REGISTERED = ": the user may be registered"


def _reason(error: ApiError) -> str:
    return " ".join(str(error).split())[:500]


def results_frame(pickup_input: PickupInput, outcomes: Iterable[RowOutcome]) -> pd.DataFrame:
    """The accepted rows as read, named as rejected.csv names them (the input's id column, ``line``,
    ``row``), then every other column with pickupId, verified, status and message.

    An input column named like a result column keeps its values as ``<name> (input)``.
    """
    by_row = {outcome.row: outcome for outcome in outcomes}
    frame = pickup_input.frame.loc[sorted(by_row)].copy()
    frame = frame.rename(
        columns={name: f"{name} (input)" for name in (*RESULT_COLUMNS, ROW, LINE) if name in frame}
    )
    frame.insert(0, ROW, frame.index.astype("int64"))
    frame.insert(0, LINE, pd.Series(frame.index.map(pickup_input.lines), index=frame.index, dtype="Int64"))
    leading = pickup_input.id_column
    if leading is not None and leading in frame:
        frame.insert(0, leading, frame.pop(leading))
    ordered = [by_row[row] for row in frame.index]
    frame["pickupId"] = [outcome.pickup_id for outcome in ordered]
    frame["verified"] = [outcome.verified for outcome in ordered]
    frame["status"] = [str(outcome.status) for outcome in ordered]
    frame["message"] = [outcome.message for outcome in ordered]
    return frame.reset_index(drop=True)


def status_counts(outcomes: Iterable[RowOutcome]) -> dict[str, int]:
    """Rows per status, every status named."""
    counts = {str(status): 0 for status in RowStatus}
    for outcome in outcomes:
        counts[str(outcome.status)] += 1
    return counts


def pickup_summary(
    source: str, outcomes: Sequence[RowOutcome], *, rejected_rows: int, empty_rows: int, service: str
) -> str:
    """The run's markdown summary: rows per status and the rows that need a look (no personal data)."""
    counts = status_counts(outcomes)
    lines = [f"# Pickup registration {source}", "", f"Service: {service}", "", "| rows | |", "| --- | --- |"]
    lines += [f"| {status} | {count} |" for status, count in counts.items()]
    lines += [f"| rejected (rejected.csv) | {rejected_rows} |", f"| empty | {empty_rows} |"]
    attention = [o for o in outcomes if o.status in (RowStatus.UNCERTAIN, RowStatus.REFUSED)]
    if attention:
        lines += ["", "## Rows to look at", "", "| row | status | message |", "| --- | --- | --- |"]
        lines += [
            f"| {o.row} | {o.status} | {o.message.replace('|', '/')} |" for o in attention[:MAX_ROWS_SHOWN]
        ]
        if len(attention) > MAX_ROWS_SHOWN:
            lines.append(f"\n_… {len(attention) - MAX_ROWS_SHOWN} more in results.csv_")
    return "\n".join(lines) + "\n"
