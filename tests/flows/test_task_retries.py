"""Prefect task retries of idempotent steps, read back from the Prefect server: an outage longer than the
HTTP retries is survived and shows AwaitingRetry; a refusal is not retried; a submission never is. A wait's
status looks are no task runs: the wait looks past an outage itself."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from connectors.errors import AuthFailed, HttpStatusError, ServerError
from flows.address_batch import address_batch
from flows.newspaper_order import newspaper_order
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.flows.test_newspaper_order import QUICK, order_body, write_order

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


@pytest.fixture
def task_retries(flow_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three quick task retries on top of two HTTP attempts (``flow_env``)."""
    monkeypatch.setenv("POSTFLOWS_TASK_RETRIES", "3")
    monkeypatch.setenv("POSTFLOWS_TASK_RETRY_DELAY_S", "0.05")
    monkeypatch.setenv("POSTFLOWS_TASK_RETRY_JITTER", "0")
    return flow_env


async def _task_runs(flow_run_id: UUID, name: str) -> list[tuple[int, list[str]]]:
    """(run count, state names in order) of each task run of ``name`` in the flow run, once the server has
    recorded each one's final state: task runs reach it as events, after the flow run has returned."""
    deadline = time.monotonic() + 30
    async with get_client() as client:
        while True:
            task_runs = [
                task_run
                for task_run in await client.read_task_runs(
                    flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
                )
                if task_run.name.rsplit("-", 1)[0] == name
            ]
            if task_runs and all(run.state is not None and run.state.is_final() for run in task_runs):
                break
            assert time.monotonic() < deadline, f"{name}: no final state recorded within 30 s: {task_runs}"
            await asyncio.sleep(0.1)
        found = []
        for task_run in task_runs:
            states = await client.read_task_run_states(task_run.id)
            ordered = sorted(states, key=lambda state: state.timestamp)
            found.append((task_run.run_count, [state.name for state in ordered]))
    return found


def _flow_run_id(state: Any) -> UUID:
    flow_run_id: UUID = state.state_details.flow_run_id
    return flow_run_id


async def test_a_status_outage_outlasting_the_http_retries_is_looked_past_by_the_wait(
    sandbox: Sandbox, task_retries: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A look is a plain call, not a task run: the wait is its one retry, and the log names each failed
    look; no task run is made per look."""
    sandbox.inject(api="address", endpoint="checkbatchstatus/*", kind="http_status", value=503, times=3)
    state = await call(
        address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", return_state=True, **FAST
    )
    assert state.is_completed(), state.message
    assert "its status could not be read" in caplog.text
    assert sandbox.transport.count("/checkbatchstatus") >= 4  # three answered 503, one after them
    assert sandbox.transport.count("/runbatch") == 1
    downloads = await _task_runs(_flow_run_id(state), "address-download-output")
    assert not [run for run in await _all_task_runs(_flow_run_id(state)) if "status" in run]
    assert downloads == [(1, ["Pending", "Running", "Completed"])]


async def _all_task_runs(flow_run_id: UUID) -> list[str]:
    """The names of the flow run's task runs."""
    async with get_client() as client:
        task_runs = await client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
        )
    return [task_run.name for task_run in task_runs]


async def test_a_batch_makes_task_runs_only_of_its_steps_and_none_of_its_helpers(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    """A task run costs the Prefect server its events: the address batch makes one for each step a user
    follows in the UI or a retry covers, and none for the output file's /createfile, its ping or its looks."""
    state = await call(
        address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", return_state=True, **FAST
    )
    assert state.is_completed(), state.message
    assert sandbox.transport.count("/createfile") == 1
    await _task_runs(_flow_run_id(state), "address-customer-files")  # the last step: recorded by now
    names = Counter(name.rsplit("-", 1)[0] for name in await _all_task_runs(_flow_run_id(state)))
    assert names == Counter(
        {
            "address-prepare-input": 1,
            "address-upload-input": 1,
            "address-run-batch": 1,
            "address-download-output": 1,
            "address-build-results": 1,
            "address-delete-file": 2,
            "address-customer-files": 1,
        }
    )


class CutsFirstDownload(httpx.AsyncBaseTransport):
    """The sandbox, except that its first file answer of /downloadfile breaks off after half the body, its
    status line and headers sent: a connection dropped mid-download, as over a network (in-process, the
    sandbox's own dropped answers fail before the status line)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.cut = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if self.cut or "/downloadfile/" not in request.url.path or "json" in response.headers["content-type"]:
            return response
        self.cut += 1
        body = await response.aread()

        async def half() -> AsyncIterator[bytes]:
            yield body[: len(body) // 2]
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

        return httpx.Response(response.status_code, headers=response.headers, content=half(), request=request)


async def test_a_download_dropped_mid_body_is_retried_as_a_task(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The HTTP core never retries in the middle of a body, so the download step is retried as a whole, as
    after a 503, and the download's requests show it."""
    monkeypatch.setenv("POSTFLOWS_TASK_RETRIES", "2")
    monkeypatch.setenv("POSTFLOWS_TASK_RETRY_DELAY_S", "0.05")
    monkeypatch.setenv("POSTFLOWS_TASK_RETRY_JITTER", "0")
    cutting = CutsFirstDownload(sandbox.transport)
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: cutting)
    state = await call(
        address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", return_state=True, **FAST
    )
    assert state.is_completed(), state.message
    assert cutting.cut == 1 and sandbox.transport.count("/downloadfile") == 2
    ((count, states),) = await _task_runs(_flow_run_id(state), "address-download-output")
    assert count == 2 and "AwaitingRetry" in states and states[-1] == "Completed"
    assert sandbox.transport.count("/runbatch") == 1


@pytest.mark.parametrize(("status", "error"), [(400, HttpStatusError), (401, AuthFailed)])
async def test_a_refused_download_is_not_retried(
    sandbox: Sandbox, task_retries: Path, tmp_path: Path, status: int, error: type[Exception]
) -> None:
    sandbox.inject(api="address", endpoint="downloadfile/*", kind="http_status", value=status, times=None)
    state = await call(
        address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", return_state=True, **FAST
    )
    assert state.is_failed()
    with pytest.raises(error):
        await state.result()
    assert sandbox.transport.count("/downloadfile") == 1
    ((count, states),) = await _task_runs(_flow_run_id(state), "address-download-output")
    assert count == 1 and "AwaitingRetry" not in states


async def test_a_failed_runbatch_is_never_retried(
    sandbox: Sandbox, task_retries: Path, tmp_path: Path
) -> None:
    sandbox.inject(api="address", endpoint="runbatch", kind="http_status", value=503, times=None)
    state = await call(
        address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", return_state=True, **FAST
    )
    assert state.is_failed()
    with pytest.raises(ServerError):
        await state.result()
    assert sandbox.transport.count("/runbatch") == 1
    ((count, states),) = await _task_runs(_flow_run_id(state), "address-run-batch")
    assert count == 1 and "AwaitingRetry" not in states


async def test_an_order_status_outage_is_looked_past_and_the_order_posted_once(
    sandbox: Sandbox, task_retries: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sandbox.inject(api="newspaper", endpoint="*/status", kind="http_status", value=502, times=3)
    state = await call(
        newspaper_order,
        order_path=write_order(tmp_path, order_body()),
        output_dir=tmp_path / "out",
        return_state=True,
        **QUICK,
    )
    assert state.is_completed(), state.message
    assert "its status could not be read" in caplog.text
    assert not [name for name in await _all_task_runs(_flow_run_id(state)) if "order-status" in name]
    assert sandbox.transport.count("/orders/standard") == 1


async def test_a_failed_order_post_is_never_retried(
    sandbox: Sandbox, task_retries: Path, tmp_path: Path
) -> None:
    sandbox.inject(api="newspaper", endpoint="*orders/standard", kind="http_status", value=503, times=None)
    state = await call(
        newspaper_order,
        order_path=write_order(tmp_path, order_body()),
        output_dir=tmp_path / "out",
        return_state=True,
        **QUICK,
    )
    assert state.is_failed()
    assert sandbox.transport.count("/orders/standard") == 1
    ((count, states),) = await _task_runs(_flow_run_id(state), "newspaper-submit-order")
    assert count == 1 and "AwaitingRetry" not in states
