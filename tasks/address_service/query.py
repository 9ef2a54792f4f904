"""Individual queries (runquery2): one request per record, with bounded concurrency, in chunks on the flow's
task runner. The per-minute limit (Status 106) is waited out at the window gate that every client of the
service in one process shares; a record whose query fails for good keeps its row with the reason.

Every query is billed, so answers are kept in a checkpoint as they arrive: a run that resumes an interrupted
one (same key) sends only the queries not answered yet.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd
from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.address_service import AddressServiceClient
from connectors.errors import ApiError
from fileio.checkpoint import RowCheckpoint, kept_on_disk, request_fingerprint
from tasks.fanout import ChunkPart, ClientFactory, fan_out
from tasks.progress import Progress
from tasks.sending import SendCounter

# §2.3 output names → §2.2 input FieldName values.
QUERY_FIELD_NAMES: dict[str, str] = {
    "Company": "Company_in",
    "Prename": "Prename_in",
    "Prename2": "Prename2_in",
    "Name": "Name_in",
    "MaidenName": "MaidenName_in",
    "AddressAddition": "AddressAddition_in",
    "CoAddress": "coAddress_in",
    "Streetname": "Streetname_in",
    "HouseNo": "HouseNo_in",
    "HouseNoAddition": "HouseNoAddition_in",
    "Floor": "Floor_in",
    "ZIPCode": "ZipCode_in",
    "ZIPAddition": "ZIPAddition_in",
    "TownName": "TownName_in",
    "Canton": "Canton_in",
    "CountryCode": "CountryCode_in",
    "PoBoxTerm": "PoBoxTerm_in",
    "PoBoxNo": "PoBoxNo_in",
    "PoBoxZIP": "PoBoxZIP_in",
    "PoBoxZIPAddition": "PoBoxZIPAddition_in",
    "PoBoxTownName": "PoBoxTownName_in",
}

ERROR_COLUMN = "QueryError"


@dataclass(frozen=True)
class QueryBilling:
    """Whom the service bills the queries to: a client's billing reference number, with its identifier and
    name (``runquery2withclient``); none: the contract itself (``runquery2``).

    Attributes:
        reference: the billing reference number.
        client_identifier: the client's identifier (only with a reference).
        client_name: the client's name (only with a reference).
    """

    reference: str | None = None
    client_identifier: str | None = None
    client_name: str | None = None

    def arguments(self) -> dict[str, str | None]:
        """The billing as :meth:`AddressServiceClient.run_query` takes it."""
        return {
            "billing_reference": self.reference,
            "client_identifier": self.client_identifier,
            "client_name": self.client_name,
        }

    def fingerprint(self) -> object:
        """The billing in a query's fingerprint: the reference alone when no client is named (as answers
        kept before the client fields were sent were fingerprinted)."""
        if not (self.client_identifier or self.client_name):
            return self.reference
        return [self.reference, self.client_identifier, self.client_name]


CONTRACT = QueryBilling()
"""The queries billed to the contract itself."""


def query_fields(record: Mapping[str, object]) -> dict[str, str]:
    """The FieldName/Value pairs for one record given with §2.3 column names."""
    fields: dict[str, str] = {}
    for column, field_name in QUERY_FIELD_NAMES.items():
        value = record.get(column)
        if value is None or (isinstance(value, float) and pd.isna(value)) or value == "":
            continue
        fields[field_name] = str(value)
    return fields


@dataclass(frozen=True)
class QueryChunk:
    """What one chunk task of the queries brings back: one answer row per record, and the sends by outcome."""

    answers: list[dict[str, object]]
    sends: dict[str, int]


@task(name="address-query-rows", task_run_name="address-query-rows-{part.label}", cache_policy=NO_CACHE)
async def query_rows(
    rows: pd.DataFrame,
    *,
    part: ChunkPart,
    concurrency: int,
    connect: ClientFactory[AddressServiceClient],
    key: str,
    timeout_ms: int = 10000,
    billing: QueryBilling = CONTRACT,
    checkpoint: RowCheckpoint | None = None,
) -> QueryChunk:
    """Query the records of one chunk with a client of its own, at most ``concurrency`` at a time: as many
    workers, each taking the next record when its query is answered (no task per record waits its turn);
    each answer goes to ``checkpoint`` (as a writer of this chunk's own)."""
    answers: list[dict[str, object]] = []
    sends = SendCounter()
    kept = checkpoint.for_writer(part.writer) if checkpoint is not None else None

    async def one(client: AddressServiceClient, record: dict[str, object]) -> None:
        record_id = int(str(record["RecordId"]))
        fields = query_fields(record)
        answer: dict[str, object] = {"RecordId": record_id}
        try:
            result = await client.run_query(
                key, record_id, fields, timeout_ms=timeout_ms, **billing.arguments()
            )
        except ApiError as error:
            answer[ERROR_COLUMN] = str(error)  # not kept: a resumed run asks again
        else:
            answer.update(result.fields)
            if kept is not None:
                sent = query_fingerprint(key, fields, timeout_ms, billing)
                kept.add(record_id, sent, {"fields": result.fields})
        answers.append(answer)
        part.row_done()

    async with connect(request_log=sends) as client, kept_on_disk(kept):
        waiting = iter(rows.to_dict("records"))

        async def worker() -> None:
            for record in waiting:
                await one(client, {str(k): v for k, v in record.items()})

        await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(rows))))))
    return QueryChunk(answers, dict(sends.outcomes))


def query_fingerprint(key: str, fields: Mapping[str, str], timeout_ms: int, billing: QueryBilling) -> str:
    """What identifies the query of a record: a kept answer is used only for the same query."""
    return request_fingerprint(
        {"key": key, "fields": dict(fields), "timeout": timeout_ms, "billing": billing.fingerprint()}
    )


def resumed_answers(
    records: pd.DataFrame,
    checkpoint: RowCheckpoint | None,
    *,
    key: str,
    timeout_ms: int,
    billing: QueryBilling,
) -> dict[int, dict[str, object]]:
    """The answer rows (by RecordId) an interrupted run received for the same queries."""
    previous = checkpoint.load() if checkpoint is not None else {}
    answers: dict[int, dict[str, object]] = {}
    if not previous:
        return answers
    for record in records.to_dict("records"):
        record_id = int(str(record["RecordId"]))
        entry = previous.get(record_id)
        fields = query_fields({str(k): v for k, v in record.items()})
        if (
            entry is not None
            and entry.get("sent") == query_fingerprint(key, fields, timeout_ms, billing)
            and isinstance(entry.get("fields"), dict)
        ):
            answers[record_id] = {"RecordId": record_id, **entry["fields"]}
    return answers


async def run_queries(
    connect: ClientFactory[AddressServiceClient],
    records: pd.DataFrame,
    *,
    key: str,
    concurrency: int = 8,
    timeout_ms: int = 10000,
    billing: QueryBilling = CONTRACT,
    sends: SendCounter | None = None,
    checkpoint: RowCheckpoint | None = None,
) -> pd.DataFrame:
    """Query every record, in chunks on the flow's task runner (see :mod:`tasks.fanout`), at most
    ``concurrency`` queries in flight; returns one row per RecordId with the answer's fields or the error.

    A record whose query fails for good keeps its row, with the reason in ``QueryError``: nothing is lost.
    A record an interrupted run got an answer for (in ``checkpoint``, same query) is not sent again.

    Args:
        connect: builds an address-service client; each chunk task builds its own.
        records: the records with §2.3 column names and ``RecordId``.
        key: the query key.
        concurrency: queries in flight at once.
        timeout_ms: the service-side timeout of one query.
        billing: whom the queries are billed to (a client: runquery2withclient).
        sends: counts the queries sent, and the answers resumed.
        checkpoint: answers of an interrupted run, and where this run's answers are kept.
    """
    resumed = resumed_answers(records, checkpoint, key=key, timeout_ms=timeout_ms, billing=billing)
    pending = (
        records.loc[[int(str(record_id)) not in resumed for record_id in records["RecordId"]]]
        if resumed
        else records
    )
    progress = await Progress.start(f"address queries ({len(pending)} records)")
    chunks: list[QueryChunk] = []
    if pending.empty:
        await progress.update(100.0, "nothing left to ask")
    else:
        chunks = await fan_out(
            query_rows,
            pending,
            concurrency=concurrency,
            progress=progress,
            unit="records",
            connect=connect,
            key=key,
            timeout_ms=timeout_ms,
            billing=billing,
            checkpoint=checkpoint,
        )
    rows = [*resumed.values(), *(answer for chunk in chunks for answer in chunk.answers)]
    if sends is not None:
        sends.resumed += len(resumed)
        for chunk in chunks:
            sends.add(chunk.sends)
    frame = pd.DataFrame(rows, dtype=object)
    if ERROR_COLUMN not in frame.columns:
        frame[ERROR_COLUMN] = None
    return frame.sort_values("RecordId", kind="stable").reset_index(drop=True)
