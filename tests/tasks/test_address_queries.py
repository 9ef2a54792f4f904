"""What the individual queries keep in their checkpoint: an answer, a refusal that means "not processed", or
an uncertain ending (a cancellation while the query was in flight included), and what a later run takes from
it with and without ``resubmit``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from pydantic import SecretStr

from connectors.address_service import AddressServiceClient
from connectors.http import ClientOptions, RequestLog
from connectors.retry import RetryPolicy
from fileio.checkpoint import RowCheckpoint, request_fingerprint
from tasks.address_service.billing import CONTRACT, Billing
from tasks.address_service.query import (
    CLAIM_ROWS,
    ERROR_COLUMN,
    INTERRUPTED,
    SENT_UNANSWERED,
    QuerySpec,
    claimed,
    kept_queries,
    query_rows,
    run_queries,
    uncertain_reasons,
    uncertain_rows,
)
from tasks.fanout import ChunkPart

BASE = "https://aws.example.test/REST/v1"
RECORDS = pd.DataFrame([{"RecordId": n, "Name": f"Muster {n}", "ZIPCode": "6010"} for n in (1, 2, 3)])


def _answer(request: httpx.Request, status: int = 0) -> httpx.Response:
    record_id = json.loads(request.content)["address"]["Id"]
    result = {"Id": record_id, "Data": [{"FieldName": "QSTAT", "Value": "1"}]}
    return httpx.Response(
        200, json={"RunQuery2Result": {"Result": result, "SettlementId": 9, "Status": status}}
    )


def _connect(handler: Any) -> Any:
    def connect(*, request_log: RequestLog | None = None) -> AddressServiceClient:
        return AddressServiceClient(
            BASE,
            username="user",
            password=SecretStr("pw"),
            options=ClientOptions(
                transport=httpx.MockTransport(handler),
                retry=RetryPolicy(max_attempts=3, base_delay=0, jitter=0),
                request_log=request_log,
            ),
        )

    return connect


async def test_a_query_cut_off_by_a_cancellation_is_kept_uncertain(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def hanging(request: httpx.Request) -> httpx.Response:
        started.set()
        await asyncio.sleep(3600)
        raise AssertionError("never answered")

    checkpoint = RowCheckpoint(tmp_path / "kept")
    asking = asyncio.create_task(
        query_rows.fn(
            RECORDS.iloc[:1],
            part=ChunkPart(0, 1, "test"),
            concurrency=1,
            connect=_connect(hanging),
            spec=QuerySpec("k"),
            checkpoint=checkpoint,
        )
    )
    await started.wait()
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    kept = kept_queries(RECORDS, checkpoint, QuerySpec("k", 10000, CONTRACT))
    assert kept.uncertain == {1: INTERRUPTED} and kept.answered == {}


async def test_the_checkpoint_holds_answers_uncertain_rows_and_refusals_for_the_next_run(
    tmp_path: Path,
) -> None:
    """Record 1 answered, 2 answered with Status 202 (uncertain), 3 refused with Status 801 (not processed):
    a plain re-run asks 3 only; with resubmit 2 and 3."""
    sent: list[int] = []
    statuses = {1: 0, 2: 202, 3: 801}

    def first(request: httpx.Request) -> httpx.Response:
        record_id = json.loads(request.content)["address"]["Id"]
        sent.append(record_id)
        return _answer(request, statuses[record_id])

    checkpoint = RowCheckpoint(tmp_path / "kept")
    frame = await run_queries(
        _connect(first), RECORDS, spec=QuerySpec("k"), concurrency=1, checkpoint=checkpoint
    )
    assert sent == [1, 2, 3]
    assert list(uncertain_rows(frame)) == [False, True, False]
    assert uncertain_reasons(frame) == {2: "Status 202 InternalServerCall: internal error in the service"}
    assert "Status 801" in str(frame.loc[2, ERROR_COLUMN])

    def answering(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content)["address"]["Id"])
        return _answer(request)

    again = await run_queries(
        _connect(answering), RECORDS, spec=QuerySpec("k"), concurrency=1, checkpoint=checkpoint
    )
    assert sent[3:] == [3]
    assert list(uncertain_rows(again)) == [False, True, False]
    assert "(in an earlier run)" in str(again.loc[1, ERROR_COLUMN])

    resubmitted = await run_queries(
        _connect(answering), RECORDS, spec=QuerySpec("k"), concurrency=1, checkpoint=checkpoint, resubmit=True
    )
    assert sent[4:] == [2]
    assert resubmitted[ERROR_COLUMN].isna().all() and list(resubmitted["QSTAT"]) == ["1", "1", "1"]


def test_a_process_killed_mid_chunk_leaves_its_claimed_queries_uncertain_not_unrecorded(
    tmp_path: Path,
) -> None:
    """Records are claimed on disk before they are handed out, CLAIM_ROWS at a time: a process killed
    outright (its buffered outcomes lost) leaves the claimed ones uncertain, so a plain later run sends none
    of them; the records past the last claim are sent as usual."""
    records = pd.DataFrame(
        [{"RecordId": n, "Name": f"Muster {n}", "ZIPCode": "6010"} for n in range(1, CLAIM_ROWS + 6)]
    )
    checkpoint = RowCheckpoint(tmp_path / "resume")
    handed_out = claimed(records.to_dict("records"), checkpoint, QuerySpec("k", 10000, CONTRACT))
    assert [next(handed_out)["RecordId"] for _ in range(3)] == [1, 2, 3]  # then the process dies

    kept = kept_queries(records, RowCheckpoint(tmp_path / "resume"), QuerySpec("k", 10000, CONTRACT))
    assert sorted(kept.uncertain) == list(range(1, CLAIM_ROWS + 1))
    assert set(kept.uncertain.values()) == {SENT_UNANSWERED} and kept.answered == {}
    # Another query for the same record (other options) is a new query: the claim does not hold it.
    other = kept_queries(records, RowCheckpoint(tmp_path / "resume"), QuerySpec("k", 5000, CONTRACT))
    assert other.uncertain == {}


def test_a_query_is_fingerprinted_as_the_answers_of_earlier_runs_were_kept() -> None:
    """The key, the fields, the timeout and the billing (its reference alone when no client is named): a
    checkpoint kept before the query's options travelled as one value still resumes."""
    fields = {"Name_in": "Muster", "ZipCode_in": "6010"}
    earlier = {"key": "k", "fields": fields, "timeout": 5000, "billing": "R-7"}
    assert QuerySpec("k", 5000, Billing("R-7")).fingerprint(fields) == request_fingerprint(earlier)
    with_client = {**earlier, "billing": ["R-7", "C-1", None]}
    assert QuerySpec("k", 5000, Billing("R-7", "C-1")).fingerprint(fields) == request_fingerprint(with_client)
    assert QuerySpec("k").fingerprint(fields) == request_fingerprint(
        {"key": "k", "fields": fields, "timeout": 10000, "billing": None}
    )


async def test_a_failure_that_is_no_api_error_stops_the_other_queries_and_keeps_them_uncertain(
    tmp_path: Path,
) -> None:
    """Record 1's query fails with an error the connector does not know while record 2's is in flight: the
    chunk raises that error (not a group of errors), record 2's query is cut off and kept uncertain, and
    record 3's is never sent."""
    sent: list[int] = []
    in_flight = asyncio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        record_id = json.loads(request.content)["address"]["Id"]
        sent.append(record_id)
        if record_id == 2:
            in_flight.set()
            await asyncio.sleep(3600)
        await in_flight.wait()
        raise RuntimeError(f"unexpected failure of record {record_id}")

    checkpoint = RowCheckpoint(tmp_path / "kept")
    with pytest.raises(RuntimeError, match="record 1"):
        await query_rows.fn(
            RECORDS,
            part=ChunkPart(0, 1, "test"),
            concurrency=2,
            connect=_connect(handler),
            spec=QuerySpec("k"),
            checkpoint=checkpoint,
        )
    assert sorted(sent) == [1, 2]
    kept = kept_queries(RECORDS, checkpoint, QuerySpec("k", 10000, CONTRACT))
    assert kept.uncertain[2] == INTERRUPTED and kept.answered == {}
