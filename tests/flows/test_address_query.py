"""The individual-query flow: every accepted row answered or kept with its error, bounded concurrency,
rate-limit back-off, and the same result files as the batch.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import httpx
import pytest

import history
from connectors.ratelimit import WindowGate
from flows.address_query import address_query
from flows.address_results import AddressQueryResult
from runtime.settings import get_settings
from runtime.wiring import address_service_client
from tasks.address_service.query import QueriesUncertain
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"


async def test_queries_every_accepted_row_and_writes_results(sandbox: Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = await call(address_query, input_path=EXAMPLE, output_dir=out, concurrency=4)

    assert isinstance(summary, AddressQueryResult) and summary.failed_queries == 0
    with history.session_factory(get_settings().effective_database_url)() as session:
        run = history.get_run(session, summary.run_id)
        assert run is not None and run.summary is not None
    # Recorded under the same keys (but ``sandbox``, which the history's scrubber masks in these tests).
    recorded = {key: value for key, value in run.summary.items() if key != "[redacted]"}
    assert recorded == {key: value for key, value in summary.summary().items() if key != "sandbox"}
    assert sandbox.transport.count("/runquery2") == summary.accepted_rows == summary.result_rows
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert len(results) == summary.accepted_rows
    by_customer = results.set_index("KundenNr")
    assert by_customer.loc["1001", "QSTAT"] == "1"
    assert by_customer.loc["1007", "QSTAT"] == "3"
    assert by_customer.loc["1008", "QSTAT"] == "4"
    assert by_customer.loc["1016", "QSTAT"] == "51"
    assert by_customer.loc["1003", "SR14_TownName"].endswith("(3)")
    assert (out / "results.xlsx").is_file() and (out / "rejected.csv").is_file()


async def test_a_failing_query_keeps_its_row_with_the_reason(sandbox: Sandbox, tmp_path: Path) -> None:
    """Status 801 (a parameter's format) certainly means "not processed": the row keeps the reason and is
    not uncertain."""
    sandbox.inject(api="address", endpoint="runquery2", kind="service_status", value=801, after=3, times=1)
    summary = await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=1)

    assert summary.failed_queries == 1 and summary.uncertain_rows == 0
    results = read_output_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert len(results) == summary.accepted_rows
    failed = results[results["QueryError"] != ""]
    assert len(failed) == 1 and "Status 801" in failed.iloc[0]["QueryError"]
    assert not failed.iloc[0]["QueryError"].startswith("uncertain")


async def test_a_rerun_sends_only_the_queries_not_answered_yet(sandbox: Sandbox, tmp_path: Path) -> None:
    """Every query is billed: answers received by an earlier run of the same work are not bought twice; a
    query refused as "not processed" is asked again without --resubmit."""
    sandbox.inject(api="address", endpoint="runquery2", kind="service_status", value=801, after=3, times=1)
    first = await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=2)
    assert first.failed_queries == 1 and first.resumed_rows == 0
    sent_first = sandbox.transport.count("/runquery2")

    again = await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=2)
    assert again.failed_queries == 0
    assert again.query_sends == 1 == sandbox.transport.count("/runquery2") - sent_first
    assert again.resumed_rows == again.accepted_rows - 1
    results = read_output_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert len(results) == again.result_rows == again.accepted_rows
    assert (results["QueryError"] == "").all()
    assert results.set_index("KundenNr").loc["1007", "QSTAT"] == "3"

    # Done: the next run of the same work queries afresh.
    third = await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=2)
    assert third.resumed_rows == 0 and third.query_sends == third.accepted_rows


class SimulatedTime:
    """Epoch seconds that pass only when someone waits: the sandbox's clock and the client's window gate."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0  # 20 s into a minute
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


async def test_a_per_minute_limit_is_waited_out_by_every_worker_together(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Status 106 means "this minute's allowance is used up": the run waits for the next minute, all its
    workers at one gate, instead of burning each query's retries in a second or two."""
    time = SimulatedTime()
    sandbox.config.clock = time
    sandbox.config.max_queries_per_minute = 10
    monkeypatch.setattr(
        "runtime.wiring.address_service.window_gate",
        lambda settings: WindowGate(clock=time, sleep=time.sleep),
    )
    summary = await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=4)

    assert summary.failed_queries == 0
    accepted = summary.accepted_rows
    minutes = -(-accepted // 10)  # 38 queries at 10 a minute: four minutes
    assert time.now - 1_700_000_000.0 >= (minutes - 1) * 60 - 20
    # Refused queries are the few that reach a closed minute before the gate shuts: at most one per worker
    # per minute, not retries burnt until they fail.
    refused = summary.query_sends - accepted
    assert 0 < refused <= 4 * minutes
    assert sandbox.transport.count("/runquery2") == summary.query_sends


async def test_an_unreadable_answer_keeps_its_row_uncertain_and_the_answers_already_paid_for(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer that cannot be read may be that of a query answered and billed: its row is uncertain."""
    inner = sandbox.transport

    class Garbling(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await inner.handle_async_request(request)
            if request.url.path.endswith("/runquery2") and b'"Id":5,' in request.content:
                await response.aread()
                return httpx.Response(200, text="<html>gateway</html>", headers={"content-type": "text/html"})
            return response

    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: Garbling())
    with pytest.raises(QueriesUncertain, match="--resubmit") as uncertain:
        await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=4)

    summary = uncertain.value.summary
    assert summary["failed_queries"] == 0 and summary["uncertain_rows"] == 1 and uncertain.value.rows == [5]
    results = read_output_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert len(results) == summary["accepted_rows"]
    failed = results[results["QueryError"] != ""]
    assert list(failed["row"]) == ["5"]
    assert failed.iloc[0]["QueryError"].startswith("uncertain: unreadable answer")
    assert "not JSON" in failed.iloc[0]["QueryError"]
    assert (results.loc[results["row"] != "5", "QSTAT"] != "").all()


@pytest.mark.parametrize("concurrency", [1, 16])
async def test_results_do_not_depend_on_concurrency(
    sandbox: Sandbox, tmp_path: Path, concurrency: int
) -> None:
    await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=concurrency)
    results = read_output_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert list(results["KundenNr"]) == sorted(results["KundenNr"])
    assert results["QSTAT"].ne("").all()


@pytest.mark.parametrize(
    ("guard", "dialect", "prefix", "start"),
    [(None, None, "'", b"\xef\xbb\xbfKundenNr;line;"), ("false", "rfc4180", "", b"KundenNr,line,")],
)
async def test_the_csv_files_follow_the_formula_guard_and_dialect_settings(
    sandbox: Sandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    guard: str | None,
    dialect: str | None,
    prefix: str,
    start: bytes,
) -> None:
    for name, setting in (("POSTFLOWS_CSV_FORMULA_GUARD", guard), ("POSTFLOWS_CSV_DIALECT", dialect)):
        if setting is not None:
            monkeypatch.setenv(name, setting)
    source = tmp_path / "kunden.csv"
    source.write_text(
        "KundenNr;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n"
        "=1+1;Hans;Muster;Lindenstrasse;12;6010;Kriens\n@A1;Hans;Muster;Lindenstrasse;12;-601;Kriens\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    await call(address_query, input_path=source, output_dir=out, concurrency=1)
    assert (out / "results.csv").read_bytes().startswith(start)
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert results["KundenNr"].tolist() == [f"{prefix}=1+1"]
    assert (out / "rejected.csv").read_bytes().startswith(start)
    rejected = read_output_csv(out / "rejected.csv", dtype=str, keep_default_na=False)
    assert rejected[["KundenNr", "values"]].values.tolist() == [[f"{prefix}@A1", "PLZ: -601"]]


class ThreadRecorder(httpx.AsyncBaseTransport):
    """The sandbox transport, noting the name of each thread that sends a query."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.threads: set[str] = set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/runquery2"):
            self.threads.add(threading.current_thread().name)
        return await self.inner.handle_async_request(request)


async def test_on_the_dask_cluster_the_setting_names_the_results_are_the_same(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """POSTFLOWS_TASK_RUNNER=dask:<address>: the chunks run on that cluster's workers, the files are those
    of the default runner."""
    from distributed import LocalCluster

    await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "threads", concurrency=16)
    recorder = ThreadRecorder(sandbox.transport)
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: recorder)
    with LocalCluster(n_workers=2, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster:
        monkeypatch.setenv("POSTFLOWS_TASK_RUNNER", f"dask:{cluster.scheduler_address}")
        summary = await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "dask", concurrency=16)

    assert summary.failed_queries == 0 and summary.query_sends == summary.accepted_rows
    for name in ("results.csv", "rejected.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "threads" / name).read_bytes()
    # 16 in flight on Dask: two lanes of 8, eight chunks of at most 5 records, on the workers' threads.
    assert len(recorder.threads) >= 2 and all("Dask-Default-Threads" in name for name in recorder.threads)


def test_the_clients_of_one_address_service_share_one_window_gate_per_process(
    flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every chunk task builds its own client: a per-minute limit seen by one must hold back the others."""
    first = address_service_client(get_settings())
    second = address_service_client(get_settings())
    assert first.window_gate is second.window_gate
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_URL", "https://address.example.test/REST/v1")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_USER", "someone")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_PASSWORD", "secret")
    other = address_service_client(get_settings())
    assert other.window_gate is not first.window_gate
    assert other.window_gate is address_service_client(get_settings()).window_gate


class _RecordingQueries(httpx.AsyncBaseTransport):
    """The sandbox transport, keeping the method and JSON body of every individual query."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.queries: list[tuple[str, dict[str, object]]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        method = request.url.path.rsplit("/", 1)[-1]
        if method.startswith("runquery2"):
            self.queries.append((method, json.loads(request.content)))
        return await self.inner.handle_async_request(request)


async def test_a_billing_reference_sends_every_query_with_the_client_fields(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = _RecordingQueries(sandbox.transport)
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: recording)
    summary = await call(
        address_query,
        input_path=EXAMPLE,
        output_dir=tmp_path / "out",
        billing_reference="RRN-0001",
        client_identifier="C-1",
        client_name="Verlag AG",
        concurrency=2,
    )

    assert summary.failed_queries == 0 and len(recording.queries) == summary.accepted_rows
    assert {method for method, _ in recording.queries} == {"runquery2withclient"}
    for _, body in recording.queries:
        assert (body["billingReferenceNumber"], body["clientIdentifier"], body["clientName"]) == (
            "RRN-0001",
            "C-1",
            "Verlag AG",
        )


async def test_a_client_without_a_billing_reference_is_refused_before_anything_is_sent(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="(?s)client_name.*only with a billing reference"):
        await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", client_name="Verlag AG")
    assert sum(sandbox.transport.calls.values()) == 0


@pytest.mark.parametrize("timeout_ms", [25_001, 30_000])
async def test_a_query_timeout_at_or_over_the_http_timeout_is_refused(
    sandbox: Sandbox, tmp_path: Path, timeout_ms: int
) -> None:
    with pytest.raises(ValueError, match="timeout_ms"):
        await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", timeout_ms=timeout_ms)
    assert sum(sandbox.transport.calls.values()) == 0


async def test_a_query_timeout_must_stay_below_a_lowered_http_timeout(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_HTTP_TIMEOUT_S", "10")
    with pytest.raises(ValueError, match="timeout_ms.*POSTFLOWS_HTTP_TIMEOUT_S=10 s"):
        await call(address_query, input_path=EXAMPLE, output_dir=tmp_path / "out", timeout_ms=10_000)
    assert sum(sandbox.transport.calls.values()) == 0
