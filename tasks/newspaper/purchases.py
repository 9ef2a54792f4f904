"""Prefect tasks of the address purchase: submit, wait for validation and sorting (with a progress
artifact), fetch the output addresses and the documents.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.errors import PostflowsError
from connectors.newspaper import (
    ApiResult,
    NewspaperClient,
    NewspaperMessage,
    OutputAddresses,
    Purchase,
    PurchaseDocumentKind,
    PurchaseProgress,
)
from tasks.documents import FileNames, save_documents
from tasks.limits import DOWNLOAD_MAX_BYTES
from tasks.progress import Progress

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


class PurchaseFailed(PostflowsError):
    """Validation or sorting ended in a failure status."""


class PurchaseStillRunning(PostflowsError):
    """The purchase was not ready within the allowed wait; a re-run resumes it."""


@dataclass(frozen=True)
class PurchasePollPolicy:
    """Polling of the progress: from ``min_interval_s`` growing by half up to ``max_interval_s``, at most
    ``max_wait_s`` in all."""

    max_wait_s: float = 3600.0
    min_interval_s: float = 2.0
    max_interval_s: float = 60.0


def overall_percent(progress: PurchaseProgress) -> float:
    """One figure for both phases: validation is the first half, sorting the second."""
    if progress.is_ready:
        return 100.0
    validated = float(progress.validation_progress_percent or 0)
    if str(progress.validation_status or "").upper() == "READY":
        validated = 100.0
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


ProgressCallback = Callable[[PurchaseProgress, tuple[NewspaperMessage, ...]], None]


@task(name="newspaper-wait-for-purchase", cache_policy=NO_CACHE)
async def wait_for_purchase(
    client: NewspaperClient,
    purchase_id: int,
    *,
    policy: PurchasePollPolicy,
    on_progress: ProgressCallback | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> PurchaseProgress:
    """Poll the progress until validation and sorting are READY, showing it as a progress artifact.

    Raises:
        PurchaseFailed: a status reports failure.
        PurchaseStillRunning: not ready after ``policy.max_wait_s``.
    """
    started = time.monotonic()
    tracker = await Progress.start(f"purchase {purchase_id}")
    interval = policy.min_interval_s
    while True:
        result = await client.get_purchase_progress(purchase_id)
        progress = result.value
        if on_progress is not None:
            on_progress(progress, result.warnings)
        await tracker.update(overall_percent(progress), describe(progress))
        if progress.is_ready:
            return progress
        statuses = {str(progress.validation_status or "").upper(), str(progress.sorting_status or "").upper()}
        if statuses & FAILED_STATUSES:
            raise PurchaseFailed(f"purchase {purchase_id}: {describe(progress)}")
        elapsed = time.monotonic() - started
        if elapsed >= policy.max_wait_s:
            raise PurchaseStillRunning(
                f"purchase {purchase_id} not ready after {elapsed:.0f}s ({describe(progress)}); "
                "run again to resume it"
            )
        await sleep(min(interval, max(0.0, policy.max_wait_s - elapsed)))
        interval = min(policy.max_interval_s, interval * 1.5)


@task(name="newspaper-output-addresses", cache_policy=NO_CACHE)
async def fetch_output_addresses(client: NewspaperClient, purchase_id: int) -> ApiResult[OutputAddresses]:
    """The validated and sorted addresses."""
    return await client.get_output_addresses(purchase_id)


@task(name="newspaper-purchase-documents", cache_policy=NO_CACHE)
async def save_purchase_documents(
    client: NewspaperClient,
    purchase_id: int,
    directory: Path,
    kinds: Iterable[PurchaseDocumentKind],
    *,
    max_bytes: int = DOWNLOAD_MAX_BYTES,
) -> tuple[dict[str, Path], tuple[NewspaperMessage, ...]]:
    """Fetch each document and write it decoded (``<kind>.pdf``); returns kind → path and the warnings.

    An answer without a document shape is written as received (``<kind>.response.json``) in its place.

    Raises:
        DocumentRejected: a document does not decode or passes ``max_bytes`` (the answer is written first).
    """
    saved: dict[str, Path] = {}
    warnings: tuple[NewspaperMessage, ...] = ()
    names = FileNames()
    for kind in kinds:
        result = await client.get_purchase_document(purchase_id, kind)
        written = save_documents(
            result.value,
            directory,
            stem=kind.value,
            label=f"{kind.value} document",
            names=names,
            keep_raw=False,
            max_bytes=max_bytes,
        )
        if written.documents:
            saved[kind.value] = written.documents[0].path
        elif written.raw is not None:
            logger.warning(
                "the %s answer holds no document; written as received to %s", kind.value, written.raw.path
            )
            saved[kind.value] = written.raw.path
        warnings += result.warnings
    return saved, warnings


def document_kinds(clean_up: bool) -> list[PurchaseDocumentKind]:
    """Every purchase document; the non-reusable addresses only when address clean-up was ordered."""
    return [
        kind
        for kind in PurchaseDocumentKind
        if clean_up or kind is not PurchaseDocumentKind.NON_REUSABLE_ADDRESSES
    ]
