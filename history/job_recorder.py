"""The remote jobs of a recorded run: what each API holds for the run, recorded under its idempotency key
and read back as detached :class:`~history.jobs.JobSnapshot` values, so callers never touch ORM objects.
:class:`~history.recorder.RunRecorder` records them through this base.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, TypedDict, Unpack

from sqlalchemy.orm import Session

from core.redaction import redact
from history.db import durable_begin
from history.errors import LeaseLost
from history.jobs import JobData, JobSnapshot, job_data_changes
from history.leased_run import LeasedRun
from history.leases import holds_lease
from history.models import JobState, RemoteJob
from history.remote_jobs import (
    JobChange,
    RemoteReport,
    find_remote_job,
    job_with_remote_id,
    jobs_recorded_since,
    save_remote_job,
    unfinished_jobs,
    update_remote_job,
)

DETAIL_CHARS = 500
"""The most characters of a detail text kept (after the secret scrubber)."""


class JobUpdate(TypedDict, total=False):
    """What is now known about a recorded job; what is left out stays as it is.

    Attributes:
        status: its state.
        report: what the service says of it, its id among that.
        data: the facts to merge into its data.
        finished: it ended (its end time is set once).
        deleted: its remote files are gone (its deletion time is set once).
        detail: a text for its status event.
    """

    status: JobState | str | None
    report: RemoteReport | None
    data: JobData | Mapping[str, Any] | None
    finished: bool
    deleted: bool
    detail: str | None


class JobRecorder(LeasedRun):
    """Records and finds the remote jobs of one run; every detail text passes the secret scrubber."""

    def _text(self, text: str | None) -> str | None:
        return None if text is None else redact(text)[:DETAIL_CHARS]

    # -- remote jobs -----------------------------------------------------------------------------------

    async def save_job(
        self,
        *,
        api: str,
        kind: str,
        remote_id: str,
        status: JobState | str | None = None,
        remote_status: str | None = None,
        data: JobData | Mapping[str, Any] | None = None,
        submission: bool = False,
    ) -> JobSnapshot:
        """Record a job the remote side holds (or is about to hold) under this run's key.

        Args:
            submission: the marker of a submission, written before its request leaves: only while this run
                holds its key, checked in the same transaction, so a run presumed dead can never record a
                submission beside its successor; and on disk when this returns, even should the power fail
                next (:func:`history.db.durable_begin`).

        Raises:
            LeaseLost: ``submission`` and the key is no longer this run's.
        """
        facts = job_data_changes(data) or {}

        def save() -> JobSnapshot:
            with durable_begin(self._factory) if submission else self._factory.begin() as session:
                key = self._lease_key or self.idempotency_key
                if submission and key and not holds_lease(session, key=key, run_id=self.run_id):
                    raise LeaseLost(f"run {self.run_id} no longer holds key {key}; not submitting")
                job = save_remote_job(
                    session,
                    self._run(session),
                    api=api,
                    kind=kind,
                    remote_id=remote_id,
                    idempotency_key=self.idempotency_key,
                    change=JobChange(
                        status=str(status) if status is not None else None,
                        report=RemoteReport(remote_status=remote_status),
                        data=facts,
                    ),
                )
                session.flush()
                return JobSnapshot.of(job)

        return await self._write(save)

    async def update_job(self, job: JobSnapshot, **update: Unpack[JobUpdate]) -> JobSnapshot:
        """Record what is now known about ``job`` (see :class:`JobUpdate`); returns it as stored."""
        [updated] = await self.update_jobs([(job, self.change(**update))])
        return updated

    def change(self, **update: Unpack[JobUpdate]) -> JobChange:
        """What is now known about a job (see :class:`JobUpdate`), for :meth:`update_jobs`; its detail text
        scrubbed."""
        status = update.get("status")
        return JobChange(
            status=str(status) if status is not None else None,
            report=update.get("report") or RemoteReport(),
            data=job_data_changes(update.get("data")),
            finished=update.get("finished", False),
            deleted=update.get("deleted", False),
            detail=self._text(update.get("detail")),
        )

    async def update_jobs(self, changes: Sequence[tuple[JobSnapshot, JobChange]]) -> list[JobSnapshot]:
        """Record what is now known about several jobs (each with its :meth:`change`) in one transaction;
        returns them as stored, in the same order."""
        if not changes:
            return []

        def update() -> list[JobSnapshot]:
            with self._factory.begin() as session:
                return [updated_job(session, job, change) for job, change in changes]

        return await self._write(update)

    async def find_job(self, *, api: str, kind: str, include_deleted: bool = True) -> JobSnapshot | None:
        """The newest job of this kind recorded under this run's idempotency key (by any run)."""
        key = self.idempotency_key
        if not key:
            return None

        def find() -> JobSnapshot | None:
            with self._factory.begin() as session:
                job = find_remote_job(
                    session, api=api, kind=kind, idempotency_key=key, include_deleted=include_deleted
                )
                return JobSnapshot.of(job) if job is not None else None

        return await self._write(find)

    async def job_with_remote_id(self, *, api: str, kind: str, remote_id: str) -> JobSnapshot | None:
        """The job recorded with the service's id ``remote_id``, under any key, or None."""

        def find() -> JobSnapshot | None:
            with self._factory.begin() as session:
                job = job_with_remote_id(session, api=api, kind=kind, remote_id=remote_id)
                return JobSnapshot.of(job) if job is not None else None

        return await self._write(find)

    async def jobs_since(self, *, api: str, kind: str, since: datetime) -> list[JobSnapshot]:
        """Every job of this api and kind recorded at or after ``since`` (under any key) that is not deleted,
        oldest first."""

        def find() -> list[JobSnapshot]:
            with self._factory.begin() as session:
                jobs = jobs_recorded_since(session, api=api, kind=kind, since=since)
                return [JobSnapshot.of(job) for job in jobs]

        return await self._write(find)

    async def open_jobs(self, *, api: str, kinds: Collection[str]) -> list[JobSnapshot]:
        """Every job of these kinds under this run's key that is not deleted yet, oldest first."""
        key = self.idempotency_key
        if not key:
            return []

        def find() -> list[JobSnapshot]:
            with self._factory.begin() as session:
                jobs = unfinished_jobs(session, idempotency_key=key, api=api, kinds=kinds)
                return [JobSnapshot.of(job) for job in jobs]

        return await self._write(find)


def updated_job(session: Session, job: JobSnapshot, change: JobChange) -> JobSnapshot:
    """Record ``change`` to the recorded ``job`` in ``session``; returns the job as it now stands."""
    row = session.get(RemoteJob, job.id)
    if row is None:  # pragma: no cover
        raise LookupError(f"remote job {job.id} vanished from the history")
    update_remote_job(session, row, change)
    return JobSnapshot.of(row)
