"""A service that does the work and answers with a failure that does not certainly mean "not processed": the
next run of the same work stops (exit code 2, naming --resubmit) and the service holds exactly one
submission; with --resubmit, exactly two. Counted from what the sandbox accepted, whatever the client saw.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connectors.errors import ApiError
from flows.address_batch import address_batch
from flows.address_purchase import address_purchase
from flows.newspaper_order import newspaper_order
from flows.newspaper_statistics import newspaper_statistics
from flows.results import RunResult
from sandbox.request_counter import RequestCounter
from tasks.submission import SubmissionUncertain
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.flows.test_newspaper_order import order_body, write_order

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUICK = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.1, "max_wait_s": 10.0}
Run = Callable[[Path, Path, bool], Awaitable[RunResult | dict[str, Any]]]


@dataclass(frozen=True)
class Submitting:
    """One submitting request: how its flow is run, and where the sandbox takes it."""

    api: str
    endpoint: str
    run: Run


async def _batch(tmp_path: Path, out: Path, resubmit: bool) -> dict[str, Any]:
    result = await call(
        address_batch,
        input_path=EXAMPLES / "address-batch.csv",
        output_dir=out,
        resubmit=resubmit,
        min_poll_interval_s=0.05,
        max_poll_interval_s=0.2,
    )
    return dict(result.summary())  # the summary it records, read as the other requests' runs are


async def _order(tmp_path: Path, out: Path, resubmit: bool) -> RunResult:
    path = tmp_path / "order.json"
    if not path.exists():
        write_order(tmp_path, order_body())
    return await call(newspaper_order, order_path=path, output_dir=out, resubmit=resubmit, **QUICK)


async def _purchase(tmp_path: Path, out: Path, resubmit: bool) -> RunResult:
    return await call(
        address_purchase,
        EXAMPLES / "purchase-addresses.csv",
        EXAMPLES / "purchase.json",
        out,
        resubmit=resubmit,
        **QUICK,
    )


async def _statistics(tmp_path: Path, out: Path, resubmit: bool) -> RunResult:
    return await call(newspaper_statistics, EXAMPLES / "statistics.csv", out, resubmit=resubmit)


RUNBATCH = Submitting("address", "runbatch", _batch)
ORDER = Submitting("newspaper", "*orders/standard", _order)
PURCHASE = Submitting("newspaper", "*address/v1/purchases", _purchase)
STATISTICS = Submitting("newspaper", "*standard/statistics", _statistics)
HTTP_500 = {"http_status": 500}
UNLISTED_CODE = "0999"
# On the §7 list, yet neither says that nothing was kept: the order may wait for its payment (0004), the issue
# number may be taken by this very order (0007).
CASH_PAYMENT_REQUIRED = "0004"
ISSUE_NUMBER_USED = "0007"
# A statistics upload is confirmed by plain text: an HTTP 200 with errors has no id to show that nothing was
# kept, whatever its code.
STATISTICS_REFUSED = "0200"


def _accepted(sandbox: Sandbox, submitting: Submitting) -> int:
    counter: RequestCounter = sandbox.transport.inner.app.state.requests
    suffix = submitting.endpoint.lstrip("*")
    return sum(
        item.count
        for item in counter.accepted()
        if item.api == submitting.api and item.method == "POST" and item.endpoint.endswith(suffix)
    )


@pytest.mark.parametrize(
    ("submitting", "answer"),
    [
        (RUNBATCH, 999),
        (RUNBATCH, 301),
        (RUNBATCH, 401),
        (ORDER, HTTP_500),
        (ORDER, UNLISTED_CODE),
        (ORDER, ISSUE_NUMBER_USED),
        (PURCHASE, HTTP_500),
        (PURCHASE, UNLISTED_CODE),
        (PURCHASE, CASH_PAYMENT_REQUIRED),
        (STATISTICS, HTTP_500),
        (STATISTICS, UNLISTED_CODE),
        (STATISTICS, STATISTICS_REFUSED),
    ],
    ids=[
        "runbatch-999",
        "runbatch-301",
        "runbatch-401",
        "order-http-500",
        "order-unlisted-code",
        "order-0007",
        "purchase-http-500",
        "purchase-unlisted-code",
        "purchase-0004",
        "statistics-http-500",
        "statistics-unlisted-code",
        "statistics-0200-in-a-200",
    ],
)
async def test_a_processed_submission_answered_with_an_uncertain_failure_is_never_sent_again_on_its_own(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, submitting: Submitting, answer: Any
) -> None:
    out = tmp_path / "out"
    sandbox.inject(
        api=submitting.api, endpoint=submitting.endpoint, method="POST", kind="processed_status", value=answer
    )
    with pytest.raises(ApiError) as first:
        await submitting.run(tmp_path, out, False)
    assert first.value.outcome_unknown
    assert _accepted(sandbox, submitting) == 1, "the service did the work although it answered a failure"

    with pytest.raises(SubmissionUncertain, match="--resubmit") as second:
        await submitting.run(tmp_path, out, False)
    assert second.value.exit_code == 2
    assert _accepted(sandbox, submitting) == 1

    result = await submitting.run(tmp_path, out, True)
    summary = result.summary() if isinstance(result, RunResult) else result
    assert summary["resumed"] is False and summary["replaced"]
    assert _accepted(sandbox, submitting) == 2
