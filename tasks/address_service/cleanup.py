"""Deleting the address service's remote files once nothing needs them, and recording that they are gone.

A file is needed while the batch job it belongs to may still give a result (recorded as resumable) or might
exist (its submission's outcome is unknown). Everything else recorded and not deleted is an orphan: a run
deletes the orphans of its key, and ``postflows cleanup`` deletes those of every key past an age.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

import history
from connectors.address_service import AddressServiceClient
from history.models import JobState, RemoteJob
from tasks.address_service.batch import API, delete_remote_files
from tasks.run_history import JobSnapshot, RunRecorder

FILE_KINDS = ("upload-file", "output-file")
BATCH = "batch"
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


@dataclass
class CleanupReport:
    """What a clean-up did: tokens deleted, already gone, failed (token → reason), and kept in use."""

    deleted: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)


def tokens_in_use(batches: list[JobSnapshot]) -> set[str]:
    """The file tokens of batch jobs that may still run or give a result."""
    tokens: set[str] = set()
    for batch in batches:
        if batch.state in _IN_USE:
            tokens.update(history.batch_file_tokens(batch.data))
    return tokens


async def delete_key_files(client: AddressServiceClient, recorder: RunRecorder) -> CleanupReport:
    """Delete every recorded, undeleted file of the recorder's key that no live job needs.

    Shielded from cancellation: an interrupted run still deletes what it may.
    """

    async def clean() -> CleanupReport:
        files = [job for kind in FILE_KINDS for job in await recorder.open_jobs(api=API, kind=kind)]
        in_use = tokens_in_use(await recorder.open_jobs(api=API, kind=BATCH))
        report = CleanupReport(kept=[job.remote_id for job in files if job.remote_id in in_use])
        orphans = [job for job in files if job.remote_id not in in_use]
        await _delete(
            client,
            orphans,
            report,
            lambda job: recorder.update_job(job, status=JobState.DELETED, deleted=True),
        )
        for token, reason in report.failed.items():
            await recorder.message("warning", "deletefile", f"file {token} not deleted: {reason}")
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
    mark_deleted: Callable[[JobSnapshot], Awaitable[object]],
) -> None:
    if not files:
        return
    outcomes = await delete_remote_files(client, [job.remote_id for job in files])
    for job in files:
        outcome = outcomes.get(job.remote_id, "failed: not attempted")
        if outcome.startswith("failed"):
            report.failed[job.remote_id] = outcome.removeprefix("failed: ")
            continue
        (report.deleted if outcome == "deleted" else report.gone).append(job.remote_id)
        await mark_deleted(job)


async def delete_recorded_files(
    client: AddressServiceClient, factory: sessionmaker[Session], *, older_than: datetime
) -> CleanupReport:
    """Delete every recorded file of any key created before ``older_than`` and not deleted yet.

    A batch job whose files are deleted this way can no longer give a result; unless it had ended, it is
    recorded as DELETED.
    """

    def read() -> list[JobSnapshot]:
        with factory.begin() as session:
            return [
                JobSnapshot.of(job)
                for job in history.undeleted_files(session, kinds=FILE_KINDS, older_than=older_than, api=API)
            ]

    files = await asyncio.to_thread(read)
    report = CleanupReport()

    def mark(job: JobSnapshot) -> None:
        with factory.begin() as session:
            row = session.get(RemoteJob, job.id)
            if row is None:
                return
            history.update_remote_job(session, row, status=JobState.DELETED.value, deleted=True)
            for batch in history.batches_using_file(session, api=API, token=job.remote_id):
                state = JobSnapshot.of(batch).state
                if state is None or not state.final:
                    history.update_remote_job(
                        session,
                        batch,
                        status=JobState.DELETED.value,
                        finished=True,
                        detail="files deleted by clean-up",
                    )

    async def mark_deleted(job: JobSnapshot) -> None:
        await asyncio.to_thread(mark, job)

    await _delete(client, files, report, mark_deleted)
    return report
