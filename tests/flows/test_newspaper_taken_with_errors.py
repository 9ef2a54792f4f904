"""§7: "an HTTP 200 response can still contain errors and warnings … 200 is not success by itself". An order
or purchase the service answers with its id and an error was taken: the run names the id with the error,
follows it like any other, and no run posts it again. One answered 0004 without an id may wait for its
payment: the next run stops (exit 2) naming --resubmit. Counted from the sandbox's own request counter.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.address_purchase import AddressPurchaseResult, address_purchase
from history.models import JobState
from sandbox.request_counter import RequestCounter
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.flows.test_newspaper_cli import failure_line, invoke, summary_of
from tests.flows.test_newspaper_order import messages, order_jobs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ORDER = EXAMPLES / "newspaper-order.json"
ORDERS_STANDARD = "orders/standard"
PURCHASES = "address/v1/purchases"
TAKEN_WITH_0030 = {"code": "0030", "with_id": True}


def posts(sandbox: Sandbox, endpoint: str) -> int:
    """The POSTs to ``endpoint`` the sandbox received, whatever it answered."""
    counter: RequestCounter = sandbox.transport.inner.app.state.requests
    return sum(
        item.count
        for item in counter.counts()
        if item.api == "newspaper" and item.method == "POST" and item.endpoint.endswith(endpoint)
    )


def order_command(out: Path, *more: str) -> tuple[int, str]:
    return invoke("newspaper-order", str(ORDER), "--out", str(out), "--poll-interval", "0.05", *more)


def test_an_order_answered_with_its_id_and_an_error_is_followed_and_never_posted_again(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    sandbox.inject(
        api="newspaper",
        endpoint=f"*{ORDERS_STANDARD}",
        method="POST",
        kind="processed_status",
        value=TAKEN_WITH_0030,
    )
    out = tmp_path / "order"
    code, output = order_command(out)
    assert code == 0, output
    first = summary_of(output)
    order_id = first["order_id"]
    assert order_id == 7_000_001 and first["resumed"] is False
    [error] = first["errors"]
    assert error.startswith(f"standard order {order_id}: 0030 ") and "Permitted weight range" in error
    # Followed like any other order: delivery note, status, reports.
    assert first["status"] == "LOADED" and (out / "delivery-note.pdf").is_file()
    text = (out / "summary.md").read_text(encoding="utf-8")
    assert "## Errors from the API" in text and f"standard order {order_id}: 0030" in text
    [job] = order_jobs(flow_env)
    assert (job.remote_id, job.status) == (str(order_id), JobState.COMPLETED.value)
    assert job.data["answer_errors"] == [error]
    assert any(
        m.level == "error" and m.code == "0030" and str(order_id) in m.text for m in messages(flow_env)
    )
    assert posts(sandbox, ORDERS_STANDARD) == 1

    code, output = order_command(out)
    assert code == 0, output
    again = summary_of(output)
    assert again["order_id"] == order_id and again["resumed"] is True
    assert again["errors"] == [error], "a run that follows the order names its errors again"
    assert posts(sandbox, ORDERS_STANDARD) == 1, "the taken order is never posted again"
    assert len(order_jobs(flow_env)) == 1


def test_an_order_answered_0004_without_an_id_stops_the_next_run(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    sandbox.inject(
        api="newspaper", endpoint=f"*{ORDERS_STANDARD}", method="POST", kind="service_status", value="0004"
    )
    out = tmp_path / "order"
    code, output = order_command(out)
    assert code == 1, output
    assert "0004" in failure_line(output) and "cash payment required" in failure_line(output)
    [job] = order_jobs(flow_env)
    assert job.status == JobState.UNCERTAIN.value

    code, output = order_command(out)
    assert code == 2, output
    assert "--resubmit" in failure_line(output)
    assert posts(sandbox, ORDERS_STANDARD) == 1, "one POST in all"


async def _purchase(out: Path, resubmit: bool = False) -> AddressPurchaseResult:
    return await call(  # type: ignore[no-any-return]
        address_purchase,
        EXAMPLES / "purchase-addresses.csv",
        EXAMPLES / "purchase.json",
        out,
        resubmit=resubmit,
        min_poll_interval_s=0.05,
        max_poll_interval_s=0.1,
        max_wait_s=10.0,
    )


async def test_a_purchase_answered_with_its_id_and_an_error_is_followed_and_never_posted_again(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.inject(
        api="newspaper",
        endpoint=f"*{PURCHASES}",
        method="POST",
        kind="processed_status",
        value=TAKEN_WITH_0030,
    )
    out = tmp_path / "purchase"
    first = await _purchase(out)
    purchase_id = first.purchase_id
    [error] = first.errors
    assert error.startswith(f"purchase {purchase_id}: 0030 ")
    assert first.output_addresses == 6 and (out / "documents" / "sort-protocol.pdf").is_file()
    assert f"purchase {purchase_id}: 0030" in (out / "summary.md").read_text(encoding="utf-8")
    assert posts(sandbox, PURCHASES) == 1

    again = await _purchase(out)
    assert again.purchase_id == purchase_id and again.resumed is True
    assert again.errors == [error]
    # Even --resubmit does not post a purchase that was taken: it is no uncertain submission.
    resubmitted = await _purchase(out, resubmit=True)
    assert resubmitted.purchase_id == purchase_id and resubmitted.resumed is True
    assert posts(sandbox, PURCHASES) == 1
