"""Twenty ``postflows`` processes started at the same moment against the session's Prefect server and one
served sandbox, on a history database that does not exist yet — SQLite, then PostgreSQL.

Some commands share an idempotency key (the same input), some do not, some have none (address queries).
Every run is recorded once with each of its input rows in its results or its rejected-rows report; no
output mentions a locked database or any error; each key is submitted once and held by one run at a time;
the history schema is created once.
"""

from __future__ import annotations

import csv
import itertools
import re
import resource
import subprocess
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.orm import Session

from history.db import alembic_config
from history.leases import HOLD_KEY_STEP
from history.models import KeyLease, RemoteJob, Run, Step
from tests.e2e.conftest import (
    CONCURRENCY_FIGURES,
    EXAMPLE,
    CliWorkspace,
    PrefectServer,
    ServedSandbox,
    fresh_prefect_database,
    json_block,
    served_sandbox,
    stop,
)
from tests.outputs import output_records

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

PROCESSES = 20
BATCH_KEYS = 10  # two inputs run by four processes each, eight by one each
HEAD = ScriptDirectory.from_config(alembic_config()).get_current_head()
# What goes wrong under concurrent use, in any process's output.
TROUBLE = re.compile(
    r"database is locked|deadlock|too many clients|already exists|traceback|exception|\berror\b",
    re.IGNORECASE,
)
CLOCK_SLACK = timedelta(milliseconds=50)


@dataclass(frozen=True)
class Command:
    """One process of the crowd: its command, input file, and the idempotency key it shares (or not)."""

    flow: str
    input_path: Path
    out: Path

    def args(self) -> tuple[str, ...]:
        return (self.flow, str(self.input_path), "--out", str(self.out))


@dataclass(frozen=True)
class Finished:
    """A process of the crowd once it ended: its output and the run summary it printed."""

    command: Command
    result: subprocess.CompletedProcess[str]
    summary: dict[str, Any]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSandbox]:
    with served_sandbox(tmp_path_factory.mktemp("crowd-sandbox"), job_seconds=0.5) as served:
        yield served


def _input_rows() -> tuple[str, list[list[str]]]:
    with EXAMPLE.open(encoding="utf-8", newline="") as source:
        header, *rows = source.read().splitlines()
    return header, [row.split(";") for row in rows]


def _write_input(path: Path, rows: list[list[str]]) -> Path:
    header, _ = _input_rows()
    path.write_text("\n".join([header, *(";".join(row) for row in rows)]) + "\n", encoding="utf-8")
    return path


def _crowd(root: Path) -> list[Command]:
    """Two inputs run by four processes each (two keys), eight inputs run by one process each (eight
    keys), four address queries (no key): twenty commands.

    Four runs of a key, because the second resumes the first one's job while the other two wait: what it
    does then must leave them waiting their turns.
    """
    inputs = root / "inputs"
    inputs.mkdir()
    _, rows = _input_rows()
    shared = [_write_input(inputs / f"shared-{n}.csv", rows[n * 20 : n * 20 + 20]) for n in range(2)]
    own = [_write_input(inputs / f"own-{n}.csv", rows[n * 4 : n * 4 + 10]) for n in range(8)]
    queries = [_write_input(inputs / f"query-{n}.csv", rows[n * 3 : n * 3 + 4]) for n in range(4)]
    plan = (
        [("address-batch", path) for path in shared for _ in range(4)]
        + [("address-batch", path) for path in own]
        + [("address-query", path) for path in queries]
    )
    assert len(plan) == PROCESSES
    return [Command(flow, path, root / "out" / f"{n:02d}") for n, (flow, path) in enumerate(plan)]


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _start_together(workspace: CliWorkspace, commands: list[Command]) -> list[Finished]:
    running = [workspace.start(*command.args()) for command in commands]
    finished = []
    try:
        for command, process in zip(commands, running, strict=True):
            stdout, stderr = process.communicate(timeout=240)
            result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
            assert result.returncode == 0, f"{command.args()}:\n{stdout}\n{stderr}"
            finished.append(Finished(command, result, json_block(stdout)))
    finally:
        for process in running:
            stop(process)
    return finished


def _input_column(path: Path, column: str) -> list[str]:
    """One column of an input file (UTF-8, ``;``-separated)."""
    with path.open(encoding="utf-8", newline="") as source:
        return [row[column] for row in csv.DictReader(source, delimiter=";")]


def _output_column(path: Path, column: str) -> list[str]:
    """One column of a CSV file a flow wrote; empty when the file was not written (no row rejected)."""
    return [row[column] for row in output_records(path)] if path.exists() else []


def _assert_every_row_accounted_for(run: Finished) -> None:
    """Every input row is a result row or a rejected row, once; the summary agrees."""
    input_ids = _input_column(run.command.input_path, "KundenNr")
    rejected = {int(number) for number in _output_column(run.command.out / "rejected.csv", "row")}
    result_ids = _output_column(run.command.out / "results.csv", "KundenNr")
    assert result_ids == [kunde for number, kunde in enumerate(input_ids, 1) if number not in rejected]
    assert len(result_ids) + len(rejected) == len(input_ids)
    assert run.summary["rejected_rows"] == len(rejected)


@dataclass(frozen=True)
class Hold:
    """When one run held one key, and how its hold ended."""

    key: str
    run_id: int
    taken: datetime
    given_back: datetime
    outcome: str


@dataclass(frozen=True)
class Recorded:
    """What the history database holds after the crowd."""

    runs: list[Run]
    holds: dict[str, list[Hold]]
    """Per key, every run's hold of it, in the order taken."""
    work: dict[int, list[tuple[datetime, datetime]]]
    """Per run, when each of its other steps began and ended."""
    batches: Counter[str | None]
    """Batch jobs recorded per key."""
    versions: list[str]
    leases: int


def _recorded(url: str) -> Recorded:
    engine = create_engine(url)
    try:
        with Session(engine) as session:
            runs = list(session.scalars(select(Run)))
            holds: dict[str, list[Hold]] = defaultdict(list)
            work: dict[int, list[tuple[datetime, datetime]]] = defaultdict(list)
            for step in session.scalars(select(Step)):
                ended = step.started_at + timedelta(seconds=step.duration_s)
                if step.name == HOLD_KEY_STEP:
                    key = str(step.detail)
                    holds[key].append(Hold(key, step.run_id, step.started_at, ended, step.outcome))
                else:
                    work[step.run_id].append((step.started_at, ended))
            batches = Counter(
                session.scalars(select(RemoteJob.idempotency_key).where(RemoteJob.kind == "batch"))
            )
            versions = list(session.scalars(text("SELECT version_num FROM alembic_version")))
            leases = session.scalar(select(func.count()).select_from(KeyLease)) or 0
    finally:
        engine.dispose()
    ordered = {key: sorted(spans, key=lambda hold: hold.taken) for key, spans in holds.items()}
    return Recorded(runs, ordered, work, batches, versions, leases)


def _assert_one_holder_at_a_time(recorded: Recorded) -> None:
    """Every hold of a key was given back (none was taken over: every process lived) and the holds of a key
    follow each other. A run that learns the key of its work once it has read its input holds its first key,
    then the work's (taking the second before it gives the first back), so it never works without one: each
    run's steps lie inside its holds, and its recorded key is the last it held."""
    by_run: dict[int, list[Hold]] = defaultdict(list)
    for key, holds in recorded.holds.items():
        assert [hold.outcome for hold in holds] == ["ok"] * len(holds), (key, holds)
        for held, following in itertools.pairwise(holds):
            assert held.given_back <= following.taken, (key, held, following)
        for hold in holds:
            by_run[hold.run_id].append(hold)
    for run in recorded.runs:
        spans = sorted(by_run.pop(run.id, []), key=lambda hold: hold.taken)
        if not run.idempotency_key:
            assert not spans, (run.id, spans)
            continue
        assert spans and spans[-1].key == run.idempotency_key, (run.id, run.idempotency_key, spans)
        for held, following in itertools.pairwise(spans):
            assert following.taken <= held.given_back, (run.id, held, following)
        whole = Hold(run.idempotency_key, run.id, spans[0].taken, spans[-1].given_back, "ok")
        _assert_inside(whole, recorded.work[run.id])
    assert not by_run, by_run
    assert recorded.leases == 0


def _assert_inside(hold: Hold, work: list[tuple[datetime, datetime]]) -> None:
    # A step's start is its end less its duration (wall and monotonic clocks), hence the slack.
    for began, ended in work:
        assert hold.taken - CLOCK_SLACK <= began and ended <= hold.given_back + CLOCK_SLACK, (
            hold,
            began,
            ended,
        )


def _crowd_on(
    database: str, url: str | None, root: Path, sandbox: ServedSandbox, prefect: PrefectServer
) -> None:
    sandbox.reset()
    extra = {"POSTFLOWS_DATABASE_URL": url} if url else {}
    workspace = CliWorkspace(root, sandbox, prefect, extra_env=extra)
    url = url or f"sqlite:///{workspace.history_db}"
    assert not workspace.history_db.exists()
    commands = _crowd(root)

    began, cpu = time.monotonic(), _children_cpu_s()
    finished = _start_together(workspace, commands)
    wall, cpu = time.monotonic() - began, _children_cpu_s() - cpu

    for run in finished:
        for stream in (run.result.stdout, run.result.stderr):
            assert not TROUBLE.search(stream), f"{run.command.args()}:\n{stream}"
        _assert_every_row_accounted_for(run)

    recorded = _recorded(url)
    runs = recorded.runs
    assert sorted(run.summary["run_id"] for run in finished) == sorted(row.id for row in runs)  # each once
    assert all(row.state == "COMPLETED" for row in runs), [(row.id, row.state, row.error) for row in runs]
    assert len({row.flow_run_id for row in runs}) == PROCESSES

    # Each key is submitted once: one upload, one runbatch, one batch job recorded.
    batch_keys = {run.summary["idempotency_key"] for run in finished if run.command.flow == "address-batch"}
    assert len(batch_keys) == BATCH_KEYS
    assert sandbox.count("uploadfile") == sandbox.count("runbatch") == BATCH_KEYS
    assert recorded.batches == Counter(dict.fromkeys(batch_keys, 1))

    _assert_one_holder_at_a_time(recorded)
    assert recorded.versions == [HEAD]  # the schema was created once, at the newest version
    holds = sum(len(spans) for spans in recorded.holds.values())
    CONCURRENCY_FIGURES[database] = (
        f"{PROCESSES} processes at once, {len(runs)} runs recorded once each, {BATCH_KEYS} keys submitted "
        f"once, {holds} key holds without overlap; wall {wall:.1f} s, {cpu:.0f} CPU-s in the processes"
    )


def test_twenty_processes_at_once_on_sqlite(
    tmp_path: Path, sandbox: ServedSandbox, prefect_server: PrefectServer
) -> None:
    _crowd_on("sqlite", None, tmp_path, sandbox, prefect_server)


@pytest.mark.postgres
def test_twenty_processes_at_once_on_postgresql(
    tmp_path: Path, sandbox: ServedSandbox, prefect_server: PrefectServer
) -> None:
    with fresh_prefect_database() as url:  # a throwaway database on the test server, whatever its name says
        if url is None:
            pytest.fail("POSTFLOWS_TEST_POSTGRES_URL is not set: run through scripts/with-postgres.sh", False)
        _crowd_on("postgresql", url, tmp_path, sandbox, prefect_server)
