"""One request per row: bounded concurrency, each failure classified by its type, and answers kept in a
checkpoint so that a resumed run asks only for the rows not answered yet (and only for the same request)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import pandas as pd
import pytest
from prefect import task
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from connectors.commerce import CommerceRejected
from connectors.commerce.errors import GuessedPathNotFound
from connectors.errors import AuthFailed, NotFound, ServerError, TransportFailure
from fileio import checkpoint as checkpoint_module
from fileio.checkpoint import RowCheckpoint
from tasks.commerce.per_row import ChunkAnswers, RowAsking, RowOutcome, answer_in_chunks, ask_chunk, ask_rows
from tasks.fanout import ChunkPart


class Ask(BaseModel):
    value: str


class Answer(BaseModel):
    echo: str


class Service:
    """Answers ``echo``; values name a failure to raise; counts requests and the most in flight."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.in_flight = self.most_in_flight = 0

    async def __call__(self, request: Ask) -> Answer:
        self.asked.append(request.value)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.001)
            errors = {
                "refused": CommerceRejected(
                    "x", code="400", meaning="bad", status_code=400, detail="bad zip"
                ),
                "unknown": NotFound("commerce: HTTP 404", api="commerce", status_code=404),
                "down": ServerError("commerce: HTTP 503", api="commerce", status_code=503),
                "cut": TransportFailure("commerce: connection reset", api="commerce"),
                "denied": AuthFailed("commerce: HTTP 403", api="commerce", status_code=403),
                "nowhere": GuessedPathNotFound(
                    "commerce: HTTP 404: set POSTFLOWS_COMMERCE_PICKUP_POINTS_PATH",
                    api="commerce",
                    status_code=404,
                    setting="POSTFLOWS_COMMERCE_PICKUP_POINTS_PATH",
                ),
            }
            if request.value in errors:
                raise errors[request.value]
            return Answer(echo=request.value.upper())
        finally:
            self.in_flight -= 1


def requests(*values: str) -> list[tuple[int, Ask]]:
    return [(row, Ask(value=value)) for row, value in enumerate(values, start=1)]


@task(cache_policy=NO_CACHE)
async def ask_service(
    rows: pd.DataFrame,
    *,
    part: ChunkPart,
    concurrency: int,
    checkpoint: RowCheckpoint | None,
    service: Service,
) -> ChunkAnswers[Answer]:
    """A chunk task as the flows' are: its rows' requests, asked on a "client" of its own."""
    chunk = [(int(row), Ask(value=value)) for row, value in zip(rows["row"], rows["value"], strict=True)]

    async def ask(client: Service, request: Ask) -> Answer:
        return await client(request)

    return await ask_chunk(
        lambda **_: nullcontext(service),
        chunk,
        ask,
        part=part,
        concurrency=concurrency,
        checkpoint=checkpoint,
    )


async def answer_rows(
    asked: list[tuple[int, Ask]],
    service: Service,
    *,
    concurrency: int = 8,
    checkpoint: RowCheckpoint | None = None,
    reusable: Callable[[Answer], bool] | None = None,
) -> list[RowOutcome[Answer]]:
    """Every row through the fan-out, as a flow asks them (here, outside a flow run: one chunk)."""
    records = pd.DataFrame({"row": [row for row, _ in asked], "value": [ask.value for _, ask in asked]})
    asking = (
        RowAsking(ask_service, Answer, "t")
        if reusable is None
        else RowAsking(ask_service, Answer, "t", reusable)
    )
    return await answer_in_chunks(
        asking, records, asked, concurrency=concurrency, checkpoint=checkpoint, service=service
    )


async def test_every_row_ends_with_an_outcome_in_input_order_and_concurrency_is_bounded() -> None:
    service = Service()
    values = [f"a{n}" for n in range(20)] + ["refused", "unknown", "down", "cut"]
    outcomes = await answer_rows(requests(*values), service, concurrency=3)

    assert [o.row for o in outcomes] == list(range(1, 25))
    assert service.most_in_flight == 3
    assert outcomes[0].answer == Answer(echo="A0") and outcomes[0].status == "answered"
    assert [(o.status, o.http_status, o.error) for o in outcomes[20:22]] == [
        ("refused", 400, "bad zip"),
        ("not found", 404, "commerce: HTTP 404"),
    ]
    assert [(o.status, o.http_status) for o in outcomes[22:]] == [("failed", 503), ("failed", None)]


async def test_refused_credentials_stop_the_run() -> None:
    with pytest.raises(AuthFailed):
        await answer_rows(requests("a", "denied", "b"), Service(), concurrency=1)


async def test_a_wrong_path_stops_the_run_naming_the_setting_instead_of_a_not_found_row() -> None:
    service = Service()
    with pytest.raises(GuessedPathNotFound, match="POSTFLOWS_COMMERCE_PICKUP_POINTS_PATH"):
        await answer_rows(requests("a", "nowhere", "b"), service, concurrency=1)
    assert service.asked == ["a", "nowhere"]


async def test_an_interrupted_run_is_resumed_without_asking_answered_rows_again(tmp_path: Path) -> None:
    checkpoint = RowCheckpoint.for_key(tmp_path, "address-validation:abc", flush_rows=2)
    service = Service()
    with pytest.raises(AuthFailed):
        await answer_rows(
            requests("a", "refused", "down", "b", "denied", "c"),
            service,
            concurrency=1,
            checkpoint=checkpoint,
        )
    assert service.asked == ["a", "refused", "down", "b", "denied"]
    assert sorted(checkpoint.load()) == [1, 2, 4]  # a failed row is not kept: it is asked again

    again = Service()
    outcomes = await answer_rows(
        requests("a", "refused", "now-up", "b", "d", "c"),
        again,
        concurrency=2,
        checkpoint=RowCheckpoint.for_key(tmp_path, "address-validation:abc"),
    )
    # Answered and refused rows are kept; the failed row and the rows never asked are asked now.
    assert sorted(again.asked) == ["c", "d", "now-up"]
    assert [(o.row, o.status, o.resumed) for o in outcomes] == [
        (1, "answered", True),
        (2, "refused", True),
        (3, "answered", False),
        (4, "answered", True),
        (5, "answered", False),
        (6, "answered", False),
    ]
    assert outcomes[0].answer == Answer(echo="A") and outcomes[1].error == "bad zip"


async def test_answers_reach_the_disk_while_the_other_requests_stall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process killed while its last requests hang must not lose the answers it received long before.
    monkeypatch.setattr(checkpoint_module, "FLUSH_CHECK_S", 0.01)
    checkpoint = RowCheckpoint(tmp_path, flush_seconds=0.05)
    release = asyncio.Event()

    async def stalls_on_b(request: Ask) -> Answer:
        if request.value == "b":
            await release.wait()
        return Answer(echo=request.value.upper())

    asking = asyncio.ensure_future(
        ask_rows(requests("a", "b"), stalls_on_b, concurrency=2, checkpoint=checkpoint)
    )
    for _ in range(500):
        if RowCheckpoint(tmp_path).load():
            break
        await asyncio.sleep(0.01)
    assert sorted(RowCheckpoint(tmp_path).load()) == [1]
    assert not asking.done()
    release.set()
    assert sorted(await asking) == [1, 2]
    assert sorted(RowCheckpoint(tmp_path).load()) == [1, 2]


async def test_a_checkpointed_answer_is_used_only_for_the_same_request_and_while_reusable(
    tmp_path: Path,
) -> None:
    checkpoint = RowCheckpoint.for_key(tmp_path, "k")
    await answer_rows(requests("a", "b"), Service(), checkpoint=checkpoint)

    service = Service()
    outcomes = await answer_rows(
        requests("a", "changed"),
        service,
        checkpoint=checkpoint,
        reusable=lambda answer: answer.echo != "A",
    )
    assert sorted(service.asked) == ["a", "changed"]  # "a" no longer reusable, row 2 asks something else
    assert not any(o.resumed for o in outcomes)


def test_checkpoint_parts_are_written_when_due_and_cleared(tmp_path: Path) -> None:
    now = [0.0]
    checkpoint = RowCheckpoint(tmp_path / "k", flush_rows=3, flush_seconds=5.0, clock=lambda: now[0])
    checkpoint.add(1, "h1", {"status": "answered"})
    checkpoint.add(2, "h2", {"status": "answered"})
    assert checkpoint.load() == {}  # nothing due yet
    now[0] = 6.0
    checkpoint.add(3, "h3", {"status": "refused"})  # the oldest waited long enough
    assert sorted(checkpoint.load()) == [1, 2, 3]
    checkpoint.add(2, "h2b", {"status": "answered"})
    checkpoint.flush()
    assert checkpoint.load()[2]["sent"] == "h2b"  # a later part wins
    assert sorted(path.name for path in (tmp_path / "k").iterdir()) == [
        "part-000001.jsonl",
        "part-000002.jsonl",
    ]
    checkpoint.clear()
    assert not (tmp_path / "k").exists() and checkpoint.load() == {}


def test_writers_of_one_run_keep_their_own_parts_and_a_later_run_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunk tasks of one run write at once and may pick the same part number: none replaces another's."""
    checkpoint = RowCheckpoint.for_key(tmp_path, "k")
    first, second = checkpoint.for_writer("c1"), checkpoint.for_writer("c2")
    first.add(1, "h1", {"status": "answered"})
    second.add(2, "h2", {"status": "refused"})
    monkeypatch.setattr(second, "_parts", list)  # it looked for parts before the first one was written
    first.flush()
    second.flush()
    assert sorted(path.name for path in checkpoint.directory.iterdir()) == [
        "part-000001-c1.jsonl",
        "part-000001-c2.jsonl",
    ]
    assert {row: entry["sent"] for row, entry in checkpoint.load().items()} == {1: "h1", 2: "h2"}

    later = RowCheckpoint.for_key(tmp_path, "k").for_writer("c9")
    later.add(2, "h2b", {"status": "answered"})
    later.flush()
    assert checkpoint.load()[2]["sent"] == "h2b"  # part 2: after every part of the run before
    with pytest.raises(ValueError, match="letters and digits"):
        checkpoint.for_writer("../c1")
