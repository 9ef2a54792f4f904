"""A service that answers HTTP 400 quoting the configured password (``invalid login … password …``) leaves it
nowhere: not in the error, the command's output, the run history, the log records, nor the Prefect server's
logs and state messages of the run."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from uuid import UUID

import httpx
import pytest
from typer.testing import CliRunner

import runtime.wiring
from flows.address_batch import address_batch
from postflows.cli import app
from tests.flows.calls import call
from tests.secret_scan import Secret, SecretScan, basic_authorization

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
USER = "tech-user"
# Recognisable, with characters that encodings change, and short: no pattern takes it for a credential.
PASSWORD = "Echo-Pw/3+z:q@w 9f1c"


def _echo(request: httpx.Request) -> httpx.Response:
    """HTTP 400 quoting the credentials the request carried, as a careless service does."""
    scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
    user, _, password = (
        base64.b64decode(encoded).decode().partition(":") if scheme == "Basic" else ("", "", "")
    )
    text = f"invalid login {user} password {password} (Authorization: {scheme} {encoded})"
    return httpx.Response(400, text=text, request=request)


@pytest.fixture
def echoing_service(flow_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real address service configured with :data:`PASSWORD`, reached through :func:`_echo`."""
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_URL", "https://addresses.example.test/REST/v1")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_USER", USER)
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_PASSWORD", PASSWORD)
    monkeypatch.setenv("POSTFLOWS_HTTP_MAX_ATTEMPTS", "1")
    transport = httpx.MockTransport(_echo)
    client = partial(runtime.wiring.address_service_client, transport=transport)
    monkeypatch.setattr(runtime.wiring, "address_service_client", client)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(logging.Formatter("%(name)s %(message)s").format(record))


@pytest.fixture
def log_records() -> Iterator[_Records]:
    """Every record of the postflows and Prefect loggers, formatted (traceback included)."""
    records = _Records()
    loggers = [logging.getLogger(name) for name in ("postflows", "prefect", "prefect.flow_runs")]
    for logger in loggers:
        logger.addHandler(records)
    yield records
    for logger in loggers:
        logger.removeHandler(records)


def _scan() -> SecretScan:
    return SecretScan(
        [
            Secret("address-service password", PASSWORD),
            Secret("Basic credentials", basic_authorization(USER, PASSWORD).split()[1]),
        ]
    )


async def _prefect_texts(flow_run_id: UUID) -> list[str]:
    """The run's log lines and the state messages of the run and its task runs, from the Prefect server."""
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogHandler

    await APILogHandler.aflush()
    async with get_client() as client:
        logs = await client.read_logs(
            log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id]))
        )
        states = await client.read_flow_run_states(flow_run_id)
        task_runs = await client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
        )
    texts = [log.message for log in logs] + [state.message or "" for state in states]
    texts += [task_run.state.message or "" for task_run in task_runs if task_run.state is not None]
    assert logs and states, "the run left no logs or states to look at"
    return texts


async def test_an_echoed_password_is_nowhere_in_what_a_failed_run_leaves(
    echoing_service: None, flow_env: Path, tmp_path: Path, log_records: _Records
) -> None:
    state = await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", return_state=True)
    assert state.is_failed()
    with pytest.raises(Exception) as failed:  # noqa: PT011 - whatever the flow raised
        await state.result()
    error = str(failed.value)
    assert "HTTP 400" in error and "invalid login tech-user password [redacted]" in error, error

    scan = _scan()
    scan.scan("error", "the flow's error", error)
    scan.scan("Prefect state", "the flow run's state message", state.message or "")
    scan.scan_file("run history", flow_env / "history.db")
    for text in await _prefect_texts(state.state_details.flow_run_id):
        scan.scan("Prefect server", "logs and state messages", text)
    assert log_records.lines, "no log record was captured"
    scan.scan("log records", "postflows and Prefect loggers", "\n".join(log_records.lines))
    assert scan.read["run history"].bytes > 0
    assert not scan.findings, "\n".join(map(str, scan.findings))


def test_an_echoed_password_is_not_in_the_commands_output_nor_its_history(
    echoing_service: None, flow_env: Path, tmp_path: Path
) -> None:
    result = CliRunner().invoke(app, ["address-batch", str(EXAMPLE), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    (reason,) = [line for line in result.output.splitlines() if line.startswith("failed:")]
    assert "HTTP 400" in reason and "[redacted]" in reason, reason
    scan = _scan()
    scan.scan("process output", "stdout and stderr", result.output)
    scan.scan_file("run history", flow_env / "history.db")
    listing = CliRunner().invoke(app, ["history", "1"])
    assert listing.exit_code == 0, listing.output
    scan.scan("process output", "postflows history 1", listing.output)
    assert not scan.findings, "\n".join(map(str, scan.findings))
