"""The address batch's job below the flow (:mod:`flows.address_batch`): what runbatch is sent
(:class:`BatchOrder`), the files and the runbatch a new job sends (:class:`NewBatchJob`), and the wait for a
job and the download of its outputs (:func:`follow_batch`), and what a refusal to read a download says
(:func:`still_refused`, :func:`kept_download`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefect import get_run_logger

from connectors.address_service import AddressServiceClient, BatchJob, BatchStatus, TokenStatus
from fileio.files import own_folder
from fileio.limits import TableLimits
from flows.batch_work import BatchWork
from history import file_digest
from history.jobs import BatchJobData, FileJobData, JobSnapshot
from history.models import JobState
from history.recorder import RunRecorder
from history.remote_jobs import RemoteReport
from tasks.address_service.batch import (
    DownloadLimits,
    create_output_file,
    download_output,
    named_by_content,
    start_batch,
    upload_input_file,
    wait_for_batch,
)
from tasks.address_service.batch_record import batch_downloaded, batch_files
from tasks.address_service.billing import Billing
from tasks.address_service.cleanup import created_file
from tasks.job_waits import JobParked, recorded_wait, waited_before
from tasks.polling import PollPolicy
from tasks.retrying import run_step

MAIN_OUTPUT = "output"


@dataclass(frozen=True)
class BatchOrder:
    """What a batch job is sent for this work: the upload file and its SHA-256 (a recorded job made from
    another upload is never resumed), the alignment key, the billing fields (reference, client identifier,
    client name), the alignment's extra outputs (name → the replace item runbatch fills with its file), and
    whether a recorded job whose result never arrived is replaced (``resubmit``)."""

    upload_path: Path
    upload_sha256: str
    key: str
    billing: tuple[str | None, str | None, str | None]
    outputs: Mapping[str, str]
    resubmit: bool

    @classmethod
    def of(cls, work: BatchWork, upload_path: Path) -> BatchOrder:
        """The order of ``work`` with the upload file written for it."""
        return cls(
            upload_path=upload_path,
            upload_sha256=file_digest(upload_path)[1],
            key=work.batch_key,
            billing=work.billing,
            outputs=work.alignment.outputs if work.alignment is not None else {},
            resubmit=work.request.resubmit,
        )


@dataclass
class NewBatchJob:
    """The calls of a new batch job: the free preparatory ones (upload, createfile for the output and each
    extra output), each file recorded as it is made, then the one billed runbatch on those files."""

    client: AddressServiceClient
    recorder: RunRecorder
    order: BatchOrder
    created: list[BatchJobData] = field(default_factory=list)

    async def upload_and_create(self) -> dict[str, Any]:
        """Upload the input and create the output files; the facts the job's marker records."""
        client, recorder = self.client, self.recorder
        upload = await created_file(
            recorder, kind="upload-file", create=lambda: upload_input_file(client, self.order.upload_path)
        )
        output = await created_file(recorder, kind="output-file", create=lambda: create_output_file(client))
        extra: dict[str, str] = {}
        for name in self.order.outputs:
            made = await created_file(
                recorder,
                kind="output-file",
                create=lambda: create_output_file(client),
                data=FileJobData(output=name),
            )
            extra[name] = made.remote_id
        self.created.append(batch_files(upload.remote_id, output.remote_id, extra))
        return self.created[-1].changes()

    async def run_batch(self) -> BatchJob:
        """Start the alignment on the files made by :meth:`upload_and_create` (runbatch: billed)."""
        [files] = self.created
        outputs = self.order.outputs
        return await start_batch(
            self.client,
            key=self.order.key,
            input_token=str(files.input_token),
            output_token=str(files.output_token),
            billing=Billing(*self.order.billing),
            extra_items={outputs[name]: token for name, token in (files.extra_outputs or {}).items()},
        )


async def follow_batch(
    client: AddressServiceClient,
    recorder: RunRecorder,
    job: JobSnapshot,
    output_dir: Path,
    *,
    policy: PollPolicy,
    limits: DownloadLimits,
) -> JobSnapshot | JobParked:
    """Wait for the job and download its output (and the alignment's extra outputs); returns the job as
    completed, or the parked job when the wait was parked (a follow-up run continues it).

    Every way out records where the job stands: COMPLETED with the download, FAILED or CANCELLED, WAITING
    when it may still run (time-out, interruption, status checks that kept failing), FINISHED when it ran
    but its download failed. A status or a download the service cannot give now (Status 301/302 included)
    never ends the job: the same command asks again.
    """

    async def on_status(status: BatchStatus) -> None:
        # The status that ends the wait records the job FINISHED: its download is owed from here on.
        finished = status.token_status is TokenStatus.FINISHED
        await recorder.update_job(
            job,
            status=JobState.FINISHED if finished else JobState.RUNNING,
            report=RemoteReport(
                remote_status=status.token_status.name,
                progress=status.progress,
                status_date=status.last_update_date_time,
            ),
        )

    ended = await recorded_wait(
        recorder,
        job,
        lambda: wait_for_batch(
            client, job.remote_id, policy=policy, on_status=on_status, waited_s=waited_before(job)
        ),
        what=f"batch job {job.remote_id}",
    )
    if isinstance(ended, JobParked):
        return ended
    return await _download(client, recorder, job, output_dir, limits)


async def _download(
    client: AddressServiceClient,
    recorder: RunRecorder,
    job: JobSnapshot,
    output_dir: Path,
    limits: DownloadLimits,
) -> JobSnapshot:
    """Download the finished job's output and extra outputs, each named by its content, and record the job
    COMPLETED with them; a download that fails leaves the job FINISHED for the same command to fetch."""
    folder = own_folder(output_dir / "download")
    files = job.facts(BatchJobData)
    wanted = {MAIN_OUTPUT: (str(files.output_token), folder / "result.bin")}
    for name, token in (files.extra_outputs or {}).items():
        wanted[name] = (token, folder / f"{name}.bin")
    try:
        for name, (token, path) in wanted.items():
            batch_token = job.remote_id if name == MAIN_OUTPUT else None
            await run_step(
                download_output,
                client,
                token,
                path,
                max_bytes=limits.max_bytes,
                max_ratio=limits.zip_max_ratio,
                batch_token=batch_token,
            )
    except BaseException:
        get_run_logger().warning(
            "batch job %s finished but its download failed; the same command fetches it", job.remote_id
        )
        raise
    download = named_by_content(wanted.pop(MAIN_OUTPUT)[1])
    extras = {name: named_by_content(path) for name, (_, path) in wanted.items()}
    return await recorder.job_documents(
        job,
        [("download", download), *((f"output:{name}", path) for name, path in extras.items())],
        recorder.change(status=JobState.COMPLETED, finished=True, data=batch_downloaded(download, extras)),
    )


def still_refused(refused: Mapping[str, Any], limits: TableLimits) -> bool:
    """Whether a download found over a limit (as :meth:`ResultUnreadable.record` keeps it) is still over it:
    the limit it passed has not been raised since."""
    current = limits.value_of(str(refused.get("setting")))
    return current is not None and current <= int(refused.get("limit", 0))


def kept_download(download: Path, setting: str) -> str:
    """What a refusal to read a download says of it: where it is kept, and the setting to raise."""
    return (
        f"the download is kept as it came in {download}: raise {setting} and run the same command again "
        "to read it"
    )
