"""Running the fault matrix: one sandbox app and one history database, both emptied before each run, a clean
run of each flow case that learns its steps, and one cell per (step, fault) with what it observed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import delete, select

import history
from core.redaction import SCRUBBER
from fileio import files
from flows.results import RunResult
from history.models import JobState, Run, RunMessage
from history.schema import METADATA
from sandbox.address_service.jobs import JobStore
from sandbox.inprocess import SandboxTransport
from sandbox.request_counter import RequestCounter
from sandbox.state import MemoryState
from tasks.submission import PENDING_PREFIX
from tests.reliability.cases import CellSite, FlowCase
from tests.reliability.faults import Fault
from tests.reliability.steps import RecordingTransport, Seen, Step, glob_of, learn_steps

ADDRESS_FILE_KINDS = ("upload-file", "output-file")


@dataclass
class Observation:
    """What one cell (or a clean run) showed."""

    case: str
    step: Step | None
    fault: Fault | None
    summary: dict[str, Any] | None = None
    error: BaseException | None = None
    run_state: str | None = None
    run_error: str | None = None
    runs: int = 0
    messages: list[str] = field(default_factory=list)
    accepted: dict[tuple[str, str, str], int] = field(default_factory=dict)
    files_left: list[str] = field(default_factory=list)
    files_recorded: set[str] = field(default_factory=set)
    files_uncertain: int = 0
    fired: int = 0


class Matrix:
    """Runs clean runs and cells of the flow cases: one sandbox app and one history database, both emptied
    before each run, and a fresh folder (data dir, input, output) per run."""

    def __init__(
        self, root: Path, sandbox: SandboxTransport, transport: RecordingTransport, database_url: str
    ) -> None:
        self.root = root
        self.sandbox = sandbox
        self.transport = transport
        self.database_url = database_url
        self.runs = 0
        self._set_data_dir: Callable[[Path], None] = lambda path: None
        self._secrets = SCRUBBER.snapshot()

    def use_data_dir(self, setter: Callable[[Path], None]) -> None:
        """How a run's data dir is set (the test's monkeypatch of POSTFLOWS_DATA_DIR)."""
        self._set_data_dir = setter

    async def clean_run(self, case: FlowCase) -> tuple[Observation, list[Step]]:
        """Run ``case`` without faults; its observation and the steps it took."""
        with self._recording() as seen:
            observation = await self.observe(case, None, None)
        return observation, learn_steps(seen)

    @contextmanager
    def _recording(self) -> Iterator[list[Seen]]:
        self.transport.seen = []
        try:
            yield self.transport.seen
        finally:
            self.transport.seen = None

    async def observe(self, case: FlowCase, step: Step | None, fault: Fault | None) -> Observation:
        """Run ``case`` with ``fault`` injected at the first request of ``step`` (or none) and observe it."""
        self.runs += 1
        site = CellSite(self.root / f"{self.runs:04d}", self.sandbox)
        site.folder.mkdir(parents=True)
        self._set_data_dir(site.folder / "data")
        self._forget_everything()
        await case.prepare(site)
        self._counter.reset()
        rule = None
        if step is not None and fault is not None:
            rule = step.rule(**fault.rule(step))
            self.sandbox.config.faults.add(rule)
        observation = Observation(case.label, step, fault)
        try:
            result = await case.run(site)
            # A flow's result model is read as the summary it records (its JSON keys).
            observation.summary = result.summary() if isinstance(result, RunResult) else result
        except Exception as error:  # noqa: BLE001 - every failure is observed, typed or not
            observation.error = error
        if rule is not None:
            observation.fired = self.sandbox.config.faults.rules[0].fired
        self._read_history(case, observation)
        for item in self._counter.accepted():
            key = (item.api, item.method, glob_of(item.endpoint))
            observation.accepted[key] = observation.accepted.get(key, 0) + item.count
        observation.files_left = JobStore(self.sandbox.app.state.sandbox_state).file_tokens()
        self.sandbox.config.faults.clear()
        return observation

    @property
    def _counter(self) -> RequestCounter:
        counter: RequestCounter = self.sandbox.app.state.requests
        return counter

    def _forget_everything(self) -> None:
        state = self.sandbox.app.state.sandbox_state
        assert isinstance(state, MemoryState)
        state.clear()
        self.sandbox.config.faults.clear()
        self.sandbox.config.tokens.revoke_all()
        # As in a process of its own: no secret or private folder of an earlier run is known (a run checks
        # each file it writes against every private folder registered, so they must not pile up).
        SCRUBBER.restore(self._secrets)
        files._private_roots.clear()
        files._secured_roots.clear()
        factory = history.session_factory(self.database_url)
        with factory.begin() as session:
            for table in reversed(METADATA.sorted_tables):
                session.execute(delete(table))

    def _read_history(self, case: FlowCase, observation: Observation) -> None:
        factory = history.session_factory(self.database_url)
        with factory() as session:
            runs = list(session.scalars(select(Run).where(Run.flow == case.flow).order_by(Run.id)))
            observation.runs = len(runs)
            if runs:
                observation.run_state, observation.run_error = runs[-1].state, runs[-1].error
                observation.messages = [
                    message.text
                    for message in session.scalars(select(RunMessage).where(RunMessage.run_id == runs[-1].id))
                ]
            undeleted = history.undeleted_files(session, kinds=ADDRESS_FILE_KINDS)
            observation.files_recorded = {job.remote_id for job in undeleted}
            # A file whose creation lost its answer: recorded as uncertain, its token unknown.
            observation.files_uncertain = sum(
                job.remote_id.startswith(PENDING_PREFIX) and job.status == JobState.UNCERTAIN.value
                for job in undeleted
            )
