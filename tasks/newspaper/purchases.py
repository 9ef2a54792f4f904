"""Prefect tasks of the address purchase: submit, wait for validation and sorting (with a progress
artifact), fetch the output addresses and the documents. The reads are retried as tasks over longer
outages (:mod:`tasks.retrying`); the purchase POST is not.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.errors import NotFound
from connectors.newspaper import (
    ApiResult,
    NewspaperClient,
    NewspaperMessage,
    OutputAddresses,
    ProcessingStatus,
    Purchase,
    PurchaseDocumentKind,
    PurchaseProgress,
)
from fileio.documents import DocumentLimits, DocumentNaming, FileNames, save_documents
from fileio.limits import DOWNLOAD_MAX_BYTES, ZIP_MAX_RATIO
from history.jobs import JobData
from tasks.polling import (
    Observation,
    PolledJob,
    PollPolicy,
    RemoteJobEnded,
    Sleep,
    StatusCallback,
    WaitClock,
    WaitParked,
    poll_until,
)
from tasks.retrying import idempotent_step

logger = logging.getLogger("postflows.newspaper.purchases")

FAILED_STATUSES = frozenset({"FAILED", "ERROR", "CANCELED", "CANCELLED", "REJECTED", "ABORTED"})
OUTPUT_COLUMNS = (
    "statusCode",
    "bundleId",
    "bundleInfo",
    "id",
    "firstName",
    "lastName",
    "street",
    "houseNumber",
    "zipCode",
    "city",
    "isoCode",
    "quantity",
)


class PurchaseJobData(JobData):
    """The facts of an address purchase: the addresses sent, and whether it cleans up and sorts them."""

    addresses: int | None = None
    clean_up: bool | None = None
    sorting: bool | None = None


class PurchaseFailed(RemoteJobEnded):
    """Validation or sorting ended in a failure status."""

    def __init__(self, message: str, *, status: str) -> None:
        super().__init__(message)
        self.status = status
        self.cancelled = status in ("CANCELED", "CANCELLED")


def overall_percent(progress: PurchaseProgress, *, sorting: bool = True) -> float:
    """One figure for the phases ordered: validation is the first half and sorting the second, or validation
    the whole when no sorting was ordered."""
    validated = float(progress.validation_progress_percent or 0)
    if progress.validation_status == ProcessingStatus.READY:
        validated = 100.0
    if not sorting:
        return min(100.0, validated)
    if progress.is_ready:
        return 100.0
    return min(99.0, validated / 2 + (25.0 if validated >= 100 and progress.sorting_status else 0.0))


def describe(progress: PurchaseProgress) -> str:
    return (
        f"validation {progress.validation_status} {progress.validation_progress_percent or 0}%, "
        f"sorting {progress.sorting_status}"
    )


@task(name="newspaper-submit-purchase", cache_policy=NO_CACHE)
async def submit_purchase(client: NewspaperClient, purchase: Purchase) -> ApiResult[int]:
    """POST the purchase; returns its id."""
    return await client.submit_purchase(purchase)


def purchase_done(progress: PurchaseProgress, *, sorting: bool) -> bool:
    """Whether the statuses the purchase's options produce are all READY.

    A purchase without a sorting module is validated only: it is done when validation is READY, whatever
    the sorting status says (the service may report none, or a waiting one).
    """
    ready = ProcessingStatus.READY
    return progress.validation_status == ready and (not sorting or progress.sorting_status == ready)


def _failure(progress: PurchaseProgress, *, sorting: bool) -> str | None:
    statuses = [str(progress.validation_status or "").upper()]
    if sorting:
        statuses.append(str(progress.sorting_status or "").upper())
    failed = [status for status in statuses if status in FAILED_STATUSES]
    return failed[0] if failed else None


@dataclass(frozen=True)
class PlacedPurchase:
    """A purchase the service took, as its wait needs it.

    Attributes:
        purchase_id: the service's id of the purchase.
        sorting: whether a sorting module was ordered with it (it is done only when the sorting is).
    """

    purchase_id: int
    sorting: bool


async def wait_for_purchase(
    client: NewspaperClient,
    purchase: PlacedPurchase,
    *,
    policy: PollPolicy,
    on_status: StatusCallback[ApiResult[PurchaseProgress]] | None = None,
    waited_s: float = 0.0,
    sleep: Sleep = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> PurchaseProgress | WaitParked:
    """Poll the progress until the purchase is done (see :func:`purchase_done`), showing it as progress, or
    the wait is parked (``policy.park_after_s``: :class:`~tasks.polling.WaitParked`, for a follow-up run).
    Each look is one call of the connector, not a task run: the wait is its retry (see
    :func:`~tasks.polling.poll_until`); ``waited_s`` is how long earlier runs waited for the purchase
    already.

    Raises:
        PurchaseFailed: a status the purchase waits for reports failure.
        PollTimedOut: not done after ``policy.max_wait_s``; the purchase may still run, a re-run resumes
            it.
    """

    purchase_id, sorting = purchase.purchase_id, purchase.sorting

    async def check() -> Observation[ApiResult[PurchaseProgress]]:
        result = await client.get_purchase_progress(purchase_id)
        progress = result.value
        failed = _failure(progress, sorting=sorting)
        if failed is not None:
            raise PurchaseFailed(f"purchase {purchase_id}: {describe(progress)}", status=failed)
        done = purchase_done(progress, sorting=sorting)
        percent = 100.0 if done else overall_percent(progress, sorting=sorting)
        return Observation(result, done=done, percent=percent, detail=describe(progress))

    final = await poll_until(
        check,
        policy,
        on_status,
        job=PolledJob(f"purchase {purchase_id}", waited_s=waited_s),
        clock=WaitClock(sleep, clock),
    )
    return final if isinstance(final, WaitParked) else final.value


@idempotent_step("newspaper-output-addresses")
async def fetch_output_addresses(client: NewspaperClient, purchase_id: int) -> ApiResult[OutputAddresses]:
    """The validated and sorted addresses."""
    return await client.get_output_addresses(purchase_id)


@dataclass(frozen=True)
class PurchaseDocuments:
    """A purchase's documents as fetched.

    Attributes:
        saved: kind → the file written (the document decoded, or the answer as received).
        not_available: kind → the service's words, for a document the service does not have (see
            :func:`save_purchase_documents`).
        warnings: the API's warnings.
    """

    saved: dict[str, Path]
    not_available: dict[str, str]
    warnings: tuple[NewspaperMessage, ...]


@idempotent_step("newspaper-purchase-documents")
async def save_purchase_documents(
    client: NewspaperClient,
    purchase_id: int,
    directory: Path,
    kinds: Iterable[PurchaseDocumentKind],
    *,
    max_bytes: int = DOWNLOAD_MAX_BYTES,
    max_ratio: float = ZIP_MAX_RATIO,
) -> PurchaseDocuments:
    """Fetch each document and write it decoded (``<kind>.pdf``).

    An answer without a document shape is written as received (``<kind>.response.json``) in its place. The
    non-reusable addresses exist only when the purchase's address clean-up took effect, and the field that
    orders it is a guess (``newspaper.clean-up-option``): a 404 for them lists them as not available, never
    as an empty document.

    Raises:
        DocumentRejected: a document does not decode or passes ``max_bytes`` (a ZIP also ``max_ratio``);
            the answer is written first.
        NotFound: any other document answered 404.
    """
    saved: dict[str, Path] = {}
    not_available: dict[str, str] = {}
    warnings: tuple[NewspaperMessage, ...] = ()
    names = FileNames()
    for kind in kinds:
        try:
            result = await client.get_purchase_document(purchase_id, kind)
        except NotFound as error:
            if kind is not PurchaseDocumentKind.NON_REUSABLE_ADDRESSES:
                raise
            logger.warning("the %s document is not available: %s", kind.value, error)
            not_available[kind.value] = str(error)
            continue
        written = save_documents(
            result.value,
            directory,
            DocumentNaming(kind.value, f"{kind.value} document"),
            names=names,
            keep_raw=False,
            limits=DocumentLimits(max_bytes, max_ratio),
        )
        if written.documents:
            saved[kind.value] = written.documents[0].path
        elif written.raw is not None:
            logger.warning(
                "the %s answer holds no document; written as received to %s", kind.value, written.raw.path
            )
            saved[kind.value] = written.raw.path
        warnings += result.warnings
    return PurchaseDocuments(saved, not_available, warnings)


SORTING_DOCUMENTS = frozenset(
    {
        PurchaseDocumentKind.BUNDLE_LABELS,
        PurchaseDocumentKind.CONTAINER_LABELS,
        PurchaseDocumentKind.SORT_PROTOCOL,
    }
)


def document_kinds(clean_up: bool, *, sorting: bool = True) -> list[PurchaseDocumentKind]:
    """Every document the purchase's options produce: the non-reusable addresses only when address clean-up
    was ordered, the labels and the sorting protocol only when sorting was."""
    return [
        kind
        for kind in PurchaseDocumentKind
        if (clean_up or kind is not PurchaseDocumentKind.NON_REUSABLE_ADDRESSES)
        and (sorting or kind not in SORTING_DOCUMENTS)
    ]
