"""Waiting for a purchase: done when the statuses its options produce are READY, failed on a failure status
of those, on the one poller with a fake clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connectors.newspaper import ApiResult, PurchaseDocumentKind, PurchaseProgress
from tasks.newspaper.purchases import (
    PlacedPurchase,
    PurchaseFailed,
    document_kinds,
    purchase_done,
    wait_for_purchase,
)
from tasks.polling import PollPolicy, PollTimedOut


def progress(validation: str | None, percent: int, sorting: str | None) -> PurchaseProgress:
    return PurchaseProgress.model_validate(
        {"validationStatus": validation, "validationProgressPercent": percent, "sortingStatus": sorting}
    )


class FakeService:
    """Answers the progress requests from a script, and keeps the fake time."""

    def __init__(self, answers: list[PurchaseProgress]) -> None:
        self._answers: Iterator[PurchaseProgress] = iter(answers)
        self.asked = 0
        self.now = 0.0

    async def get_purchase_progress(self, purchase_id: int) -> ApiResult[PurchaseProgress]:
        self.asked += 1
        return ApiResult(next(self._answers), ())

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


POLICY = PollPolicy(max_wait_s=100.0, min_interval_s=1.0, max_interval_s=5.0)


async def _wait(service: FakeService, *, sorting: bool) -> PurchaseProgress:
    return await wait_for_purchase(  # type: ignore[arg-type]
        service, PlacedPurchase(1, sorting), policy=POLICY, sleep=service.sleep
    )


async def test_a_validation_only_purchase_does_not_wait_for_sorting() -> None:
    service = FakeService(
        [progress("IN_PROGRESS", 40, None), progress("READY", 100, None), progress("READY", 100, "READY")]
    )
    final = await _wait(service, sorting=False)
    assert final.validation_status == "READY" and service.asked == 2


async def test_a_sorted_purchase_waits_for_both() -> None:
    service = FakeService(
        [
            progress("IN_PROGRESS", 40, "WAITING"),
            progress("READY", 100, "IN_PROGRESS"),
            progress("READY", 100, "READY"),
        ]
    )
    final = await _wait(service, sorting=True)
    assert final.is_ready and service.asked == 3


async def test_a_failure_of_a_status_the_purchase_waits_for_ends_the_wait() -> None:
    service = FakeService([progress("READY", 100, "FAILED")])
    with pytest.raises(PurchaseFailed) as failed:
        await _wait(service, sorting=True)
    assert failed.value.status == "FAILED" and not failed.value.cancelled


async def test_sorting_status_is_ignored_when_no_sorting_was_ordered() -> None:
    assert purchase_done(progress("READY", 100, "FAILED"), sorting=False)
    assert not purchase_done(progress("READY", 100, "WAITING"), sorting=True)


async def test_still_running_after_the_deadline_times_out() -> None:
    service = FakeService([progress("IN_PROGRESS", 10, "WAITING")] * 200)
    with pytest.raises(PollTimedOut, match="purchase 1"):
        await wait_for_purchase(  # type: ignore[arg-type]
            service,
            PlacedPurchase(1, True),
            policy=PollPolicy(max_wait_s=10.0, min_interval_s=1.0, max_interval_s=2.0),
            sleep=service.sleep,
            clock=lambda: service.now,
        )
    assert service.now == pytest.approx(10.0)


def test_documents_follow_the_options() -> None:
    sorted_kinds = document_kinds(clean_up=False, sorting=True)
    assert PurchaseDocumentKind.SORT_PROTOCOL in sorted_kinds
    assert PurchaseDocumentKind.NON_REUSABLE_ADDRESSES not in sorted_kinds
    validation_only = document_kinds(clean_up=True, sorting=False)
    assert PurchaseDocumentKind.NON_REUSABLE_ADDRESSES in validation_only
    assert not {
        PurchaseDocumentKind.SORT_PROTOCOL,
        PurchaseDocumentKind.BUNDLE_LABELS,
        PurchaseDocumentKind.CONTAINER_LABELS,
    } & set(validation_only)
