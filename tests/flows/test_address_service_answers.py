"""Answers the address service may give where its specification shows little, end to end: a ping that is a
bare HTTP 200, and a /deletefile that does not answer Status 0 (the file stays recorded as on the service
until ``postflows cleanup`` deletes it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.address_batch import address_batch
from flows.address_query import address_query
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


@pytest.mark.parametrize("ping_answer", ["empty-json", "empty-text"])
async def test_a_ping_answered_with_an_empty_200_opens_the_batch(
    sandbox: Sandbox, tmp_path: Path, ping_answer: str
) -> None:
    sandbox.config.address_ping_answer = ping_answer  # type: ignore[assignment]
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert summary["result_rows"] == summary["accepted_rows"] > 0
    assert sandbox.transport.count("/ping") == 1 and sandbox.transport.count("/runbatch") == 1


async def test_a_ping_answered_with_an_empty_200_opens_the_queries(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.config.address_ping_answer = "empty-json"
    summary = await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=4)
    assert summary["failed_queries"] == 0
    assert sandbox.transport.count("/ping") == 1
    assert sandbox.transport.count("/runquery2") == summary["accepted_rows"] > 0
