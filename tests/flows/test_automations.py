"""``postflows setup`` makes the automations on the Prefect server and keeps them as the code declares them
(an operator's off switch stays off); on the server they act: a crashed run of a postflows deployment is
run again once, and a failed run is announced through the notification block named."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.events.schemas.automations import AutomationCore
from prefect.states import Crashed, Failed, Running
from typer.testing import CliRunner

from deployments.automations import (
    CRASH_SILENT_RUNS,
    HEARTBEAT_SILENCE_S,
    NOTIFY_FAILURES,
    RETRY_CRASHED_RUNS,
)
from deployments.catalog import CATALOG
from flows.address_query import address_query
from postflows.cli import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
PARAMETERS = {"request": {"input_path": str(EXAMPLE)}, "output": {"output_dir": "/tmp/out"}}
runner = CliRunner()


async def _by_name(name: str):  # type: ignore[no-untyped-def]
    async with get_client() as client:
        (automation,) = await client.read_automations_by_name(name)
    return automation


def test_setup_makes_the_automations_and_keeps_an_operators_off_switch(setup_env: None) -> None:
    first = runner.invoke(app, ["setup"])
    assert first.exit_code == 0, first.output
    assert f"automation {CRASH_SILENT_RUNS}: created" in first.output
    assert f"automation {RETRY_CRASHED_RUNS}: created" in first.output
    assert "no failure announcements: POSTFLOWS_NOTIFY_BLOCK names no notification block" in first.output

    crash = asyncio.run(_by_name(CRASH_SILENT_RUNS))
    trigger = crash.trigger.model_dump(mode="json")
    assert trigger["posture"] == "Proactive" and trigger["within"] == HEARTBEAT_SILENCE_S
    assert trigger["after"] == ["prefect.flow-run.heartbeat"]
    assert set(trigger["match_related"]["prefect.resource.name"]) == {spec.name for spec in CATALOG}
    assert [action.type for action in crash.actions] == ["change-flow-run-state"]

    async def switch_off_and_change() -> None:
        async with get_client() as client:
            await client.pause_automation(crash.id)
            retry = await _by_name(RETRY_CRASHED_RUNS)
            core = AutomationCore.model_validate(
                {**retry.model_dump(exclude={"id", "owner_resource"}), "description": "changed in the UI"}
            )
            await client.update_automation(retry.id, core)

    asyncio.run(switch_off_and_change())
    again = runner.invoke(app, ["setup"])
    assert again.exit_code == 0, again.output
    assert f"automation {CRASH_SILENT_RUNS}: unchanged (switched off on the server: left off)" in again.output
    assert f"automation {RETRY_CRASHED_RUNS}: updated" in again.output
    assert asyncio.run(_by_name(CRASH_SILENT_RUNS)).enabled is False
    assert asyncio.run(_by_name(RETRY_CRASHED_RUNS)).description != "changed in the UI"


def test_a_notify_block_that_does_not_exist_is_refused_in_one_line(
    setup_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_NOTIFY_BLOCK", "custom-webhook/nobody")
    result = runner.invoke(app, ["setup"])
    assert result.exit_code == 2, result.output
    assert "the Prefect server has no custom-webhook block named 'nobody'" in result.output


class _Webhook(BaseHTTPRequestHandler):
    received: list[dict[str, object]] = []

    def do_POST(self) -> None:  # noqa: N802 - the handler's name
        length = int(self.headers["Content-Length"])
        self.received.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def webhook() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Webhook)
    _Webhook.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()


async def _announced(text: str, seconds: float = 30.0) -> list[dict[str, object]]:
    """The webhook calls whose body holds ``text``, once there is one (or none after ``seconds``)."""
    for _ in range(int(seconds * 4)):
        found = [call for call in _Webhook.received if text in str(call.get("body"))]
        if found:
            return found
        await asyncio.sleep(0.25)
    raise AssertionError(f"no announcement of {text!r} in {_Webhook.received}")


async def _state_after(flow_run_id: UUID, *, not_named: str, seconds: float = 30.0) -> str:
    async with get_client() as client:
        for _ in range(int(seconds * 4)):
            state = (await client.read_flow_run(flow_run_id)).state
            if state is not None and state.name != not_named:
                return str(state.name)
            await asyncio.sleep(0.25)
    return not_named


async def test_a_crashed_run_is_run_again_once_and_a_failed_run_is_announced(
    setup_env: None, monkeypatch: pytest.MonkeyPatch, webhook: str, address_query_deployment: UUID
) -> None:
    from prefect.blocks.notifications import CustomWebhookNotificationBlock

    await CustomWebhookNotificationBlock(
        name="operations", url=webhook, json_data={"subject": "{{subject}}", "body": "{{body}}"}
    ).save("operations", overwrite=True)
    monkeypatch.setenv("POSTFLOWS_NOTIFY_BLOCK", "custom-webhook/operations")
    result = await asyncio.to_thread(runner.invoke, app, ["setup"])
    assert result.exit_code == 0, result.output
    assert f"automation {NOTIFY_FAILURES}: created" in result.output

    async with get_client() as client:
        crashed = await client.create_flow_run_from_deployment(
            address_query_deployment, parameters=PARAMETERS
        )
        await client.set_flow_run_state(crashed.id, Running(), force=True)
        await client.set_flow_run_state(crashed.id, Crashed(message="the worker was killed"), force=True)
    assert await _state_after(crashed.id, not_named="Crashed") == "AwaitingRetry"
    async with get_client() as client:  # its second attempt crashes too: it stays crashed
        await client.set_flow_run_state(crashed.id, Running(), force=True)
        assert (await client.read_flow_run(crashed.id)).run_count == 2
        await client.set_flow_run_state(crashed.id, Crashed(message="killed again"), force=True)

    async with get_client() as client:  # a run of no deployment (a command's) is not run again
        loose = await client.create_flow_run(address_query, parameters=PARAMETERS)
        await client.set_flow_run_state(loose.id, Running(), force=True)
        await client.set_flow_run_state(loose.id, Crashed(message="the command was killed"), force=True)

    async with get_client() as client:
        failed = await client.create_flow_run_from_deployment(address_query_deployment, parameters=PARAMETERS)
        await client.set_flow_run_state(failed.id, Running(), force=True)
        await client.set_flow_run_state(
            failed.id, Failed(message="InputError: input file not found"), force=True
        )
    announced = await _announced("InputError: input file not found")
    assert "address-query" in str(announced[0]["subject"]) and "Failed" in str(announced[0]["subject"])
    assert await _state_after(failed.id, not_named="Failed", seconds=1) == "Failed"  # a failure is not rerun
    assert await _state_after(crashed.id, not_named="Crashed", seconds=1) == "Crashed"
    assert await _state_after(loose.id, not_named="Crashed", seconds=1) == "Crashed"
    crash_announcements = await _announced("killed again")
    assert "Crashed" in str(crash_announcements[0]["subject"])
