"""The fault matrix, run and written to docs/reliability.md: every flow × every remote step it takes × every
fault that applies to that step. Each cell must end completed or failed with a typed error naming the cause,
submit nothing more often than the clean run, leave no remote file the history does not record, and leave a
history row that says what happened.

``MATRIX_ONLY=<case label>[,<label>…]`` runs only those cases and prints their rows instead of writing the
file (for working on one flow).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest
from prefect import flow
from prefect.settings import (
    PREFECT_API_TLS_INSECURE_SKIP_VERIFY,
    PREFECT_LOGGING_TO_API_ENABLED,
    temporary_settings,
)

import history
from connectors.ratelimit import WindowGate
from connectors.retry import RetryPolicy
from deployments.catalog import CATALOG, FILE_ARRIVED_DEPLOYMENT
from runtime import api_limits, wiring
from runtime.settings import Settings, get_settings
from runtime.task_runners import fan_out_task_runner
from runtime.wiring import address_service as address_wiring
from runtime.wiring import embedded
from runtime.wiring import services as wiring_services
from sandbox.config import SandboxConfig
from sandbox.inprocess import SandboxTransport
from tests.reliability.cases import CASES, JOB_SECONDS, ORDER_STATUSES, FlowCase
from tests.reliability.faults import FAULTS
from tests.reliability.matrix import Matrix, Observation
from tests.reliability.steps import RecordingTransport, Step
from tests.reliability.verdicts import files_left_text, outcome, problems, submissions

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
CLEAN = "none (clean run)"
HEADER = """# Reliability: the fault matrix

Written by `tests/reliability/test_fault_matrix.py`; do not edit it by hand. Regenerate it with `make test`,
or alone with `.venv/bin/python -m pytest tests/reliability`, and commit the result: the test fails while
this file differs from what the run observed. Nothing in it depends on timing or ids, so a run on another
machine writes the same file.

How it is made: every flow of the deployment catalog runs once against the embedded sandbox without faults
(a variant, such as the billed address batch, only adds the steps its flow had not taken yet). Each remote
step that run took (API, method, endpoint with ids written `*`) then gets every fault that applies to it,
injected by the sandbox at the first request of that step, each cell a run of its own on an emptied sandbox
and an emptied run history. The flows' functions run inside one Prefect flow run per flow, so their tasks
are real task runs, retried as in production (two task retries here, five by default); HTTP and task
retries wait nothing, a per-minute limit waits on a simulated clock.

Which faults apply: HTTP 500/502/503, a dropped connection (nothing processed), a read timeout (processed,
the answer never arrives) and HTTP 429 to every step; the address service's Status 106 to each of its
steps, Status 501 to uploads; an expired token (every issued access token expires just before the request)
to the OAuth APIs; an HTTP 200 carrying an error (address service: Status 201; newspaper API: message code
0000) to the APIs that answer that way; a truncated download (a document shorter than its `size`, a stream
that breaks off), corrupt base64 and a damaged ZIP where the step's clean answer carried such a file; "job
fails" and "job is cancelled" (TokenStatus 5 or 6, FAILED or CANCELED for a newspaper order or purchase) to
the POST that starts the job the flow waits for; "status not in the spec" (every answer of a status check
says 9 or ON_HOLD) to status checks.

Columns: **outcome** is `completed` (with the order's final status where the flow reports one; a row-by-row
flow may keep rows with their error), or `failed:` with the type of the error the run raised and the cause
its message names. **submissions** counts the requests of the flow's submitting steps (POSTs that change
something: uploads, runbatch, billed individual address queries, orders, purchases, statistics, notice
e-mail, pickup registrations, address labels, return orders) that the service accepted, whether or not the
answer reached the client; the clean run's figure is the flow's first row. **files left** counts the
remote files the address web service still holds after the run and how the run history records them: by
token, so `postflows cleanup` deletes them, or as uncertain when the answer that would have carried the
token was lost.

The test fails when a cell ends in an untyped error or one that does not name its cause, when a submission
is accepted more often than in the clean run, when a remote file is left that the history does not record,
or when the history row of the run disagrees with how it ended.
"""


def test_every_deployment_of_the_catalog_is_in_the_matrix() -> None:
    flows = {case.flow for case in CASES}
    missing = [
        spec.name for spec in CATALOG if spec.name != FILE_ARRIVED_DEPLOYMENT and spec.name not in flows
    ]
    assert missing == []


class SimulatedTime:
    """Wall-clock seconds that pass only while the window gate waits (a per-minute limit costs no minute)."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def _no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries as production makes them, without their waits."""
    monkeypatch.setenv("POSTFLOWS_TASK_RETRIES", "2")
    monkeypatch.setenv("POSTFLOWS_TASK_RETRY_DELAY_S", "0")
    monkeypatch.setenv("POSTFLOWS_TASK_RETRY_JITTER", "0")

    def no_wait_retry(settings: Settings) -> RetryPolicy:
        return RetryPolicy(
            max_attempts=settings.http_max_attempts,
            base_delay=0.0,
            max_delay=0.0,
            rate_limited_not_processed=settings.http_429_not_processed,
        )

    monkeypatch.setattr(wiring_services, "retry_policy", no_wait_retry)  # every client's options

    async def no_rate_limit(name: str) -> bool:
        return False  # the test server has none: the answer it would give, without asking per client

    monkeypatch.setattr(api_limits, "_read_limit", no_rate_limit)
    clock = SimulatedTime()
    endpoint = wiring.address_service_endpoint(get_settings())
    monkeypatch.setitem(address_wiring._window_gates, endpoint, WindowGate(clock=clock, sleep=clock.sleep))


def _row(observation: Observation, steps: list[Step]) -> str:
    step = observation.step.label if observation.step else "—"
    fault = observation.fault.label if observation.fault else CLEAN
    cells = [observation.case, f"`{step}`", fault, outcome(observation)]
    cells += [str(submissions(observation, steps)), files_left_text(observation)]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _document(rows: list[str], cells: int) -> str:
    table = ["| flow | step | fault | outcome | submissions | files left |", "|---|---|---|---|---|---|"]
    flows = len({case.flow for case in CASES})
    size = f"\n{cells} cells (flow, step, fault) over {len(CASES)} cases of {flows} flows"
    size += ", and a clean run of each case.\n\n"
    return HEADER + size + "\n".join(table + rows) + "\n"


async def _run_case(
    matrix: Matrix, case: FlowCase, covered: set[tuple[str, str, str]]
) -> tuple[list[str], list[str]]:
    """The clean run and every cell of ``case``, inside one Prefect flow run (the flow's tasks run as its
    task runs): the table rows and the problems found. ``covered``: the steps earlier cases of the flow
    took, left out of a variant's cells (and added to)."""

    @flow(
        name="fault-matrix",
        flow_run_name=f"fault-matrix {case.label}",
        task_runner=fan_out_task_runner(),
        validate_parameters=False,
        log_prints=False,
    )
    async def cells() -> tuple[list[str], list[str]]:
        clean, steps = await matrix.clean_run(case)
        assert clean.error is None, f"{case.label} fails without faults: {clean.error!r}"
        rows, found = [_row(clean, steps)], []
        new = [step for step in steps if not (case.new_steps_only and step.key in covered)]
        covered.update(step.key for step in steps)
        for step in new:
            for fault in FAULTS:
                if not fault.applies(step):
                    continue
                observation = await matrix.observe(case, step, fault)
                rows.append(_row(observation, steps))
                where = f"{case.label} | {step.label} | {fault.label}"
                found += [f"{where}: {problem}" for problem in problems(observation, steps, clean)]
        return rows, found

    return await cells()


@pytest.mark.long
@pytest.mark.timeout(1800)
async def test_fault_matrix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The test server listens on loopback without TLS: no CA certificates are loaded for each of its
    # clients (Prefect builds one for every synchronous task run of an asynchronous flow).
    no_certificates = tmp_path / "no-certificates"
    no_certificates.mkdir()
    monkeypatch.setenv("SSL_CERT_FILE", str(no_certificates / "none.pem"))
    monkeypatch.setenv("SSL_CERT_DIR", str(no_certificates))
    quiet = {PREFECT_API_TLS_INSECURE_SKIP_VERIFY: True, PREFECT_LOGGING_TO_API_ENABLED: False}
    prefect_logger = logging.getLogger("prefect")
    level = prefect_logger.level
    prefect_logger.setLevel(logging.WARNING)
    try:
        with temporary_settings(quiet):
            await _matrix(monkeypatch, tmp_path)
    finally:
        prefect_logger.setLevel(level)


async def _matrix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    database = tmp_path / "history.db"
    monkeypatch.setenv("POSTFLOWS_DATABASE_URL", f"sqlite:///{database}")
    _no_waits(monkeypatch)
    sandbox = SandboxTransport(SandboxConfig(job_seconds=JOB_SECONDS, order_statuses=ORDER_STATUSES))
    transport = RecordingTransport(sandbox)
    monkeypatch.setattr(embedded, "sandbox_transport", lambda settings: transport)
    matrix = Matrix(tmp_path / "cells", sandbox, transport, f"sqlite:///{database}")
    matrix.use_data_dir(lambda path: monkeypatch.setenv("POSTFLOWS_DATA_DIR", str(path)))

    rows: list[str] = []
    found: list[str] = []
    cells = 0
    started, cpu = time.monotonic(), time.process_time()
    only = os.environ.get("MATRIX_ONLY")
    covered: dict[str, set[tuple[str, str, str]]] = {}
    for case in CASES:
        if only and case.label not in only.split(","):
            continue
        case_rows, case_found = await _run_case(matrix, case, covered.setdefault(case.flow, set()))
        rows += case_rows
        found += case_found
        cells += len(case_rows) - 1
    history.dispose_engines()
    took = f"{time.monotonic() - started:.0f} s, {time.process_time() - cpu:.0f} s CPU in this process"
    print(f"fault matrix: {cells} cells in {took}")  # noqa: T201

    if only:
        print("\n".join(rows))  # noqa: T201
        assert found == [], "\n".join(found)
        return
    text = _document(rows, cells)
    before = DOCUMENT.read_text(encoding="utf-8") if DOCUMENT.is_file() else None
    DOCUMENT.write_text(text, encoding="utf-8")
    assert found == [], "\n".join(found)
    assert before == text, f"{DOCUMENT} changed: review the new matrix and commit it"
