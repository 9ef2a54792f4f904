"""What the commerce flows that ask the service once per row of a file share (address validation,
deliverability, pickup points): the work (the file, where its results go, its key), the recorded run holding
the key, the answers of an interrupted run taken up from the checkpoint under the key, the requests counted,
and the run's end (the checkpoint cleared once no row failed, the counts noted)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fileio.checkpoint import RowCheckpoint
from fileio.commerce.address_input import CommerceAddresses, Use
from fileio.errors import InputError
from flows.commerce_files import prepare_commerce_addresses
from flows.requests import OutputOptions, PickupPointsRequest
from flows.requests.commerce import CommerceAddressRequest
from flows.runs import RunSummary, recorded_run
from history.identity import derive_key
from history.recorder import RunRecorder
from runtime.run import Run
from tasks.commerce.per_row import RowOutcome, record_outcomes
from tasks.sending import SendCounter

RESUME_FOLDER = "resume"
"""Below the data dir: the checkpoints of the runs asking once per row, one folder per key."""


@dataclass(frozen=True)
class RowWork:
    """The file a run asks about row by row (``input_path``), where its results go (``output_dir``), the
    queries in flight at once, and what makes the work the same work again (``identity``, with the file)."""

    input_path: Path
    output_dir: Path
    concurrency: int
    identity: Mapping[str, Any]

    @classmethod
    def of(
        cls,
        request: CommerceAddressRequest | PickupPointsRequest,
        output: OutputOptions,
        identity: Mapping[str, Any],
    ) -> RowWork:
        """The work of ``request``'s file.

        Raises:
            InputError: the file does not exist (nothing is recorded or sent).
        """
        input_path = Path(request.input_path)
        if not input_path.is_file():
            raise InputError("input file not found", path=input_path)
        return cls(input_path, Path(output.output_dir), request.concurrency, identity)

    def key(self, run: Run) -> str:
        """The work's idempotency key against the commerce service ``run`` talks to."""
        return derive_key(
            run.flow, endpoint=run.endpoint("commerce"), files=(self.input_path,), parameters=self.identity
        )

    def parameters(self, *, with_identity: bool = True) -> dict[str, Any]:
        """The run's parameters as the history records them (the identity too, unless told not to)."""
        given = {
            "input_path": self.input_path,
            "output_dir": self.output_dir,
            "concurrency": self.concurrency,
        }
        return {**given, **self.identity} if with_identity else given


@dataclass(frozen=True)
class RowRun:
    """A recorded run asking once per row of ``work``: its checkpoint and the requests it sends."""

    run: Run
    work: RowWork
    recorder: RunRecorder
    summary: RunSummary
    checkpoint: RowCheckpoint
    sends: SendCounter = field(default_factory=SendCounter)

    async def record(self, what: str, outcomes: Sequence[RowOutcome[Any]]) -> None:
        """Record the requests sent and the rows that got no usable answer (``what``: the queries)."""
        await record_outcomes(self.recorder, what, self.sends, outcomes)

    def end(self, outcomes: Sequence[RowOutcome[Any]], *, failed: int) -> None:
        """End the queries: the checkpoint goes once no row failed (a later run asks afresh; else a re-run
        asks only for the rows not answered), and the summary counts the resumed rows and the requests."""
        if not failed:
            self.checkpoint.clear()
        self.summary.update(
            resumed_rows=sum(1 for outcome in outcomes if outcome.resumed), requests_sent=self.sends.total
        )


@asynccontextmanager
async def row_run(run: Run, work: RowWork, *, with_identity: bool = True) -> AsyncIterator[RowRun]:
    """The recorded ``run`` of ``work``, holding its key (in the summary as ``idempotency_key``); the
    history records the identity among the parameters unless ``with_identity`` is false."""
    key = work.key(run)
    parameters = work.parameters(with_identity=with_identity)
    async with recorded_run(run, idempotency_key=key, parameters=parameters) as (recorder, summary):
        summary.update(idempotency_key=key)
        checkpoint = RowCheckpoint.for_key(run.settings.data_dir / RESUME_FOLDER, key)
        yield RowRun(run, work, recorder, summary, checkpoint)


async def read_addresses(
    rows: RowRun, request: CommerceAddressRequest, *, use: Use, reserved: Sequence[str]
) -> CommerceAddresses:
    """The "prepare input" step of a flow asking about every address of a file: the addresses, their
    row counts in the summary."""
    settings = rows.run.settings
    addresses, _ = await prepare_commerce_addresses(
        rows.recorder,
        request,
        rows.work.output_dir,
        use=use,
        reserved=reserved,
        csv_style=settings.csv_style,
        limits=settings.table_limits,
    )
    rows.summary.update(**addresses.counts())
    return addresses
