"""Prefect tasks of the batch alignment: one remote call or one transformation each.

Transient failures are retried inside the connector (HTTP core). The idempotent steps (status check,
download, delete) are retried as tasks over longer outages (:mod:`tasks.retrying`); upload, createfile and
runbatch are not: the submit-once protocol decides whether they are sent again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.address_service import AddressServiceClient, BatchJob, BatchStatus, TokenStatus
from connectors.address_service.errors import DatabaseStatusError
from connectors.errors import ApiError
from fileio.archives import scrub_archive
from fileio.errors import ResultFileError
from fileio.files import FileTooLarge, write_stream
from fileio.limits import (
    DOWNLOAD_MAX_BYTES,
    DOWNLOAD_MAX_BYTES_SETTING,
    TABLE_LIMITS,
    ZIP_MAX_RATIO,
    TableLimits,
)
from tasks.address_service.billing import CONTRACT, Billing
from tasks.polling import (
    Observation,
    PolledJob,
    PollPolicy,
    RemoteJobEnded,
    WaitClock,
    WaitParked,
    poll_until,
)
from tasks.retrying import idempotent_step, run_step

API = "address-service"


class BatchJobFailed(RemoteJobEnded):
    """The batch job ended in Error, Failed or Canceled (§2.6)."""

    def __init__(
        self, token_status: TokenStatus, message: str | None, *, reported: int | None = None
    ) -> None:
        detail = f": {message}" if message else ""
        said = f"{int(token_status)} {token_status.name}"
        if reported is not None and reported != int(token_status):
            said = f"{reported}, a status the specification does not list (read as {said})"
        super().__init__(f"batch job ended with TokenStatus {said}{detail}")
        self.token_status = token_status
        self.cancelled = token_status.name == "CANCELED"


@task(name="address-upload-input", cache_policy=NO_CACHE)
async def upload_input_file(client: AddressServiceClient, path: Path) -> str:
    """Upload the prepared input file; returns its FileToken."""
    return await client.upload_file(path)


async def create_output_file(client: AddressServiceClient) -> str:
    """Create the output file the batch writes into; returns its FileToken.

    A plain call, not a task run: /createfile is free and answers at once, the HTTP core retries a blip, and
    the history records the file (:func:`~tasks.address_service.cleanup.created_file`). A task run would add
    only its record in the UI, and cost the Prefect server as much as the upload's.
    """
    return await client.create_file()


@task(name="address-run-batch", cache_policy=NO_CACHE)
async def start_batch(
    client: AddressServiceClient,
    *,
    key: str,
    input_token: str,
    output_token: str,
    billing: Billing = CONTRACT,
    extra_items: Mapping[str, str] | None = None,
) -> BatchJob:
    """Start the alignment (runbatch, or runbatchwithclient when ``billing`` names a client's billing
    reference); ``extra_items``: the alignment's further replace items → their file tokens."""
    return await client.run_batch(
        key, input_token, output_token, **billing.arguments(), extra_items=extra_items
    )


StatusCallback = Callable[[BatchStatus], Awaitable[None] | None]


def observe(status: BatchStatus) -> Observation[BatchStatus]:
    """One look at a batch job for the poller; a failure status raises :class:`BatchJobFailed`."""
    if status.token_status.is_failure:
        raise BatchJobFailed(status.token_status, status.message, reported=status.reported_token_status)
    detail = status.token_status.name.lower()
    reported = status.reported_token_status
    if reported is not None and reported != int(status.token_status):
        detail = f"TokenStatus {reported}, a status the specification does not list"
    elif status.token_status is TokenStatus.UNKNOWN:
        detail = "TokenStatus 7 Unknown"
    if status.remaining_time_seconds is not None:
        detail += f", about {status.remaining_time_seconds}s left"
    return Observation(
        status,
        done=status.token_status is TokenStatus.FINISHED,
        estimate_s=float(status.remaining_time_seconds) if status.remaining_time_seconds else None,
        percent=float(status.progress) if status.progress is not None else None,
        detail=detail,
    )


async def wait_for_batch(
    client: AddressServiceClient,
    batch_token: str,
    *,
    policy: PollPolicy,
    on_status: StatusCallback | None = None,
    waited_s: float = 0.0,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> BatchStatus | WaitParked:
    """Poll /checkbatchstatus until the job finishes, or the wait is parked (``policy.park_after_s``:
    :class:`~tasks.polling.WaitParked`, for a follow-up run to continue). Each look is one call of the
    connector (whose HTTP core retries a blip), not a task run: the wait is its retry (see
    :func:`~tasks.polling.poll_until`).

    A look that fails, whatever the error (Status 301/302 "error accessing the database" included), says
    nothing about the job: it is looked at again until the deadline, and a wait that ends that way leaves
    the job to the next run. Only a TokenStatus ends a job. ``waited_s``: how long earlier runs waited for
    this job already (a parked wait continued). ``sleep`` and ``clock`` (monotonic seconds) are the real ones
    unless a test or a simulation passes its own.

    Raises:
        BatchJobFailed: TokenStatus 1, 5 or 6 (7 Unknown and numbers §2.6 does not list are waited out).
        PollTimedOut: still running after ``policy.max_wait_s``; the job may go on remotely.
        ApiError: every look failed until the deadline; the job may go on remotely.
    """

    async def check() -> Observation[BatchStatus]:
        return observe(await client.check_batch_status(batch_token))

    return await poll_until(
        check,
        policy,
        on_status,
        job=PolledJob(f"address batch {batch_token}", waited_s=waited_s),
        clock=WaitClock(sleep, clock),
        transient=_any_error,
    )


def _any_error(error: ApiError) -> bool:
    return True


@dataclass(frozen=True)
class DownloadLimits:
    """How much a download may hold: bytes in all, the compression ratio of a ZIP, and the shape of the
    files in it."""

    max_bytes: int
    zip_max_ratio: float
    tables: TableLimits = TABLE_LIMITS


@idempotent_step("address-download-output")
async def download_output(
    client: AddressServiceClient,
    output_token: str,
    destination: Path,
    *,
    max_bytes: int = DOWNLOAD_MAX_BYTES,
    max_ratio: float = ZIP_MAX_RATIO,
    batch_token: str | None = None,
) -> Path:
    """Stream the output file to ``destination``, written atomically and no larger than ``max_bytes``,
    without this process's secrets (a ZIP's members scrubbed within ``max_bytes`` and ``max_ratio``,
    :func:`~fileio.archives.scrub_archive`), as every answer kept as received.

    Which token /downloadfile takes is not said (§4.1; the guess ``address-service.download-token``): the
    output file's is asked first and, when the service answers that it finds no such item (301/302), the
    ``batch_token`` (a GET, asked again safely).

    Raises:
        ResultFileError: the file is larger than ``max_bytes``; nothing of it is left on disk.
    """
    try:
        try:
            await _stream_to(client, output_token, destination, max_bytes)
        except DatabaseStatusError:
            if batch_token is None:
                raise
            await _stream_to(client, batch_token, destination, max_bytes)
    except FileTooLarge as exc:
        raise ResultFileError(
            f"the output file is larger than the limit of {max_bytes:,} bytes "
            f"({DOWNLOAD_MAX_BYTES_SETTING}); nothing was written",
            path=destination,
        ) from exc
    scrub_archive(destination, max_bytes=max_bytes, max_ratio=max_ratio)
    return destination


async def _stream_to(client: AddressServiceClient, token: str, destination: Path, max_bytes: int) -> None:
    async with client.download(token) as chunks:
        await write_stream(destination, chunks, max_bytes=max_bytes)


@idempotent_step("address-delete-file")
async def delete_file(client: AddressServiceClient, token: str) -> None:
    """Delete one remote file (/deletefile); returns once the service answered Status 0."""
    await client.delete_file(token)


async def delete_remote_files(
    client: AddressServiceClient,
    tokens: list[str],
    on_answer: Callable[[str, ApiError | None], Awaitable[None]],
) -> None:
    """Ask the service to delete every token, one after the other, whatever happened before; hands each
    token's outcome to ``on_answer`` as soon as it is known, before the next request leaves: None for a file
    it deleted (Status 0), else the error that leaves the file on the service as far as we know (any other
    Status, 302 included, an HTTP error, a lost answer).

    Runs shielded from cancellation, so a cancelled flow still cleans up what it uploaded and records what
    it deleted.
    """

    async def delete_all() -> None:
        for token in tokens:
            try:
                await run_step(delete_file, client, token)
            except ApiError as error:
                await on_answer(token, error)
            else:
                await on_answer(token, None)

    cleanup = asyncio.ensure_future(delete_all())
    try:
        await asyncio.shield(cleanup)
    except asyncio.CancelledError:
        await cleanup
        raise


def named_by_content(path: Path) -> Path:
    """Give a downloaded output the extension its content shows (``.zip``, ``.xml``, else ``.txt``); returns
    the new path. The service names no type for the files it writes."""
    with path.open("rb") as handle:
        head = handle.read(512).lstrip()
    suffix = ".zip" if head.startswith(b"PK\x03\x04") else ".xml" if head.startswith(b"<") else ".txt"
    return path.replace(path.with_suffix(suffix))
