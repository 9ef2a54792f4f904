"""Prefect tasks of the order pipeline: submit the order, fetch the delivery note, wait for the status,
fetch the reports (reading and checking the order is :mod:`fileio.newspaper.order_input`). The HTTP core
retries transient failures and never re-sends a POST; the reads (status, delivery note, reports) are also
retried as tasks over longer outages (:mod:`tasks.retrying`), the order POST is not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.errors import NotFound
from connectors.newspaper import (
    ApiResult,
    GratisOrder,
    NewspaperClient,
    NewspaperMessage,
    NewspaperRejected,
    OrderStatus,
    OrderSummary,
    RawResponse,
    StandardOrder,
)
from fileio.documents import DocumentLimits, DocumentNaming, save_documents
from fileio.limits import DOWNLOAD_MAX_BYTES, ZIP_MAX_RATIO
from fileio.newspaper.order_input import OrderKind, check_order, load_order, order_from_body
from history.identity import Endpoint, body_key
from tasks.polling import Observation, PolledJob, PollPolicy, WaitClock, WaitParked, poll_until
from tasks.retrying import idempotent_step

# The flow takes the reading and checking of the order from here, beside the steps that send it.
__all__ = [
    "OrderKind",
    "check_order",
    "fetch_order_reports",
    "load_order",
    "order_from_body",
    "order_key",
    "save_delivery_note",
    "submit_order",
    "wait_for_order",
    "waiting_set",
]
T = TypeVar("T")
CONTROL = "CONTROL"
# The spec names LOADED and CONTROL and no final status; an order may stay LOADED while its weights are
# completed by hand in the online dispatch-list service, so only CONTROL (no summary, no sendings) is waited
# out unless the user names the statuses of their contract.
ALWAYS_WAITING: frozenset[str] = frozenset({CONTROL})


def waiting_set(statuses: Iterable[str] | None) -> frozenset[str]:
    """The statuses to keep waiting in: CONTROL (summary and sendings are not allowed in it) and the
    ``statuses`` given, upper-cased."""
    chosen = () if statuses is None else tuple(statuses)
    return frozenset(status.strip().upper() for status in chosen if status.strip()) | ALWAYS_WAITING


def order_key(order: StandardOrder | GratisOrder, kind: OrderKind, *, endpoint: Endpoint) -> str:
    """The order's identity: the SHA-256 of what is posted (its kind and its canonical JSON body), with the
    service's address and client id. The same order written another way (key order, spacing) is the same
    work; a changed order is other work."""
    return body_key("newspaper-order", endpoint=endpoint, body=order.to_body(), kind=kind)


@task(name="newspaper-submit-order", cache_policy=NO_CACHE)
async def submit_order(client: NewspaperClient, order: StandardOrder | GratisOrder) -> ApiResult[int]:
    """POST the order (standard or gratis); returns the order id."""
    if isinstance(order, StandardOrder):
        return await client.submit_standard_order(order)
    return await client.submit_gratis_order(order)


@idempotent_step("newspaper-delivery-note")
async def save_delivery_note(
    client: NewspaperClient,
    order_id: int,
    directory: Path,
    *,
    max_bytes: int = DOWNLOAD_MAX_BYTES,
    max_ratio: float = ZIP_MAX_RATIO,
) -> tuple[list[Path], tuple[NewspaperMessage, ...]]:
    """Fetch the delivery note (with a gratis order's partial notes) and write it: ``delivery-note.pdf``,
    ``delivery-note-2.pdf`` … and a JSON answer as received (``delivery-note.response.json``).

    Raises:
        DocumentRejected: a document does not decode or passes ``max_bytes`` (a ZIP also ``max_ratio``);
            the answer is written first.
    """
    result = await client.get_delivery_note(order_id)
    saved = save_documents(
        result.value,
        directory,
        DocumentNaming("delivery-note", "delivery note"),
        limits=DocumentLimits(max_bytes, max_ratio),
    )
    return saved.paths, result.warnings


StatusCallback = Callable[[ApiResult[OrderStatus]], Awaitable[None] | None]


@idempotent_step("newspaper-order-status")
async def fetch_order_status(client: NewspaperClient, order_id: int) -> ApiResult[OrderStatus]:
    """The order's status, read once as a retried step (``newspaper-reports``); a wait looks with plain
    calls (:func:`wait_for_order`)."""
    return await client.get_order_status(order_id)


async def wait_for_order(
    client: NewspaperClient,
    order_id: int,
    *,
    waiting: frozenset[str],
    policy: PollPolicy,
    on_status: StatusCallback | None = None,
    waited_s: float = 0.0,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> OrderStatus | WaitParked:
    """Poll the status until it is none of ``waiting``, or the wait is parked (``policy.park_after_s``:
    :class:`~tasks.polling.WaitParked`, for a follow-up run); every answer goes to ``on_status``. Each look
    is one call of the connector, not a task run: the wait is its retry (see
    :func:`~tasks.polling.poll_until`); ``waited_s`` is how long earlier runs waited for the order already.

    Raises:
        PollTimedOut: the order is still waiting after ``policy.max_wait_s``; a re-run resumes it.
    """

    async def check() -> Observation[ApiResult[OrderStatus]]:
        result = await client.get_order_status(order_id)
        value = str(result.value.status_value or "").upper()
        return Observation(result, done=bool(value) and value not in waiting, detail=value or "no status")

    final = await poll_until(
        check,
        policy,
        on_status,
        job=PolledJob(f"order {order_id}", waited_s=waited_s, progress=False),
        clock=WaitClock(sleep=sleep),
    )
    return final if isinstance(final, WaitParked) else final.value


@dataclass
class OrderReports:
    """What the service reports about an order; ``None`` where it was not requested or not available."""

    status: OrderStatus | None = None
    summary: OrderSummary | None = None
    sendings: RawResponse | None = None
    original: RawResponse | None = None
    corrected: RawResponse | None = None
    kind: OrderKind | None = None
    warnings: list[NewspaperMessage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@idempotent_step("newspaper-order-reports")
async def fetch_order_reports(
    client: NewspaperClient,
    order_id: int,
    *,
    kind: OrderKind | None,
    status: OrderStatus | None = None,
    original: bool = True,
) -> OrderReports:
    """Fetch status (unless given), summary and sendings (never while CONTROL), original and corrected order.

    ``kind`` None finds out whether the order is standard or gratis (the other original answers 404).
    A report the service does not serve yet (``0000``) becomes a note, not a failure.
    """
    reports = OrderReports(kind=kind)
    if status is None:
        fetched = await client.get_order_status(order_id)
        status = fetched.value
        reports.warnings += fetched.warnings
    reports.status = status
    if status.in_control:
        reports.notes.append(f"order {order_id} is in CONTROL: summary and sendings are not requested")
    else:
        summary = await _optional(reports, "summary", client.get_order_summary(order_id, status=status))
        reports.summary = summary
        reports.sendings = await _optional(
            reports, "sendings", client.get_order_sendings(order_id, status=status)
        )
    if original or kind is None:
        kinds: tuple[OrderKind, ...] = (kind,) if kind is not None else ("standard", "gratis")
        for candidate in kinds:
            getter = (
                client.get_original_standard_order
                if candidate == "standard"
                else client.get_original_gratis_order
            )
            try:
                result = await getter(order_id)
            except NotFound:
                if candidate == kinds[-1]:
                    raise
                continue
            reports.original, reports.kind = result.value, candidate
            reports.warnings += result.warnings
            break
    corrected = (
        client.get_corrected_gratis_order if reports.kind == "gratis" else client.get_corrected_standard_order
    )
    reports.corrected = await _optional(reports, "corrected order", corrected(order_id))
    return reports


async def _optional(reports: OrderReports, what: str, call: Awaitable[ApiResult[T]]) -> T | None:
    """The call's value, or None with a note when the service does not serve it yet (``0000``)."""
    try:
        result = await call
    except NewspaperRejected as error:
        if error.code != "0000":
            raise
        reports.notes.append(f"{what} not available: {error.remote_message}")
        reports.warnings += error.warnings
        return None
    reports.warnings += result.warnings
    return result.value
