"""Events out: a completed run emits ``postflows.<flow>.finished`` with its summary, a failed one
``postflows.<flow>.failed`` with its reason (once, however early it failed); the run (named with its
history's id), its flow run, its input file and its key are the event's resources, so an automation can match
on any of them; the payload says whether the run was a sandbox run."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect.events.clients import AssertingEventsClient
from prefect.events.worker import EventsWorker

import history
from fileio.errors import InputError
from flows.address_batch import address_batch
from flows.address_query import address_query
from flows.run_events import MAX_PAYLOAD_BYTES, bounded
from history.store import history_identity
from runtime.settings import get_settings
from tasks.address_service.ping import PingFailed
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> Iterator[EventsWorker]:
    """Prefect's events worker with a client that keeps what it is sent (Prefect's own test client)."""
    worker = EventsWorker.instance(AssertingEventsClient)
    monkeypatch.setattr(EventsWorker, "instance", lambda *_: worker)
    yield worker
    worker.drain()


async def _ours(worker: EventsWorker) -> list:  # type: ignore[type-arg]
    # From a running loop drain() hands back an awaitable: the events are sent only once it is awaited.
    drained = worker.drain()
    if inspect.isawaitable(drained):
        await drained
    client = worker._client
    assert isinstance(client, AssertingEventsClient)
    return [event for event in client.events if event.event.startswith("postflows.")]


def _history_id() -> str:
    factory = history.session_factory(get_settings().effective_database_url)
    with factory.begin() as session:
        return history_identity(session)


def _related(event) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {resource.role: resource.id for resource in event.related}


async def test_a_completed_run_emits_finished_with_its_summary(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, events: EventsWorker
) -> None:
    state = await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", return_state=True)
    summary = await state.result()

    [event] = await _ours(events)
    assert event.event == "postflows.address-query.finished"
    assert event.resource.id == f"postflows.run.{_history_id()}.{summary.run_id}"
    assert event.payload["history"] == _history_id() and event.payload["history_run_id"] == summary.run_id
    assert event.payload["sandbox"] is True and summary.sandbox is True
    assert event.payload["summary"]["accepted_rows"] == summary.accepted_rows > 0
    assert event.payload["summary"]["files"] == summary.files
    related = _related(event)
    assert related["flow-run"] == f"prefect.flow-run.{state.state_details.flow_run_id}"
    assert related["input-file"] == f"postflows.file.{EXAMPLE}"
    assert related["idempotency-key"].startswith("postflows.key.")
    assert event.payload["inputs"] == {"input_path": str(EXAMPLE)}


async def test_a_failed_run_emits_failed_with_its_reason(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, events: EventsWorker
) -> None:
    sandbox.config.address_password = "the-password-the-service-expects"
    with pytest.raises(PingFailed):
        await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out")

    [event] = await _ours(events)
    assert event.event == "postflows.address-query.failed"
    assert (
        event.payload["error"].startswith("PingFailed: ")
        and "did not answer its ping" in event.payload["error"]
    )
    assert _related(event)["input-file"] == f"postflows.file.{EXAMPLE}"
    assert event.payload["sandbox"] is True


async def test_a_run_failing_on_a_missing_input_file_sends_one_failed_event(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, events: EventsWorker
) -> None:
    missing = tmp_path / "customers.csv"
    state = await call(address_batch, input_path=missing, output_dir=tmp_path / "out", return_state=True)
    assert state.is_failed()
    with pytest.raises(InputError):
        await state.result()

    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        [run] = history.list_runs(session, limit=10)
    [event] = await _ours(events)
    assert event.event == "postflows.address-batch.failed"
    assert event.resource.id == f"postflows.run.{_history_id()}.{run.id}"
    assert event.payload["history_run_id"] == run.id and event.payload["history"] == _history_id()
    assert event.payload["sandbox"] is True
    assert "input file not found" in event.payload["error"]
    assert _related(event)["flow-run"] == f"prefect.flow-run.{state.state_details.flow_run_id}"


def test_a_large_summary_keeps_its_short_values_and_says_what_it_left_out() -> None:
    summary = {"accepted_rows": 3, "files": [f"/out/{n:06}.pdf" for n in range(10_000)], "resumed": False}
    payload = bounded(summary)
    assert payload["accepted_rows"] == 3 and payload["resumed"] is False and payload["truncated"] is True
    assert payload["files"].startswith("… ") and "bytes left out" in payload["files"]
    assert len(str(payload)) < MAX_PAYLOAD_BYTES


def test_a_small_summary_is_sent_as_it_is_in_json_values() -> None:
    assert bounded({"files": [Path("/out/a.csv")], "rows": 2}) == {"files": ["/out/a.csv"], "rows": 2}
