"""What the run history's record of an address-service batch job decides: whether a later run resumes the
job, whether ``--resubmit`` replaces it, and which of its downloads are still on disk as recorded.

The job's facts are read and written as :class:`~history.jobs.BatchJobData` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from history.jobs import BatchJobData, JobSnapshot
from history.models import JobState
from history.store import file_digest


def batch_files(input_token: str, output_token: str, extra_outputs: Mapping[str, str]) -> BatchJobData:
    """The facts of a batch job about to be sent: its input, output and extra output files."""
    files: dict[str, object] = {"input_token": input_token, "output_token": output_token}
    if extra_outputs:
        files["extra_outputs"] = dict(extra_outputs)
    return BatchJobData.model_validate(files)


def batch_downloaded(download: Path, extras: Mapping[str, Path]) -> BatchJobData:
    """The facts of a batch job whose result (and the alignment's extra outputs) was downloaded."""
    return BatchJobData(
        download=str(download.resolve()),
        download_sha256=file_digest(download)[1],
        extra_downloads={name: str(path.resolve()) for name, path in extras.items()},
    )


def batch_is_resumable(job: JobSnapshot) -> bool:
    """A recorded batch job is this work's until ``--resubmit`` replaces it: while it may run or give a
    result, and once completed (its result is on disk, or the run says where it went)."""
    state = job.state
    return state is not None and (state.resumable or state is JobState.COMPLETED)


def batch_result_missing(job: JobSnapshot) -> bool:
    """Whether ``--resubmit`` replaces the recorded job: its result is not on disk as recorded."""
    return recorded_download(job) is None


def recorded_download(job: JobSnapshot) -> Path | None:
    """The download of a completed job, when it is still on disk as it was recorded."""
    facts = job.facts(BatchJobData)
    name = facts.download
    if job.state is not JobState.COMPLETED or not name or not Path(name).is_file():
        return None
    if facts.download_sha256 not in (None, file_digest(Path(name))[1]):
        return None
    return Path(name)


def recorded_extras(job: JobSnapshot) -> dict[str, Path]:
    """The alignment's extra outputs downloaded for a completed job, those still on disk."""
    recorded = job.facts(BatchJobData).extra_downloads or {}
    return {name: Path(path) for name, path in recorded.items() if Path(path).is_file()}
