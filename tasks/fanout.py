"""Row fan-outs on the flow's task runner: the rows go in chunks, each chunk one Prefect task submitted to the
flow's task runner (threads by default, a Dask cluster as an option); the chunks' results come back in order.

How the rows are cut depends on where the chunks run (:meth:`ChunkPlan.for_runner`):

* in this process (the thread pool runner, or no flow run at all): one chunk of every row, its
  ``concurrency`` requests in flight on one event loop, as fast as before there were task runners (more
  threads add only overhead to requests that mostly wait); its rows are counted for progress as they end;
* on other processes (Dask workers): lanes of at most :data:`LANE_CONCURRENCY` requests, as many lanes as
  ``concurrency`` needs, each lane a chunk task at a time, and a few chunks per lane so that progress moves
  as chunks end and a slow worker holds back only its own chunk.

Either way at most ``concurrency`` requests of one fan-out are in flight. Clients cannot be pickled, so a
chunk task builds its own from a :class:`ClientFactory` (the composition root's, bound to the run's settings).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from prefect import Task
from prefect.context import FlowRunContext
from prefect.futures import PrefectFuture
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from connectors.http import RequestLog
from fileio.lazy import lazy_module
from tasks.progress import Progress

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

R = TypeVar("R")
C_co = TypeVar("C_co", covariant=True)

LANE_CONCURRENCY = 8
"""Requests one chunk task keeps in flight when chunks run on other processes."""

CHUNKS_PER_LANE = 4
"""Chunks per lane when chunks run on other processes."""

PROGRESS_EVERY_S = 0.5
"""How often the progress of a fan-out is reported while its chunks run."""


class ClientFactory(Protocol[C_co]):
    """Builds a connector client (an async context manager) whose requests go to ``request_log``."""

    def __call__(self, *, request_log: RequestLog | None = None) -> C_co: ...


@dataclass(frozen=True)
class ChunkPart:
    """Which chunk a chunk task runs, and the tally its rows are counted on as they end.

    Attributes:
        index: the chunk's place, from 0.
        count: how many chunks the fan-out has.
        tally: the key of the fan-out's row count in the process that started it.
    """

    index: int
    count: int
    tally: str

    @property
    def label(self) -> str:
        """``3-of-10``: what the task run's name says."""
        return f"{self.index + 1}-of-{self.count}"

    @property
    def writer(self) -> str:
        """A name for what this chunk writes, distinct from every other chunk's (``c3``)."""
        return f"c{self.index + 1}"

    def row_done(self) -> None:
        """Count one row as ended (seen only when the chunk runs in the process that started the fan-out)."""
        _tallies.add(self.tally, 1)


class _Tallies:
    """Rows ended per fan-out in this process, written by chunk tasks on any thread."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._guard = threading.Lock()

    def add(self, key: str, rows: int) -> None:
        with self._guard:
            self._counts[key] = self._counts.get(key, 0) + rows

    def get(self, key: str) -> int:
        with self._guard:
            return self._counts.get(key, 0)

    def forget(self, key: str) -> None:
        with self._guard:
            self._counts.pop(key, None)


_tallies = _Tallies()


@dataclass(frozen=True)
class ChunkPlan:
    """How a fan-out cuts its rows and runs them.

    Attributes:
        chunk_rows: rows per chunk (the last may have fewer).
        lanes: chunk tasks in flight at once.
        concurrency: requests in flight within one chunk task.
    """

    chunk_rows: int
    lanes: int
    concurrency: int

    @classmethod
    def for_runner(cls, rows: int, concurrency: int, *, in_process: bool) -> ChunkPlan:
        """The plan for ``rows`` rows and ``concurrency`` requests in flight (see the module docstring)."""
        concurrency = max(1, concurrency)
        if in_process:
            return cls(chunk_rows=max(1, rows), lanes=1, concurrency=concurrency)
        lanes = -(-concurrency // LANE_CONCURRENCY)
        chunk_rows = max(1, -(-rows // (lanes * CHUNKS_PER_LANE)))
        return cls(chunk_rows=chunk_rows, lanes=lanes, concurrency=concurrency // lanes)

    def bounds(self, rows: int) -> list[tuple[int, int]]:
        """(start, stop) of every chunk of ``rows`` rows, in order."""
        return [(start, min(rows, start + self.chunk_rows)) for start in range(0, rows, self.chunk_rows)]


class FanOutTaskRunner(TaskRunner[PrefectFuture[Any]]):
    """A flow's task runner that hands every submission to the runner ``choose`` returns when a flow run
    starts, so that a setting read then (not when the flow was imported) decides where the chunks run.

    Args:
        choose: builds the runner to use (not yet started).
    """

    def __init__(self, choose: Callable[[], TaskRunner[Any]]) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._choose = choose
        self._delegate: TaskRunner[Any] | None = None

    @property
    def delegate(self) -> TaskRunner[Any]:
        """The runner the submissions go to (only while this one is started)."""
        if self._delegate is None:
            raise RuntimeError("the fan-out task runner is not started")
        return self._delegate

    def duplicate(self) -> Self:
        return type(self)(self._choose)

    def submit(
        self,
        task: Task[Any, Any],
        parameters: dict[str, Any],
        wait_for: Any = None,
        dependencies: Any = None,
    ) -> PrefectFuture[Any]:
        future: PrefectFuture[Any] = self.delegate.submit(task, parameters, wait_for, dependencies)
        return future

    def __enter__(self) -> Self:
        delegate = self._choose()
        delegate.__enter__()
        self._delegate = delegate
        return super().__enter__()

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        try:
            if self._delegate is not None:
                self._delegate.__exit__(exc_type, exc_value, traceback)
        finally:
            self._delegate = None
            super().__exit__(exc_type, exc_value, traceback)


def runs_in_this_process(runner: TaskRunner[Any]) -> bool:
    """Whether ``runner`` runs tasks on this process's threads."""
    if isinstance(runner, FanOutTaskRunner):
        runner = runner.delegate
    return isinstance(runner, ThreadPoolTaskRunner)


async def run_workers(worker: Callable[[], Coroutine[Any, Any, None]], count: int) -> None:
    """Run ``count`` copies of ``worker`` side by side (at least one), the requests of one chunk. The first
    failure cuts the others off (their requests in flight see a cancellation) and is raised as itself, not
    as a group."""
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, count)):
                group.create_task(worker())
    except BaseExceptionGroup as failures:
        raise failures.exceptions[0] from None


async def fan_out(
    chunk_task: Task[Any, Coroutine[Any, Any, R]],
    rows: pd.DataFrame,
    *,
    concurrency: int,
    progress: Progress,
    unit: str = "rows",
    **parameters: Any,
) -> list[R]:
    """Run ``chunk_task(chunk, part=..., concurrency=..., **parameters)`` for every chunk of ``rows``.

    In a flow run the chunks are submitted to the flow's task runner, at most ``lanes`` at a time; outside
    one (a benchmark, a test) the one chunk runs here. ``progress`` moves as rows end.

    Returns:
        Each chunk's result, in the order of the chunks.

    Raises:
        Exception: the first chunk's error, once the chunks already running have ended (no chunk starts
            after a failure).
    """
    context = FlowRunContext.get()
    runner = context.task_runner if context is not None else None
    in_process = runner is None or runs_in_this_process(runner)
    plan = ChunkPlan.for_runner(len(rows), concurrency, in_process=in_process)
    bounds = plan.bounds(len(rows))
    tally = uuid.uuid4().hex
    calls = [
        {
            "rows": rows.iloc[start:stop],
            "part": ChunkPart(index, len(bounds), tally),
            "concurrency": plan.concurrency,
            **parameters,
        }
        for index, (start, stop) in enumerate(bounds)
    ]
    ended = _EndedRows(tally)
    try:
        async with _reporting(progress, ended, len(rows), unit):
            if runner is None:
                return [await chunk_task.fn(**call) for call in calls]
            return await _submit_in_lanes(chunk_task, calls, plan.lanes, ended)
    finally:
        _tallies.forget(tally)


class _EndedRows:
    """Rows ended so far: counted row by row where the chunks run here, chunk by chunk otherwise."""

    def __init__(self, tally: str) -> None:
        self.tally = tally
        self.in_ended_chunks = 0

    @property
    def count(self) -> int:
        return max(_tallies.get(self.tally), self.in_ended_chunks)


async def _submit_in_lanes(
    chunk_task: Task[Any, Coroutine[Any, Any, R]],
    calls: Sequence[dict[str, Any]],
    lanes: int,
    ended: _EndedRows,
) -> list[R]:
    results: dict[int, R] = {}
    running: dict[asyncio.Future[R], int] = {}
    failure: Exception | None = None
    waiting = iter(enumerate(calls))
    while True:
        while failure is None and len(running) < lanes and (item := next(waiting, None)) is not None:
            index, call = item
            # Submitting may block (a Dask runner starts its cluster on the first one): not on this loop.
            future: PrefectFuture[R] = await asyncio.to_thread(_submit, chunk_task, call)
            running[asyncio.ensure_future(asyncio.to_thread(future.result))] = index
        if not running:
            break
        done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        for waiter in done:
            index = running.pop(waiter)
            try:
                results[index] = waiter.result()
            except Exception as error:  # noqa: BLE001 - kept, raised once the running chunks end
                failure = failure or error
            else:
                ended.in_ended_chunks += len(calls[index]["rows"])
    if failure is not None:
        raise failure
    return [results[index] for index in range(len(calls))]


def _submit(chunk_task: Task[Any, Coroutine[Any, Any, R]], call: dict[str, Any]) -> PrefectFuture[R]:
    future: PrefectFuture[R] = chunk_task.submit(**call)
    return future


@asynccontextmanager
async def _reporting(progress: Progress, ended: _EndedRows, total: int, unit: str) -> AsyncIterator[None]:
    """Report the rows ended every :data:`PROGRESS_EVERY_S` while the block runs, and once more at its end."""

    async def report() -> None:
        shown = -1
        while True:
            await asyncio.sleep(PROGRESS_EVERY_S)
            if ended.count != shown:
                shown = ended.count
                await progress.update(100.0 * shown / max(1, total), f"{shown}/{total} {unit}")

    reporter = asyncio.ensure_future(report())
    try:
        yield
    finally:
        reporter.cancel()
        await asyncio.gather(reporter, return_exceptions=True)
    count = ended.count
    await progress.update(100.0 * count / max(1, total), f"{count}/{total} {unit}")
