"""Individual queries (runquery2): one request per record, with bounded concurrency, in chunks on the flow's
task runner. The per-minute limit (Status 106) is waited out at the window gate that every client of the
service in one process shares; a record whose query fails for good keeps its row with the reason.

Every query is billed (its answer carries a SettlementId), so every outcome is kept in a checkpoint as it
arrives: a run that resumes an earlier one (same key) sends only the queries not answered yet. A query whose
failure does not certainly mean "not processed" (a lost answer, Status 201-203, a 5xx, an unreadable answer)
may have been answered and billed: its row is *uncertain* (``QueryError`` starts with ``uncertain:``), and
no later run asks it again unless it is told to with ``resubmit``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.address_service import AddressServiceClient
from connectors.address_service.errors import AddressServiceStatusError
from connectors.errors import ApiError, MalformedResponse, TransportFailure
from core.errors import PostflowsError
from fileio.checkpoint import RowCheckpoint, kept_on_disk, request_fingerprint
from fileio.lazy import lazy_module
from tasks.address_service.billing import CONTRACT, Billing
from tasks.fanout import ChunkPart, ClientFactory, fan_out, run_workers
from tasks.progress import Progress
from tasks.sending import SendCounter

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

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
UNCERTAIN = "uncertain: "
"""How ``QueryError`` begins for a row whose query may have been answered and billed although no answer
arrived: it is not asked again without ``resubmit``."""
INTERRUPTED = "interrupted while the query was in flight"
SENT_UNANSWERED = "its run stopped before an answer was kept (the query may have been sent)"
CLAIM_ROWS = 32
"""How many records a chunk claims on disk at once before it sends them (one part written per claim)."""
SHOWN_ROWS = 20
SHOWN_REASONS = 3


class QueriesUncertain(PostflowsError):
    """Queries were sent but no answer proves that they were not processed: they may have been answered and
    billed, so they are not asked again without ``--resubmit``. The message names the rows (their RecordId)
    and why for the first ones."""

    exit_code = 2

    def __init__(self, reasons: Mapping[int, str], results: str, *, summary: Mapping[str, object]) -> None:
        rows = sorted(reasons)
        listed = ", ".join(str(row) for row in rows[:SHOWN_ROWS]) + (" …" if len(rows) > SHOWN_ROWS else "")
        why = "; ".join(f"{row}: {reasons[row]}" for row in rows[:SHOWN_REASONS])
        super().__init__(
            f"{len(rows)} address query row(s) are uncertain: each query was sent and no answer proves that "
            f"it was not processed, so it may have been answered and billed (RecordId {listed}; see "
            f"{results}; {why}). They are not asked again on their own; to ask them again (and perhaps pay "
            "twice), run the same command again with --resubmit"
        )
        self.rows = rows
        self.summary = dict(summary)


@dataclass(frozen=True)
class QuerySpec:
    """What every query of a run is asked with; a kept answer is used only for the same query
    (:meth:`fingerprint`).

    Attributes:
        key: the query key (it selects the service's configured alignment).
        timeout_ms: the service-side timeout of one query.
        billing: whom the queries are billed to (a client: ``runquery2withclient``).
    """

    key: str
    timeout_ms: int = 10000
    billing: Billing = CONTRACT

    def fingerprint(self, fields: Mapping[str, str]) -> str:
        """What identifies the query of a record with these fields."""
        return request_fingerprint(
            {
                "key": self.key,
                "fields": dict(fields),
                "timeout": self.timeout_ms,
                "billing": self.billing.fingerprint(),
            }
        )


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
    spec: QuerySpec,
    checkpoint: RowCheckpoint | None = None,
) -> QueryChunk:
    """Query the records of one chunk with a client of its own, at most ``concurrency`` at a time: as many
    workers, each taking the next record when its query is answered (no task per record waits its turn);
    each outcome goes to ``checkpoint`` (as a writer of this chunk's own): an answer, a refusal that means
    "not processed" (asked again by the next run), or an uncertain ending (asked again only with
    ``resubmit``), a query cut off by a cancellation included."""
    answers: list[dict[str, object]] = []
    sends = SendCounter()
    kept = checkpoint.for_writer(part.writer) if checkpoint is not None else None

    async def one(client: AddressServiceClient, record: dict[str, object]) -> None:
        record_id = int(str(record["RecordId"]))
        fields = query_fields(record)
        answer: dict[str, object] = {"RecordId": record_id}

        def keep(outcome: dict[str, object]) -> None:
            if kept is not None:
                kept.add(record_id, spec.fingerprint(fields), outcome)

        try:
            result = await client.run_query(
                spec.key, record_id, fields, timeout_ms=spec.timeout_ms, **spec.billing.arguments()
            )
        except ApiError as error:
            if error.outcome_unknown:
                reason = uncertain_reason(error)
                answer[ERROR_COLUMN] = uncertain_text(reason)
                keep({"uncertain": reason})
            else:
                answer[ERROR_COLUMN] = str(error)
                keep({"failed": str(error)[:500]})  # replaces an earlier uncertain entry: asked again
        except asyncio.CancelledError:
            keep({"uncertain": INTERRUPTED})
            raise
        else:
            answer.update(result.fields)
            keep({"fields": result.fields})
        answers.append(answer)
        part.row_done()

    async with connect(request_log=sends) as client, kept_on_disk(kept):
        waiting = claimed(rows.to_dict("records"), kept, spec)

        async def worker() -> None:
            for record in waiting:
                await one(client, {str(k): v for k, v in record.items()})

        # A failure that is no ApiError cuts the other queries off (kept uncertain); none starts after it.
        await run_workers(worker, min(concurrency, len(rows)))
    return QueryChunk(answers, dict(sends.outcomes))


def claimed(
    records: list[dict[Hashable, object]], kept: RowCheckpoint | None, spec: QuerySpec
) -> Iterator[dict[Hashable, object]]:
    """``records`` one by one, each claimed on disk before it is handed out: every :data:`CLAIM_ROWS`
    records, the next ones are written to ``kept`` as uncertain (:data:`SENT_UNANSWERED`) at once, and
    their outcomes replace that as they come. A process killed outright (the outcomes since the last part
    lost with it) thus leaves its queries uncertain, never unrecorded: the next run does not send a query
    that may have been billed, unless with ``--resubmit`` (a claimed query the run never got to send is
    among them: the safe side)."""
    for index, record in enumerate(records):
        if kept is not None and index % CLAIM_ROWS == 0:
            for ahead in records[index : index + CLAIM_ROWS]:
                fields = query_fields({str(k): v for k, v in ahead.items()})
                kept.add(
                    int(str(ahead["RecordId"])), spec.fingerprint(fields), {"uncertain": SENT_UNANSWERED}
                )
            kept.flush()
        yield record


def uncertain_reason(error: ApiError) -> str:
    """Why a failed query may nevertheless have been answered and billed, in a few words."""
    if isinstance(error, AddressServiceStatusError):
        return f"Status {error.status} {error.name}: {error.meaning}"
    detail = " ".join(str(error).removeprefix(f"{error.api}: ").split())[:300]
    if isinstance(error, TransportFailure):  # a dropped connection, a read timeout, the deadline
        return f"answer lost ({detail})"
    if isinstance(error, MalformedResponse):
        return f"unreadable answer ({detail})"
    return detail


def uncertain_text(reason: str, *, earlier: bool = False) -> str:
    """The ``QueryError`` of an uncertain row."""
    when = " (in an earlier run)" if earlier else ""
    return f"{UNCERTAIN}{reason}{when}{_ADVICE}"


_ADVICE = "; not asked again, as it may have been answered and billed: --resubmit asks it again"


def uncertain_rows(answers: pd.DataFrame) -> pd.Series:
    """Which answer rows are uncertain (their ``QueryError`` says so)."""
    return answers[ERROR_COLUMN].map(lambda text: isinstance(text, str) and text.startswith(UNCERTAIN))


def uncertain_reasons(answers: pd.DataFrame) -> dict[int, str]:
    """Why each uncertain answer row is uncertain, by RecordId (its ``QueryError`` up to the advice)."""
    uncertain = answers.loc[uncertain_rows(answers)]
    return {
        int(str(record_id)): str(text).removeprefix(UNCERTAIN).rsplit(_ADVICE, 1)[0]
        for record_id, text in zip(uncertain["RecordId"], uncertain[ERROR_COLUMN], strict=True)
    }


@dataclass(frozen=True)
class KeptQueries:
    """What earlier runs of the same work kept for its records (same query only).

    Attributes:
        answered: the answer rows, by RecordId.
        uncertain: why each uncertain record's query may have been answered, by RecordId.
    """

    answered: dict[int, dict[str, object]]
    uncertain: dict[int, str]


def kept_queries(records: pd.DataFrame, checkpoint: RowCheckpoint | None, spec: QuerySpec) -> KeptQueries:
    """The answers and the uncertain queries that earlier runs kept for the same queries of ``records``;
    a record whose latest entry is a refusal ("not processed") is in neither, so it is asked again."""
    previous = checkpoint.load() if checkpoint is not None else {}
    kept = KeptQueries({}, {})
    if not previous:
        return kept
    for record in records.to_dict("records"):
        record_id = int(str(record["RecordId"]))
        entry = previous.get(record_id)
        if entry is None:
            continue
        fields = query_fields({str(k): v for k, v in record.items()})
        if entry.get("sent") != spec.fingerprint(fields):
            continue
        if isinstance(entry.get("fields"), dict):
            kept.answered[record_id] = {"RecordId": record_id, **entry["fields"]}
        elif "uncertain" in entry:
            kept.uncertain[record_id] = str(entry["uncertain"])
    return kept


async def run_queries(
    connect: ClientFactory[AddressServiceClient],
    records: pd.DataFrame,
    *,
    spec: QuerySpec,
    concurrency: int = 8,
    sends: SendCounter | None = None,
    checkpoint: RowCheckpoint | None = None,
    resubmit: bool = False,
) -> pd.DataFrame:
    """Query every record, in chunks on the flow's task runner (see :mod:`tasks.fanout`), at most
    ``concurrency`` queries in flight; returns one row per RecordId with the answer's fields or the error.

    A record whose query fails for good keeps its row, with the reason in ``QueryError``: nothing is lost.
    A record an earlier run got an answer for (in ``checkpoint``, same query) is not sent again; nor is one
    whose earlier query is uncertain (it may have been answered and billed), unless ``resubmit``: its row
    says so again (see :func:`uncertain_rows`).

    Args:
        connect: builds an address-service client; each chunk task builds its own.
        records: the records with §2.3 column names and ``RecordId``.
        spec: the query key, the service-side timeout of one query, and whom the queries are billed to.
        concurrency: queries in flight at once.
        sends: counts the queries sent, the answers resumed and the uncertain rows held or asked again.
        checkpoint: what earlier runs kept, and where this run's outcomes are kept.
        resubmit: ask again the records whose earlier query is uncertain (the user has checked).
    """
    kept = kept_queries(records, checkpoint, spec)
    held = {} if resubmit else kept.uncertain
    done = kept.answered.keys() | held.keys()
    pending = (
        records.loc[[int(str(record_id)) not in done for record_id in records["RecordId"]]]
        if done
        else records
    )
    chunks = await _ask_pending(connect, pending, spec, concurrency, checkpoint)
    if sends is not None:
        _count_sends(sends, kept, held, chunks)
    return _answer_frame(
        [
            *kept.answered.values(),
            *(
                {"RecordId": row, ERROR_COLUMN: uncertain_text(why, earlier=True)}
                for row, why in held.items()
            ),
            *(answer for chunk in chunks for answer in chunk.answers),
        ]
    )


async def _ask_pending(
    connect: ClientFactory[AddressServiceClient],
    pending: pd.DataFrame,
    spec: QuerySpec,
    concurrency: int,
    checkpoint: RowCheckpoint | None,
) -> list[QueryChunk]:
    """Query the records not answered yet, in chunks (none when there are none), the progress shown."""
    progress = await Progress.start(f"address queries ({len(pending)} records)")
    if pending.empty:
        await progress.update(100.0, "nothing left to ask")
        return []
    return await fan_out(
        query_rows,
        pending,
        concurrency=concurrency,
        progress=progress,
        unit="records",
        connect=connect,
        spec=spec,
        checkpoint=checkpoint,
    )


def _count_sends(
    sends: SendCounter, kept: KeptQueries, held: Mapping[int, str], chunks: list[QueryChunk]
) -> None:
    """Count the answers resumed, the uncertain rows held or asked again, and the chunks' sends."""
    sends.resumed += len(kept.answered)
    sends.held += len(held)
    sends.resubmitted += len(kept.uncertain) - len(held)
    for chunk in chunks:
        sends.add(chunk.sends)


def _answer_frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    """The answer rows in RecordId order, with a ``QueryError`` column even when no query failed."""
    frame = pd.DataFrame(rows, dtype=object)
    if ERROR_COLUMN not in frame.columns:
        frame[ERROR_COLUMN] = None
    return frame.sort_values("RecordId", kind="stable").reset_index(drop=True)
