"""Remote jobs as the run history hands them out: :class:`JobSnapshot` (a detached copy of a recorded job)
and the typed facts kept with a job (:class:`JobData`, :class:`Parking`, :class:`BatchJobData`).

A job's facts are stored as a JSON object; these models read and write it, and keep every key they do not
name (the facts of other job kinds), so a history written before them reads as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, PlainSerializer

from history.models import JobState, RemoteJob

D = TypeVar("D", bound="JobData")

IsoDatetime = Annotated[datetime, PlainSerializer(datetime.isoformat, return_type=str)]
"""A moment as a job's data keeps it: ISO 8601 with its offset."""


class Parking(BaseModel):
    """A parked wait for a job: waited for since when, parked how often, looked at again when."""

    model_config = ConfigDict(frozen=True)

    waiting_since: IsoDatetime
    count: int = 1
    resume_at: IsoDatetime


class JobData(BaseModel):
    """The facts recorded with any remote job. Only the fields set on a value are written (merged into what
    is stored); a field set to None clears it."""

    model_config = ConfigDict(frozen=True, extra="allow")

    fingerprint: str | None = None
    """The SHA-256 of what was submitted; a job with another one is never resumed."""
    parked: Parking | None = None
    """The parking of a wait for the job, while it is parked."""

    @classmethod
    def read(cls: type[D], data: Mapping[str, Any] | None) -> D:
        """The facts in a job's stored ``data``."""
        return cls.model_validate(dict(data or {}))

    def changes(self) -> dict[str, Any]:
        """The keys this value writes: the fields set on it, as JSON."""
        return self.model_dump(mode="json", exclude_unset=True)


class BatchJobData(JobData):
    """The facts of an address-service batch job: its files on the service, and its downloads here."""

    input_token: str | None = None
    """The uploaded input file."""
    output_token: str | None = None
    """The file the service writes the result to."""
    extra_outputs: dict[str, str] | None = None
    """The alignment's extra outputs: name → file token."""
    settlement_id: int | None = None
    download: str | None = None
    """Where the result was downloaded to (absolute path)."""
    download_sha256: str | None = None
    extra_downloads: dict[str, str] | None = None
    """The alignment's extra outputs downloaded: name → absolute path."""
    unreadable: dict[str, Any] | None = None
    """Why the downloaded result could not be read (the error's record), until it can."""

    def file_tokens(self) -> set[str]:
        """The tokens of every file the job uses: input, output and the extra outputs."""
        tokens = {self.input_token, self.output_token, *(self.extra_outputs or {}).values()}
        return {token for token in tokens if isinstance(token, str)}


class FileJobData(JobData):
    """The facts of a remote file made for a batch job."""

    output: str | None = None
    """The alignment's extra output the file receives; none for the upload and the main output."""
    not_deleted: str | None = None
    """Why the last /deletefile of the file did not delete it (its answer was not Status 0), until one
    does: the file is recorded as still on the service, and every clean-up asks again, whatever its age."""


def job_data_changes(data: JobData | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The keys to merge into a job's stored data, from a typed value or a plain mapping."""
    if data is None:
        return None
    return data.changes() if isinstance(data, JobData) else dict(data)


@dataclass(frozen=True)
class JobSnapshot:
    """A remote job as recorded: its ids, state, the service's last status and its facts (``data`` as
    stored; :meth:`facts` reads them typed)."""

    id: int
    api: str
    kind: str
    remote_id: str
    status: str | None
    progress: float | None
    data: dict[str, Any] = field(default_factory=dict)
    finished: bool = False
    deleted: bool = False
    run_id: int | None = None
    remote_status: str | None = None

    @classmethod
    def of(cls, job: RemoteJob) -> JobSnapshot:
        return cls(
            id=job.id,
            api=job.api,
            kind=job.kind,
            remote_id=job.remote_id,
            status=job.status,
            progress=job.progress,
            data=dict(job.data or {}),
            finished=job.finished_at is not None,
            deleted=job.deleted_at is not None,
            run_id=job.run_id,
            remote_status=job.remote_status,
        )

    @property
    def state(self) -> JobState | None:
        """The job's state, or None for a status written before states existed."""
        try:
            return JobState(self.status) if self.status is not None else None
        except ValueError:
            return None

    def facts(self, model: type[D]) -> D:
        """The job's facts read as ``model`` (:class:`JobData` or the model of the job's kind)."""
        return model.read(self.data)
