"""Crash-resume: a ``postflows`` process killed with SIGKILL at each remote step of each flow, then the same
command run again, against a served sandbox of its own.

The sandbox holds the process at a known point: a ``hold`` fault keeps the request of the next step waiting
(killed meanwhile, that request is never processed: the process died just before sending it), a
``late_answer`` fault does the work at once and keeps the answer back (killed meanwhile, the process never
learns what the service did). Every crash point asserts what a user relies on: nothing is submitted twice
without ``--resubmit`` (a run that cannot know the outcome refuses and names it; one whose history knows the
job resumes that very job, proved by its id), the work completes where the service allows it, and no file is
left on the address web service (``/_sandbox/stored``).

The crash points are independent, so they are played side by side (one thread each) by a module fixture;
each parametrised test then reports its own crash point.
"""

from __future__ import annotations

import fnmatch
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tasks.address_service.query import SENT_UNANSWERED
from tests.e2e.conftest import (
    EXAMPLE,
    REPO,
    SUMMARY_LINES,
    CliWorkspace,
    PrefectServer,
    ServedSandbox,
    free_port,
    json_block,
    served_sandbox,
    stop,
)

# The crash points run side by side in the first test's setup; the machine may be busy.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

KEY = "crash-resume"
HOLD_S = 120
"""How long a held request or a late answer waits: far longer than any crash point needs to kill."""

EXAMPLES = REPO / "examples"
SERVICE_ENV = {
    # Some forty runs share the server at once: their log lines stay in their own output.
    "PREFECT_LOGGING_TO_API_ENABLED": "false",
    "POSTFLOWS_NEWSPAPER_CLIENT_ID": "sandbox-client",
    "POSTFLOWS_NEWSPAPER_CLIENT_SECRET": "sandbox-secret",
    "POSTFLOWS_COMMERCE_CLIENT_ID": "sandbox-commerce-client",
    "POSTFLOWS_COMMERCE_CLIENT_SECRET": "sandbox-commerce-secret",
}


def _recorded(history_db: Path, query: str) -> list[tuple[Any, ...]]:
    """Rows of the history database as written so far; empty while it does not exist yet."""
    if not history_db.exists():
        return []
    try:
        with sqlite3.connect(f"file:{history_db}?mode=ro", uri=True, timeout=5) as db:
            return db.execute(query).fetchall()
    except sqlite3.OperationalError:  # not migrated yet
        return []


@dataclass
class Crash:
    """One crash point: its own served sandbox and CLI workspace."""

    sandbox: ServedSandbox
    workspace: CliWorkspace

    @property
    def out(self) -> str:
        return str(self.workspace.out_dir)

    def fault(self, api: str, endpoint: str, kind: str = "hold", **rule: Any) -> None:
        """Replace the sandbox's fault plan with one rule (held or answered late for :data:`HOLD_S`)."""
        self.sandbox.inject([{"api": api, "endpoint": endpoint, "kind": kind, "value": HOLD_S, **rule}])

    def count(self, api: str, endpoint: str, method: str | None = None) -> int:
        """Requests that reached the sandbox for ``api`` and an endpoint matching the glob ``endpoint``."""
        return sum(
            entry["count"]
            for entry in self.sandbox.requests()
            if entry["api"] == api
            and fnmatch.fnmatchcase(entry["endpoint"], endpoint)
            and (method is None or entry["method"] == method)
        )

    def stored(self, what: str) -> list[str]:
        """What the sandbox holds now (``address_files``, ``newspaper_orders``, ...)."""
        return self.sandbox.stored()[what]

    def recorded(self, query: str) -> list[tuple[Any, ...]]:
        return _recorded(self.workspace.history_db, query)

    def job_ids(self, kind: str) -> list[str]:
        """The remote ids of the jobs of ``kind`` in the run history, oldest first."""
        return [
            str(row[0]) for row in self.recorded(f"SELECT remote_id FROM remote_jobs WHERE kind = '{kind}'")
        ]

    def job_states(self, kind: str) -> list[str]:
        return [str(row[0]) for row in self.recorded(f"SELECT status FROM remote_jobs WHERE kind = '{kind}'")]

    def killed(self, args: tuple[str, ...], until: Callable[[], bool], what: str) -> None:
        """Start ``postflows <args>``, wait until ``until()`` says it reached the crash point, SIGKILL it; the
        fault plan is cleared afterwards."""
        process = self.workspace.start(*args)
        try:
            deadline = time.monotonic() + 180
            while not until():
                assert time.monotonic() < deadline, f"{what}: not reached within 180 s"
                try:  # drains its output meanwhile, so a full pipe never stops it short of the point
                    _, stderr = process.communicate(timeout=0.05)
                except subprocess.TimeoutExpired:
                    continue
                raise AssertionError(f"{what}: the command ended ({process.returncode}) first:\n{stderr}")
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        finally:
            stop(process)  # and anything it started
            process.communicate()
        assert process.returncode == -signal.SIGKILL
        self.sandbox.inject([])

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.workspace.run(*args, timeout=240)

    def completed(self, result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
        """The summary of a run that must have succeeded."""
        assert result.returncode == 0, result.stdout + result.stderr
        return json_block(result.stdout)

    def refused(self, result: subprocess.CompletedProcess[str], what: str) -> None:
        """A run that must have stopped because an earlier submission's outcome is unknown (exit 2: the user
        has to check and confirm with --resubmit)."""
        assert result.returncode == 2, result.stdout + result.stderr
        assert "--resubmit" in result.stderr and what in result.stderr, result.stderr

    def no_file_left(self) -> None:
        """Nothing is left on the address web service, and the history knows every file it made is gone. A
        file whose creation never answered (its process was killed meanwhile) has no token to delete: the
        history keeps its marker (``pending:...``), and the service shows whether it exists."""
        assert self.stored("address_files") == []
        undeleted = self.recorded(
            "SELECT kind, remote_id FROM remote_jobs WHERE kind LIKE '%-file' AND deleted_at IS NULL "
            "AND remote_id NOT LIKE 'pending:%'"
        )
        assert undeleted == []


Scenario = Callable[[Crash], None]


@dataclass(frozen=True)
class CrashPoint:
    scenario: Scenario
    job_seconds: float


CRASH_POINTS: dict[str, CrashPoint] = {}


def crash_point(name: str, *, job_seconds: float = 2.0) -> Callable[[Scenario], Scenario]:
    def register(scenario: Scenario) -> Scenario:
        CRASH_POINTS[name] = CrashPoint(scenario, job_seconds)
        return scenario

    return register


# --- address-batch: upload → createfile → runbatch → poll → download → delete --------------------------


def _batch(crash: Crash, *extra: str) -> tuple[str, ...]:
    return ("address-batch", str(EXAMPLE), "--out", crash.out, "--key", KEY, *extra)


def _batch_completed(crash: Crash, result: subprocess.CompletedProcess[str]) -> None:
    summary = crash.completed(result)
    assert summary["idempotency_key"] == KEY
    assert summary["result_rows"] == summary["accepted_rows"] > 0
    crash.no_file_left()


@crash_point("batch-after-upload")
def _batch_after_upload(crash: Crash) -> None:
    crash.fault("address", "createfile")
    crash.killed(_batch(crash), lambda: crash.count("address", "createfile") == 1, "createfile")
    assert len(crash.job_ids("upload-file")) == 1 and crash.job_ids("batch") == []

    _batch_completed(crash, crash.run(*_batch(crash)))
    assert crash.count("address", "runbatch") == 1
    assert len(crash.stored("address_jobs")) == 1
    assert crash.count("address", "uploadfile") == 2  # the first upload was deleted, not used


@crash_point("batch-runbatch-not-sent")
def _batch_runbatch_not_sent(crash: Crash) -> None:
    crash.fault("address", "runbatch")
    crash.killed(_batch(crash), lambda: crash.count("address", "runbatch") == 1, "runbatch")
    assert crash.job_states("batch") == ["PENDING"]

    crash.refused(crash.run(*_batch(crash)), "address batch")
    assert crash.count("address", "runbatch") == 1
    assert len(crash.stored("address_files")) == 2  # kept: their batch may exist

    _batch_completed(crash, crash.run(*_batch(crash, "--resubmit")))
    assert crash.count("address", "runbatch") == 2
    assert len(crash.stored("address_jobs")) == 1  # the held runbatch never reached the service


@crash_point("batch-runbatch-answer-lost")
def _batch_runbatch_answer_lost(crash: Crash) -> None:
    crash.fault("address", "runbatch", "late_answer")
    crash.killed(_batch(crash), lambda: len(crash.stored("address_jobs")) == 1, "runbatch")
    assert crash.job_states("batch") == ["PENDING"]

    crash.refused(crash.run(*_batch(crash)), "address batch")
    assert crash.count("address", "runbatch") == 1
    assert crash.job_states("batch") == ["UNCERTAIN"]
    # The clean-up keeps the files of a batch that may exist; the user finds the batch ran, does not
    # resubmit, and removes its files with a forced clean-up.
    kept = crash.run("cleanup", "--older-than", "0")
    assert kept.returncode == 0, kept.stderr
    assert len(crash.stored("address_files")) == 2
    cleanup = crash.run("cleanup", "--older-than", "0", "--force")
    assert cleanup.returncode == 0, cleanup.stderr
    crash.no_file_left()
    assert crash.count("address", "runbatch") == 1


def _resumes_the_recorded_batch(crash: Crash, *, polls: bool = True) -> None:
    """The re-run finishes the killed run's batch: it polls that very job when the history did not record
    its end yet (``polls``), and asks nothing of a batch recorded as done."""
    (token,) = crash.job_ids("batch")
    polled_before = crash.count("address", f"checkbatchstatus/{token}")
    _batch_completed(crash, crash.run(*_batch(crash)))
    assert crash.job_ids("batch") == [token]
    assert crash.stored("address_jobs") == [token]  # the one job the service ever started
    assert crash.count("address", "runbatch") == 1
    polled_after = crash.count("address", f"checkbatchstatus/{token}")
    assert polled_after > polled_before if polls else polled_after == polled_before
    runs = crash.recorded("SELECT state, idempotency_key, error FROM runs ORDER BY id")
    # The killed run never recorded its end; the run that resumed its job closed it as abandoned.
    assert [(state, key) for state, key, _ in runs] == [("FAILED", KEY), ("COMPLETED", KEY)]
    assert runs[0][2].startswith("abandoned; its work was resumed by run")


@crash_point("batch-after-runbatch", job_seconds=3)
def _batch_after_runbatch(crash: Crash) -> None:
    crash.fault("address", "checkbatchstatus/*")
    crash.killed(_batch(crash), lambda: crash.count("address", "checkbatchstatus/*") == 1, "first poll")
    assert crash.job_states("batch") == ["SUBMITTED"]
    _resumes_the_recorded_batch(crash)


# The first status check must find the job running however slowly a busy machine reaches it (five seconds
# after runbatch have been seen); the re-run, its own start included, waits out the rest.
@crash_point("batch-mid-poll", job_seconds=15)
def _batch_mid_poll(crash: Crash) -> None:
    crash.fault("address", "checkbatchstatus/*", after=1)
    crash.killed(_batch(crash), lambda: crash.count("address", "checkbatchstatus/*") == 2, "second poll")
    assert crash.job_states("batch") == ["RUNNING"]
    _resumes_the_recorded_batch(crash)


@crash_point("batch-after-download")
def _batch_after_download(crash: Crash) -> None:
    crash.fault("address", "deletefile/*")
    crash.killed(_batch(crash), lambda: crash.count("address", "deletefile/*") >= 1, "deletefile")
    assert crash.job_states("batch") == ["COMPLETED"]
    _resumes_the_recorded_batch(crash, polls=False)
    assert crash.count("address", "downloadfile/*") == 1  # the recorded download was used


# --- newspaper-order, address-purchase, newspaper-statistics: one POST each ----------------------------


@dataclass(frozen=True)
class Post:
    """A flow built around one POST: its command, the POST, what it creates, and the request after it."""

    command: tuple[str, ...]
    endpoint: str
    stored: str
    what: str
    kind: str
    next_endpoint: str | None = None

    def args(self, crash: Crash, *extra: str) -> tuple[str, ...]:
        return (*self.command, "--out", crash.out, *extra)

    def posts(self, crash: Crash) -> int:
        return crash.count("newspaper", self.endpoint, "POST")


ORDER = Post(
    ("newspaper-order", str(EXAMPLES / "newspaper-order.json"), "--poll-interval", "0.5"),
    "*orders/standard",
    "newspaper_orders",
    "standard order",
    "order",
    "*orders/*/delivery-note",
)
PURCHASE = Post(
    (
        "address-purchase",
        str(EXAMPLES / "purchase-addresses.csv"),
        "--params",
        str(EXAMPLES / "purchase.json"),
        "--poll-interval",
        "0.5",
    ),
    "*purchases",
    "newspaper_purchases",
    "purchase",
    "purchase",
    "*purchases/*/progress",
)
STATISTICS = Post(
    ("newspaper-statistics", str(EXAMPLES / "statistics.csv")),
    "*standard/statistics",
    "statistics_uploads",
    "statistics",
    "statistics",
)


def _post_not_sent(post: Post) -> Scenario:
    """Killed just before the POST reached the service: the history cannot know, so the next run refuses;
    the user checks, finds nothing and resubmits: exactly one exists."""

    def scenario(crash: Crash) -> None:
        crash.fault("newspaper", post.endpoint, method="POST")
        crash.killed(post.args(crash), lambda: post.posts(crash) == 1, f"{post.kind} POST")
        assert crash.job_states(post.kind) == ["PENDING"]

        crash.refused(crash.run(*post.args(crash)), post.what)
        assert post.posts(crash) == 1 and crash.stored(post.stored) == []

        crash.completed(crash.run(*post.args(crash, "--resubmit")))
        assert len(crash.stored(post.stored)) == 1

    return scenario


def _post_answer_lost(post: Post) -> Scenario:
    """Killed after the service acted on the POST, before its answer arrived: the next run refuses."""

    def scenario(crash: Crash) -> None:
        crash.fault("newspaper", post.endpoint, "late_answer", method="POST")
        crash.killed(post.args(crash), lambda: len(crash.stored(post.stored)) == 1, f"{post.kind} POST")
        assert crash.job_states(post.kind) == ["PENDING"]

        crash.refused(crash.run(*post.args(crash)), post.what)
        assert post.posts(crash) == 1 and len(crash.stored(post.stored)) == 1
        assert crash.job_states(post.kind) == ["UNCERTAIN"]

    return scenario


def _post_answered(post: Post) -> Scenario:
    """Killed after the POST's answer was recorded: the next run resumes that very order or purchase."""
    assert post.next_endpoint is not None

    def scenario(crash: Crash) -> None:
        crash.fault("newspaper", str(post.next_endpoint), method="GET")
        crash.killed(
            post.args(crash), lambda: crash.count("newspaper", str(post.next_endpoint)) >= 1, "next request"
        )
        (remote_id,) = crash.job_ids(post.kind)
        assert crash.job_states(post.kind) == ["SUBMITTED"]

        summary = crash.completed(crash.run(*post.args(crash)))
        assert summary["resumed"] is True
        assert str(summary[f"{post.kind}_id"]) == remote_id
        assert crash.stored(post.stored) == [remote_id]
        assert post.posts(crash) == 1

    return scenario


for _post in (ORDER, PURCHASE, STATISTICS):
    crash_point(f"{_post.command[0]}-not-sent", job_seconds=1)(_post_not_sent(_post))
    crash_point(f"{_post.command[0]}-answer-lost", job_seconds=1)(_post_answer_lost(_post))
    if _post.next_endpoint is not None:
        crash_point(f"{_post.command[0]}-answered", job_seconds=1)(_post_answered(_post))


# --- row fan-outs: every row one read request, answers kept in a checkpoint ----------------------------

FAN_OUT_ROWS = 40
ANSWERED_BEFORE_KILL = 16
FAN_OUT_CONCURRENCY = 4
CHECKPOINT_SETTLE_S = 12
"""How long a fan-out may take to put its answers on disk once its requests stall (it keeps them in
memory for at most a few seconds)."""


def _many_rows(example: Path, rows: int, target: Path) -> Path:
    """``example`` with its data rows repeated up to ``rows`` rows, each with an id of its own."""
    header, *lines = example.read_text(encoding="utf-8").splitlines()
    repeated = [f"{9000 + n}{lines[n % len(lines)][lines[n % len(lines)].index(';') :]}" for n in range(rows)]
    target.write_text("\n".join([header, *repeated]) + "\n", encoding="utf-8")
    return target


def _kill_mid_fan_out(crash: Crash, command: tuple[str, ...], api: str, endpoint: str) -> None:
    """Let :data:`ANSWERED_BEFORE_KILL` rows be answered, hold the rest, and kill the process once the held
    requests arrived and every answer is in its checkpoint on disk (or had time to be: the checkpoint writes
    the answers in parts, a few seconds apart)."""
    crash.fault(api, endpoint, after=ANSWERED_BEFORE_KILL, times=None)
    checkpoint = crash.workspace.data_dir / "resume"
    stalled: list[float] = []

    def kept() -> int:  # outcomes kept; an address query's claim before it is sent is none
        return sum(
            1
            for part in checkpoint.rglob("part-*.jsonl")
            for line in part.read_text().splitlines()
            if line and SENT_UNANSWERED not in line
        )

    def answered_and_kept() -> bool:
        if not stalled:
            if crash.count(api, endpoint) < ANSWERED_BEFORE_KILL + FAN_OUT_CONCURRENCY:
                return False
            stalled.append(time.monotonic())
        return kept() >= ANSWERED_BEFORE_KILL or time.monotonic() - stalled[0] > CHECKPOINT_SETTLE_S

    crash.killed(command, answered_and_kept, "the held requests")
    assert kept() == ANSWERED_BEFORE_KILL, "the answers received before the stall were not all kept"


@crash_point("address-validation-fan-out")
def _validation_fan_out(crash: Crash) -> None:
    source = _many_rows(EXAMPLES / "commerce-addresses.csv", FAN_OUT_ROWS, crash.workspace.root / "in.csv")
    command = (
        "address-validation",
        str(source),
        "--out",
        crash.out,
        "--concurrency",
        str(FAN_OUT_CONCURRENCY),
    )
    endpoint = "*addresses/validation"
    _kill_mid_fan_out(crash, command, "commerce", endpoint)

    summary = crash.completed(crash.run(*command))
    accepted = summary["accepted_rows"]
    assert summary["input_rows"] == FAN_OUT_ROWS == accepted + summary["rejected_rows"]
    assert summary["failed"] == 0
    assert summary["validated"] + summary["refused"] + summary["not_found"] == accepted
    # The rows answered before the kill are taken from the checkpoint, not asked again.
    assert summary["resumed_rows"] == ANSWERED_BEFORE_KILL
    assert summary["requests_sent"] == accepted - ANSWERED_BEFORE_KILL
    assert (
        crash.count("commerce", endpoint)
        == ANSWERED_BEFORE_KILL + FAN_OUT_CONCURRENCY + accepted - ANSWERED_BEFORE_KILL
    )


@crash_point("address-query-fan-out")
def _query_fan_out(crash: Crash) -> None:
    source = _many_rows(EXAMPLE, FAN_OUT_ROWS, crash.workspace.root / "in.csv")
    command = ("address-query", str(source), "--out", crash.out, "--concurrency", str(FAN_OUT_CONCURRENCY))
    _kill_mid_fan_out(crash, command, "address", "runquery2")

    # Every query is billed: those answered before the kill are taken from the checkpoint, and those claimed
    # before the kill without a kept answer (the ones in flight among them) may have been billed: the next
    # run sends none of them, only the rest, and stops naming --resubmit.
    held = crash.run(*command)
    crash.refused(held, "address query")
    summary = json_block(held.stdout)
    accepted, uncertain = summary["accepted_rows"], summary["uncertain_rows"]
    assert summary["resumed_rows"] == ANSWERED_BEFORE_KILL
    assert FAN_OUT_CONCURRENCY <= uncertain <= accepted - ANSWERED_BEFORE_KILL
    assert summary["query_sends"] == accepted - ANSWERED_BEFORE_KILL - uncertain
    resubmitted = crash.completed(crash.run(*command, "--resubmit"))
    assert resubmitted["result_rows"] == accepted and resubmitted["failed_queries"] == 0
    assert resubmitted["resubmitted_rows"] == uncertain == resubmitted["query_sends"]
    sent = ANSWERED_BEFORE_KILL + FAN_OUT_CONCURRENCY + summary["query_sends"] + uncertain
    assert crash.count("address", "runquery2") == sent


# --- playing the crash points side by side -----------------------------------------------------------


def _play(name: str, root: Path, prefect: PrefectServer) -> float:
    """Play crash point ``name`` on a sandbox of its own; its wall time in seconds."""
    started = time.monotonic()
    point = CRASH_POINTS[name]
    with served_sandbox(root / "sandbox", job_seconds=point.job_seconds) as sandbox:
        env = {
            **SERVICE_ENV,
            "POSTFLOWS_NEWSPAPER_URL": f"{sandbox.origin}/newspaper",
            "POSTFLOWS_NEWSPAPER_TOKEN_URL": f"{sandbox.origin}/auth/OAuth/token",
            "POSTFLOWS_COMMERCE_URL": f"{sandbox.origin}/commerce",
            "POSTFLOWS_COMMERCE_AUTH_URL": f"{sandbox.origin}/auth",
            "POSTFLOWS_COMMERCE_USERINFO_URL": f"{sandbox.origin}/auth/userinfo",
            "POSTFLOWS_COMMERCE_REDIRECT_URI": f"http://127.0.0.1:{free_port()}/callback",
        }
        point.scenario(Crash(sandbox, CliWorkspace(root / "cli", sandbox, prefect, extra_env=env)))
    return time.monotonic() - started


@dataclass(frozen=True)
class Played:
    seconds: float | None
    error: BaseException | None


def _selected(request: pytest.FixtureRequest) -> list[str]:
    """The crash points of the tests selected in this session."""
    names = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if item.module is request.module and callspec is not None and "point" in callspec.params:
            names.append(str(callspec.params["point"]))
    return names


@pytest.fixture(scope="module")
def played(
    request: pytest.FixtureRequest, prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Played]]:
    """Every selected crash point, played side by side."""
    names = _selected(request)
    root = tmp_path_factory.mktemp("crash-resume")
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, len(names))) as pool:
        futures = {name: pool.submit(_play, name, root / name, prefect_server) for name in names}
    outcomes = {}
    for name, future in futures.items():
        error = future.exception()
        outcomes[name] = Played(None if error else future.result(), error)
    timed = {name: played.seconds for name, played in outcomes.items() if played.seconds is not None}
    if timed:
        slowest = max(timed, key=lambda name: timed[name])
        SUMMARY_LINES.append(
            f"crash-resume: {len(names)} crash point(s) side by side in {time.monotonic() - started:.0f} s "
            f"(slowest: {slowest}, {timed[slowest]:.0f} s)"
        )
    yield outcomes


@pytest.mark.parametrize("point", list(CRASH_POINTS))
def test_crash_resume(point: str, played: dict[str, Played]) -> None:
    outcome = played[point]
    if outcome.error is not None:
        raise outcome.error
