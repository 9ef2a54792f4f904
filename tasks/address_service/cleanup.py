"""The address service's remote files in the run history: recorded as they are created, deleted once nothing
needs them, and recorded as gone.

Only a /deletefile answered with Status 0 deletes a file. Any other answer (Status 302 "error accessing the
database" included, an HTTP error, a lost answer) leaves it recorded as still on the service (``not_deleted``
in its data): the run says so in a warning, and every clean-up asks again, whatever the file's age.

A file is needed while the batch job it belongs to may still give a result (recorded as resumable, or
FINISHED with its download still owed) or might exist (its submission's outcome is unknown). Everything else
recorded and not deleted is an orphan: a run deletes the orphans of its key, and ``postflows cleanup``
deletes those of every key past an age. The clean-up keeps the files of a job that still owes its result
until the service's own retention has passed, unless forced. A file whose creation lost its answer may exist
without anyone knowing its token: it stays recorded as UNCERTAIN (the service deletes uploads three months
after they arrived), and no clean-up tries to delete it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

import history
from connectors.address_service import AddressServiceClient
from connectors.address_service.errors import AddressServiceStatusError, DatabaseStatusError
from connectors.errors import ApiError
from history.jobs import BatchJobData, FileJobData, JobSnapshot
from history.models import JobState
from history.recorder import RunRecorder, record_shielded
from history.remote_jobs import RemoteReport, file_deleted_data
from tasks.address_service.batch import API, delete_remote_files
from tasks.submission import PENDING_PREFIX, failed_submission_state, is_marker

FILE_KINDS = ("upload-file", "output-file")
BATCH = "batch"
RESULT_NOT_DOWNLOADED = "result not downloaded yet"
JOB_MAY_STILL_RUN = "job may still run"
_IN_USE = frozenset(
    {
        JobState.PENDING,
        JobState.UNCERTAIN,
        JobState.SUBMITTED,
        JobState.RUNNING,
        JobState.WAITING,
        JobState.FINISHED,
    }
)


@dataclass(frozen=True)
class KeptFile:
    """Why a recorded file stays on the service: the batch job that needs it, its state, and the reason."""

    job: str
    state: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"job": self.job, "state": self.state, "reason": self.reason}


@dataclass
class CleanupReport:
    """What a clean-up did: tokens deleted (Status 0), gone (past the service's retention, see
    :func:`delete_recorded_files`), not deleted (token → the answer; still on the service) and kept
    (token → why)."""

    deleted: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    kept: dict[str, KeptFile] = field(default_factory=dict)

    def still_on_service(self) -> str | None:
        """The warning line naming the files a /deletefile did not delete, or None when there are none."""
        if not self.failed:
            return None
        files = "; ".join(f"{token}: {reason}" for token, reason in self.failed.items())
        count = len(self.failed)
        return (
            f"{count} remote file{'' if count == 1 else 's'} still on the address service, its /deletefile "
            f"not answered with Status 0 ({files}); `postflows cleanup` asks again, whatever their age"
        )


async def created_file(
    recorder: RunRecorder,
    *,
    kind: str,
    create: Callable[[], Awaitable[str]],
    data: FileJobData | None = None,
) -> JobSnapshot:
    """Create a remote file with ``create`` (which returns its token) and record it under the run's key.

    A marker is recorded before the request leaves and gets the token once it arrives. When the answer does
    not prove that nothing was created (a read timeout, a dropped connection, a 5xx, a Status not on the
    "not processed" list) the file may exist while its token is unknown: the marker stays UNCERTAIN and the
    run carries a warning, since nothing can delete that file. A request that certainly created nothing
    leaves the marker NOT_SENT or REJECTED.

    Returns:
        The file as recorded: SUBMITTED, its token as ``remote_id``.
    """
    marker = await recorder.save_job(
        api=API,
        kind=kind,
        remote_id=f"{PENDING_PREFIX}{recorder.run_id}:{uuid.uuid4().hex}",
        status=JobState.PENDING,
        data=data,
    )
    try:
        token = await create()
    except BaseException as error:
        await record_shielded(_record_failed_creation(recorder, marker, error))
        raise
    return await recorder.update_job(marker, status=JobState.SUBMITTED, report=RemoteReport(remote_id=token))


async def _record_failed_creation(recorder: RunRecorder, marker: JobSnapshot, error: BaseException) -> None:
    failure = f"{type(error).__name__}: {error}"[:500]
    state = failed_submission_state(error)
    if state is not JobState.UNCERTAIN:
        await recorder.update_job(marker, status=state, finished=True, detail=failure)
        return
    await recorder.update_job(marker, status=JobState.UNCERTAIN, detail=f"outcome unknown: {failure}")
    await recorder.message(
        "warning",
        marker.kind,
        f"the {marker.kind} request got no answer that proves it created nothing ({type(error).__name__}): "
        "a file may be left on the "
        "service whose token never arrived, so it cannot be deleted from here; the service deletes uploaded "
        "files three months after they arrived",
    )


def owed_result(state: JobState | None) -> str | None:
    """Why a batch job in ``state`` may still give a result (its files are needed), or None when it cannot:
    it ended, with its result downloaded (COMPLETED) or without one."""
    if state is JobState.FINISHED:
        return RESULT_NOT_DOWNLOADED
    return JOB_MAY_STILL_RUN if state in _IN_USE else None


def tokens_in_use(batches: list[JobSnapshot]) -> dict[str, KeptFile]:
    """The file tokens of batch jobs that may still run or give a result, each with the job that needs it."""
    tokens: dict[str, KeptFile] = {}
    for batch in batches:
        reason = owed_result(batch.state)
        if reason is not None:
            kept = KeptFile(batch.remote_id, str(batch.status), reason)
            for token in sorted(batch.facts(BatchJobData).file_tokens()):
                tokens.setdefault(token, kept)
    return tokens


async def delete_key_files(client: AddressServiceClient, recorder: RunRecorder) -> CleanupReport:
    """Delete every recorded, undeleted file of the recorder's key that no live job needs.

    Shielded from cancellation: an interrupted run still deletes what it may.
    """

    async def clean() -> CleanupReport:
        recorded = await recorder.open_jobs(api=API, kinds=(*FILE_KINDS, BATCH))
        files = [job for job in recorded if job.kind in FILE_KINDS and not is_marker(job)]
        in_use = tokens_in_use([job for job in recorded if job.kind == BATCH])
        report = CleanupReport(
            kept={job.remote_id: in_use[job.remote_id] for job in files if job.remote_id in in_use}
        )
        orphans = [job for job in files if job.remote_id not in in_use]

        async def mark_deleted(job: JobSnapshot) -> None:
            await recorder.update_job(
                job, status=JobState.DELETED, deleted=True, data=file_deleted_data(job.data)
            )

        async def mark_not_deleted(job: JobSnapshot, answer: str, reason: str) -> None:
            data = FileJobData(not_deleted=reason)
            await recorder.update_job(
                job, data=data, detail=reason, report=RemoteReport(remote_status=answer)
            )

        await _delete(client, orphans, report, mark_deleted, mark_not_deleted)
        if (line := report.still_on_service()) is not None:
            await recorder.message("warning", "deletefile", line)
        return report

    task = asyncio.ensure_future(clean())
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise


async def _delete(
    client: AddressServiceClient,
    files: list[JobSnapshot],
    report: CleanupReport,
    mark_deleted: Callable[[JobSnapshot], Awaitable[None]],
    mark_not_deleted: Callable[[JobSnapshot, str, str], Awaitable[None]],
    *,
    past_retention: frozenset[int] = frozenset(),
) -> None:
    """Ask for every file's deletion and record each answer before the next request leaves: deleted
    (Status 0, or a database Status for a file past the service's retention, ``past_retention`` by job id:
    gone), else still on the service. A run stopped between two deletions leaves no deleted file recorded
    as still there."""
    by_token: dict[str, list[JobSnapshot]] = {}
    for job in files:
        by_token.setdefault(job.remote_id, []).append(job)

    async def record(token: str, error: ApiError | None) -> None:
        for job in by_token[token]:
            if error is None:
                report.deleted.append(token)
            elif job.id in past_retention and isinstance(error, DatabaseStatusError):
                report.gone.append(token)
            else:
                report.failed[token] = str(error)
                await mark_not_deleted(job, _answer(error), str(error))
                continue
            await mark_deleted(job)

    if files:
        await delete_remote_files(client, list(by_token), record)


def _answer(error: ApiError) -> str:
    """A /deletefile's answer in short, as the file's remote status keeps it."""
    if isinstance(error, AddressServiceStatusError):
        return f"deletefile Status {error.status}"
    return f"deletefile {type(error).__name__}"


async def delete_recorded_files(
    client: AddressServiceClient,
    database_url: str,
    *,
    older_than: datetime,
    retention_cutoff: datetime,
    force: bool = False,
) -> CleanupReport:
    """Delete every recorded file of any key not deleted yet that was created before ``older_than`` or that
    an earlier /deletefile did not delete (whatever its age), except the files of a batch job that may
    still give a result (it may still run, or ran and its result is not downloaded yet): those are kept and
    reported, unless the job was created before ``retention_cutoff`` (past the service's retention: it has
    deleted the files by then) or ``force`` is given.

    Only Status 0 deletes a file; any other answer leaves it recorded as still on the service (the report's
    ``failed``), but for a file created before ``retention_cutoff`` answered with Status 301/302 "error
    accessing the database": the service deletes uploaded files three months after they arrived (§8), so
    the file is counted as gone. A batch job whose files are deleted this way can no longer give a result;
    unless it had ended, it is recorded as DELETED.
    """
    recorded = await asyncio.to_thread(_recorded_files, database_url, older_than, retention_cutoff, force)
    report = CleanupReport(
        kept={
            job.remote_id: recorded.in_use[job.remote_id]
            for job in recorded.files
            if job.remote_id in recorded.in_use
        }
    )
    files = [job for job in recorded.files if job.remote_id not in recorded.in_use]
    marks = _HistoryMarks(database_url)
    await _delete(
        client, files, report, marks.deleted, marks.not_deleted, past_retention=recorded.past_retention
    )
    return report


@dataclass(frozen=True)
class _RecordedFiles:
    """The recorded files to delete, the job ids of those past the service's retention, and the files a
    batch job still needs (by token)."""

    files: list[JobSnapshot]
    past_retention: frozenset[int]
    in_use: dict[str, KeptFile]


def _recorded_files(
    database_url: str, older_than: datetime, retention_cutoff: datetime, force: bool
) -> _RecordedFiles:
    """What the history holds for :func:`delete_recorded_files` (see there)."""
    with history.session_factory(database_url).begin() as session:
        recorded = [
            job
            for job in history.files_to_clean(session, kinds=FILE_KINDS, older_than=older_than, api=API)
            # A file whose token never arrived cannot be deleted: only its record says it may exist.
            if not job.remote_id.startswith(PENDING_PREFIX)
        ]
        files = [JobSnapshot.of(job) for job in recorded]
        past = frozenset(job.id for job in recorded if job.created_at < retention_cutoff)
        if force or not files:
            return _RecordedFiles(files, past, {})
        owing = [
            JobSnapshot.of(batch)
            for batch in history.jobs_in_states(
                session, api=API, kind=BATCH, states=[state.value for state in _IN_USE]
            )
            if batch.created_at >= retention_cutoff
        ]
        return _RecordedFiles(files, past, tokens_in_use(owing))


@dataclass(frozen=True)
class _HistoryMarks:
    """A file's deletion, or its staying on the service, written to the history at ``database_url`` (off
    the event loop)."""

    database_url: str

    async def deleted(self, job: JobSnapshot) -> None:
        await asyncio.to_thread(self._mark_deleted, job)

    async def not_deleted(self, job: JobSnapshot, answer: str, reason: str) -> None:
        await asyncio.to_thread(self._mark_not_deleted, job, answer, reason)

    def _mark_deleted(self, job: JobSnapshot) -> None:
        with history.session_factory(self.database_url).begin() as session:
            history.mark_file_deleted(session, job.id, api=API, detail="files deleted by clean-up")

    def _mark_not_deleted(self, job: JobSnapshot, answer: str, reason: str) -> None:
        with history.session_factory(self.database_url).begin() as session:
            history.mark_file_not_deleted(session, job.id, answer=answer, reason=reason)
