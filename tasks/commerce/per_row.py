"""One read request per input row with bounded concurrency: every row ends answered or with its reason, and
answers already received by an interrupted run are taken from its checkpoint instead of asked again.

What a row's failure means is decided by the error's type, here only:

* the service refused the row (HTTP 400, :class:`~connectors.commerce.CommerceRejected`): ``refused``, with
  the service's message;
* it does not know the address (404, where §7 lists 404 for the endpoint): ``not found``;
* a transient failure that the connector's retries did not overcome (5xx, 429, transport, an unreadable
  answer) or another HTTP status: ``failed``, with the reason — such a row is asked again by a resumed run;
* the service refused our credentials (401/403), or has nothing at a path that is a setting (404 or 405,
  :class:`~connectors.commerce.errors.GuessedPathNotFound`, naming the setting): no row can succeed, so the
  run stops (answers so far are kept in the checkpoint).

:func:`answer_in_chunks` takes the resumed rows with :func:`resumed_outcomes` and fans the others out over the
flow's task runner (threads, or a Dask cluster: see :mod:`tasks.fanout`); each chunk task asks its rows with
:func:`ask_chunk` on a client of its own, writing the checkpoint as a writer of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from prefect import Task
from pydantic import BaseModel, ValidationError

from connectors.commerce import CommerceRejected
from connectors.commerce.errors import GuessedPathNotFound
from connectors.errors import ApiError, AuthFailed, HttpStatusError, NotFound
from fileio.checkpoint import RowCheckpoint, kept_on_disk, request_fingerprint
from fileio.commerce.address_input import ROW
from fileio.lazy import lazy_module
from history.recorder import RunRecorder
from tasks.fanout import ChunkPart, ClientFactory, fan_out, run_workers
from tasks.progress import Progress
from tasks.sending import SendCounter

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

Q = TypeVar("Q", bound=BaseModel)
M = TypeVar("M", bound=BaseModel)
C = TypeVar("C")
RowStatus = Literal["answered", "refused", "not found", "failed"]
FINAL_STATUSES: frozenset[str] = frozenset({"answered", "refused", "not found"})


@dataclass(frozen=True)
class RowOutcome(Generic[M]):
    """How one row's request ended.

    Attributes:
        row: the input row.
        status: ``answered``, ``refused`` (HTTP 400), ``not found`` (404) or ``failed``.
        http_status: the HTTP status of the last answer; None when none came (a transport failure).
        error: the service's message or the failure's reason; None when answered.
        answer: the answer, when there is one.
        resumed: taken from an interrupted run's checkpoint, not asked again.
    """

    row: int
    status: RowStatus
    http_status: int | None = None
    error: str | None = None
    answer: M | None = None
    resumed: bool = False

    @property
    def final(self) -> bool:
        """True when asking again would give the same result (so a resumed run need not ask)."""
        return self.status in FINAL_STATUSES


@dataclass(frozen=True)
class ChunkAnswers(Generic[M]):
    """What one chunk task of a per-row fan-out brings back.

    Attributes:
        outcomes: the outcome of every row of the chunk, by row.
        sends: requests sent, by outcome (see :class:`~tasks.sending.SendCounter`).
    """

    outcomes: dict[int, RowOutcome[M]]
    sends: dict[str, int]


def failure_outcome(row: int, error: ApiError) -> RowOutcome[Any] | None:
    """The outcome of a row whose request raised ``error``; None when the error ends the whole run."""
    if isinstance(error, CommerceRejected):
        return RowOutcome(row, "refused", error.status_code, error.detail)
    if isinstance(error, AuthFailed | GuessedPathNotFound):
        return None
    if isinstance(error, NotFound):
        return RowOutcome(row, "not found", error.status_code, str(error))
    status = error.status_code if isinstance(error, HttpStatusError) else None
    return RowOutcome(row, "failed", status, str(error))


def _any_answer(answer: BaseModel) -> bool:
    return True


@dataclass(frozen=True)
class RowAsking(Generic[M]):
    """What a per-row fan-out asks with, the same for every run of one kind of request.

    Attributes:
        chunk_task: asks the rows of one chunk; called as ``chunk_task(rows, part=..., concurrency=...,
            checkpoint=..., **parameters)`` (see :func:`ask_chunk`).
        answer_model: the answer's model, to read answers back from the checkpoint.
        label: what the progress bar says.
        reusable: whether a checkpointed answer may still be used (e.g. it has not expired).
    """

    chunk_task: Task[..., Coroutine[Any, Any, ChunkAnswers[M]]]
    answer_model: type[M]
    label: str
    reusable: Callable[[M], bool] = _any_answer


async def answer_in_chunks(
    asking: RowAsking[M],
    records: pd.DataFrame,
    requests: Sequence[tuple[int, BaseModel]],
    *,
    concurrency: int,
    checkpoint: RowCheckpoint | None = None,
    sends: SendCounter | None = None,
    **parameters: Any,
) -> list[RowOutcome[M]]:
    """Answer every row of ``records``: the rows an interrupted run answered (in ``checkpoint``, same
    request, still reusable) from there, the others with the chunk task of ``asking`` fanned out over the
    flow's task runner, at most ``concurrency`` requests in flight.

    Args:
        asking: the chunk task, the answer's model, the progress bar's label and which kept answers may
            still be used.
        records: the accepted rows (``row`` and the fields the chunk task reads).
        requests: what is sent for each row of ``records``, in the same order (to find resumed answers).
        concurrency: requests in flight at once.
        checkpoint: answers of an interrupted run, and where this run's answers are kept.
        sends: counts the requests the chunk tasks sent.
        **parameters: passed on to every chunk task.

    Returns:
        One outcome per record, in the order of ``records``.

    Raises:
        AuthFailed: the service refused our credentials; no row can succeed.
        GuessedPathNotFound: nothing at a path that is a setting (404, 405); no row can succeed.
    """
    outcomes = resumed_outcomes(
        requests, checkpoint, answer_model=asking.answer_model, reusable=asking.reusable
    )
    pending = records.loc[[int(row) not in outcomes for row in records[ROW]]]
    progress = await Progress.start(f"{asking.label} ({len(pending)} rows)")
    if pending.empty:
        await progress.update(100.0, "nothing left to ask")
        return [outcomes[row] for row, _ in requests]
    chunks = await fan_out(
        asking.chunk_task,
        pending,
        concurrency=concurrency,
        progress=progress,
        checkpoint=checkpoint,
        **parameters,
    )
    for chunk in chunks:
        outcomes.update(chunk.outcomes)
        if sends is not None:
            sends.add(chunk.sends)
    return [outcomes[row] for row, _ in requests]


async def ask_chunk(
    connect: ClientFactory[Any],
    requests: Sequence[tuple[int, Q]],
    ask: Callable[[C, Q], Awaitable[M]],
    *,
    part: ChunkPart,
    concurrency: int,
    checkpoint: RowCheckpoint | None,
) -> ChunkAnswers[M]:
    """The body of a chunk task: ask ``ask(client, request)`` for every row of ``requests`` on a client of
    the chunk's own (``connect``); each row's final outcome goes to the chunk's writer of ``checkpoint``.

    Raises:
        AuthFailed: the service refused our credentials.
        GuessedPathNotFound: nothing at a path that is a setting (404, 405).
    """

    async def row_done() -> None:
        part.row_done()

    sends = SendCounter()
    async with connect(request_log=sends) as client:
        outcomes = await ask_rows(
            requests,
            partial(ask, client),
            concurrency=concurrency,
            checkpoint=checkpoint.for_writer(part.writer) if checkpoint is not None else None,
            row_done=row_done,
        )
    return ChunkAnswers(outcomes, dict(sends.outcomes))


def resumed_outcomes(
    requests: Sequence[tuple[int, Q]],
    checkpoint: RowCheckpoint | None,
    *,
    answer_model: type[M],
    reusable: Callable[[M], bool] = _any_answer,
) -> dict[int, RowOutcome[M]]:
    """The rows an interrupted run already answered for the same request, with answers still usable."""
    previous = checkpoint.load() if checkpoint is not None else {}
    kept: dict[int, RowOutcome[M]] = {}
    for row, request in requests:
        outcome = _resumed(previous.get(row), fingerprint_of(request), answer_model, reusable)
        if outcome is not None:
            kept[row] = outcome
    return kept


def fingerprint_of(request: BaseModel) -> str:
    """The fingerprint of what is sent for a row (its JSON body)."""
    return request_fingerprint(request.model_dump(mode="json", by_alias=True, exclude_none=True))


async def ask_rows(
    requests: Sequence[tuple[int, Q]],
    call: Callable[[Q], Awaitable[M]],
    *,
    concurrency: int,
    checkpoint: RowCheckpoint | None = None,
    row_done: Callable[[], Awaitable[None]] | None = None,
) -> dict[int, RowOutcome[M]]:
    """Ask every row of ``requests``, at most ``concurrency`` at a time; final outcomes go to ``checkpoint``
    (written when due, also while the requests in flight stall, and when done or stopped) and ``row_done``
    is called as each row ends.

    Raises:
        AuthFailed: the service refused our credentials; no row can succeed.
        GuessedPathNotFound: nothing at a path that is a setting (404, 405); no row can succeed.
    """
    outcomes: dict[int, RowOutcome[M]] = {}
    work = iter(requests)

    async def worker() -> None:
        for row, request in work:  # one iterator shared by every worker: each row once
            outcome = await _ask(row, request, call)
            outcomes[row] = outcome
            if checkpoint is not None and outcome.final:
                checkpoint.add(row, fingerprint_of(request), _entry(outcome))
            if row_done is not None:
                await row_done()

    async with kept_on_disk(checkpoint):
        await run_workers(worker, min(concurrency, len(requests)))
    return outcomes


async def _ask(row: int, request: Q, call: Callable[[Q], Awaitable[M]]) -> RowOutcome[M]:
    try:
        answer = await call(request)
    except ApiError as error:
        outcome = failure_outcome(row, error)
        if outcome is None:
            raise
        return outcome
    return RowOutcome(row, "answered", 200, answer=answer)


def _entry(outcome: RowOutcome[Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"status": outcome.status, "http_status": outcome.http_status}
    if outcome.error is not None:
        entry["error"] = outcome.error
    if outcome.answer is not None:
        entry["answer"] = outcome.answer.model_dump(mode="json", by_alias=True, exclude_none=True)
    return entry


def _resumed(
    entry: dict[str, Any] | None, fingerprint: str, model: type[M], reusable: Callable[[M], bool]
) -> RowOutcome[M] | None:
    """The checkpointed outcome of a row, when it answered this very request and may still be used."""
    if entry is None or entry.get("sent") != fingerprint or entry.get("status") not in FINAL_STATUSES:
        return None
    status, row = cast(RowStatus, entry["status"]), int(entry["row"])
    http_status = entry.get("http_status") if isinstance(entry.get("http_status"), int) else None
    if status != "answered":
        return RowOutcome(row, status, http_status, str(entry.get("error") or ""), resumed=True)
    try:
        answer = model.model_validate(entry.get("answer"))
    except ValidationError:
        return None
    if not reusable(answer):
        return None
    return RowOutcome(row, "answered", http_status, answer=answer, resumed=True)


async def record_outcomes(
    recorder: RunRecorder,
    what: str,
    sends: SendCounter,
    outcomes: Sequence[RowOutcome[Any]],
    *,
    limit: int = 20,
) -> None:
    """Record how many requests went out and the first ``limit`` rows that got no usable answer; rows
    answered by an interrupted run (its checkpoint) are noted as earlier work taken up."""
    await recorder.message("info", what, sends.describe())
    resumed = sum(1 for outcome in outcomes if outcome.resumed)
    if resumed:
        recorder.note_reused(f"{what} answers", f"{resumed} rows from an interrupted run's checkpoint")
    for outcome in [o for o in outcomes if o.status != "answered"][:limit]:
        await recorder.message("warning", f"row {outcome.row}", f"{outcome.status}: {outcome.error}")
