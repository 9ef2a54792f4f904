"""Benchmarks of the flow machinery: the ``address_batch`` flow, run in this process against a Prefect server
started once and run as the command line runs a flow (:func:`postflows.cli_common.run_flow`), against a
plain script making the same connector calls (upload, createfile, runbatch,
checkbatchstatus polling, download, deletefile) and the same file work (reading and checking the input,
the upload file, results.csv, results.xlsx and qstat.png, writeback.<ext> and review.xlsx), both on the same
embedded sandbox with the same poll policy.

* ``small_batch``: 40 rows, a job of 1 s (target: the flow at most 1.2× the script);
* ``flow_overhead``: 10,000 rows (target: at most 1.1×).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.config import BenchConfig
from bench.data import write_address_file
from bench.measure import BenchResult, alternate_async, ratio_result
from fileio.address_service.customer_files import CustomerFileOptions, write_customer_files
from fileio.address_service.wire import WireFormat
from fileio.files import write_stream
from fileio.writeback.options import WriteBackOptions
from postflows.prefect_api import shared_sync_client
from postflows.prefect_server import LocalServer, ServerState
from runtime.settings import Settings, get_settings
from runtime.wiring import address_service_client
from tasks.address_service.batch import DownloadLimits, wait_for_batch
from tasks.address_service.steps import (
    ResultOptions,
    UploadLayout,
    build_address_results,
    prepare_address_input,
)
from tasks.polling import PollPolicy

SMALL_BATCH = "small_batch"
FLOW_OVERHEAD = "flow_overhead"
SMALL_TARGET = 1.2
OVERHEAD_TARGET = 1.1

_server: tuple[LocalServer, ServerState, Path] | None = None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def prefect_api_url(config: BenchConfig) -> str:
    """The Prefect API the flow benchmarks run on: the config's, or a server of this process's, started on
    first use and stopped when it exits."""
    if config.prefect_api_url is not None:
        return config.prefect_api_url
    global _server
    if _server is None:
        home = Path(tempfile.mkdtemp(prefix="postflows-bench-prefect-"))
        server = LocalServer.of(home)
        state = server.start(port=_free_port())
        _server = (server, state, home)
        atexit.register(_stop_server)
    return str(_server[1].api_url)


def _stop_server() -> None:
    global _server
    if _server is not None:
        server, _, home = _server
        _server = None
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def flow_world(workdir: Path, job_seconds: float, api_url: str) -> Iterator[Settings]:
    """The settings both sides run with (a data dir of the benchmark's, the embedded sandbox with jobs of
    ``job_seconds``) and Prefect pointed at ``api_url``."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    values = {
        "POSTFLOWS_DATA_DIR": str(workdir / "data"),
        "POSTFLOWS_SANDBOX_JOB_SECONDS": str(job_seconds),
        "POSTFLOWS_ADDRESS_SERVICE_URL": "",
    }
    with _environment(values), temporary_settings({PREFECT_API_URL: api_url}):
        try:
            yield get_settings()
        finally:
            _let_go_of_events()


def _let_go_of_events() -> None:
    """Stop Prefect's events worker of this process: it keeps sending to the server it first sent to, so a
    later flow run in the process (the test suite's, after the smoke test) would report its task runs to
    this benchmark's server. The next event starts a worker for the server configured then."""
    from prefect.events.worker import EventsWorker

    EventsWorker.drain_all(timeout=30)


# Both sides' shortest wait between status checks (BenchConfig.flow_poll_interval_s) is a little longer than
# the job, so that both find it done at the same check. At 1 s, the check after the first landed just before
# or just after the job's end by chance, which put a whole poll interval (1.5 s) into one side's time or the
# other's.


def _policy(poll_interval_s: float) -> PollPolicy:
    """The flow's poll policy: its defaults (``max_wait_s``, growth, ...) and the shortest wait given."""
    return PollPolicy(3600.0, poll_interval_s)


async def plain_batch(settings: Settings, input_path: Path, output_dir: Path, poll_interval_s: float) -> int:
    """The flow's connector calls and file work, without Prefect or the run history; returns the rows."""
    prepared = prepare_address_input(
        input_path,
        output_dir,
        upload=UploadLayout(WireFormat(delimiter="\t", encoding="cp1252")),
        csv_style=settings.csv_style,
    )
    assert prepared.upload_path is not None
    async with address_service_client(settings) as client:
        input_token = await client.upload_file(prepared.upload_path)
        output_token = await client.create_file()
        try:
            job = await client.run_batch(settings.address_service.batch_key, input_token, output_token)
            await wait_for_batch(client, job.batch_token, policy=_policy(poll_interval_s))
            download = output_dir / "download" / "output.bin"
            async with client.download(output_token) as chunks:
                await write_stream(download, chunks, max_bytes=settings.download_max_bytes)
        finally:
            await client.delete_file(input_token)
            await client.delete_file(output_token)
    results = build_address_results(
        prepared,
        download,
        output_dir,
        limits=DownloadLimits(max_bytes=settings.download_max_bytes, zip_max_ratio=settings.zip_max_ratio),
        options=ResultOptions(csv_style=settings.csv_style),
    )
    assert results.corrections is not None
    write_customer_files(
        prepared.records,
        results.corrections,
        results.summary,
        output_dir,
        CustomerFileOptions("corrections", WriteBackOptions(csv_style=settings.csv_style)),
        moves_file_rows=results.moves or None,
    )
    return results.rows


async def flow_batch(input_path: Path, output_dir: Path, poll_interval_s: float) -> int:
    """The ``address_batch`` flow run on the server, with a fresh idempotency key: every run is new work. It
    runs as the command line runs a flow (:func:`postflows.cli_common.run_flow`): in a block of its own
    that shares one synchronous Prefect client among the engine's look-ups."""
    from flows.address_batch import address_batch
    from flows.address_results import AddressBatchResult
    from flows.requests import AddressBatchRequest, OutputOptions, PollingOptions

    with shared_sync_client():
        result = await address_batch(
            request=AddressBatchRequest(input_path=input_path, idempotency_key=f"bench-{uuid.uuid4().hex}"),
            output=OutputOptions(output_dir=output_dir),
            polling=PollingOptions(min_poll_interval_s=poll_interval_s),
        )
    assert isinstance(result, AddressBatchResult)  # no dry run, and no deployment run: it never parks
    return result.result_rows


async def _measure(
    settings: Settings, input_path: Path, workdir: Path, config: BenchConfig
) -> tuple[Any, dict[str, Any]]:
    interval = config.flow_poll_interval_s
    rows: dict[str, int] = {}

    def fresh(name: str) -> Path:
        directory = workdir / "out" / f"{name}-{uuid.uuid4().hex[:8]}"
        directory.mkdir(parents=True)
        return directory

    async def candidate() -> None:
        rows["flow_rows"] = await flow_batch(input_path, fresh("flow"), interval)

    async def baseline() -> None:
        rows["script_rows"] = await plain_batch(settings, input_path, fresh("script"), interval)

    await baseline()  # warm both paths up (imports, the sandbox's reference data, the first flow run)
    await candidate()
    timings = await alternate_async(candidate, baseline, config.repeats)
    return timings, rows


def _run(
    name: str, target: float, rows: int, job_seconds: float, config: BenchConfig, workdir: Path
) -> BenchResult:
    input_path = write_address_file(workdir / "addresses.csv", rows)
    api_url = prefect_api_url(config)
    with flow_world(workdir, job_seconds, api_url) as settings:
        timings, answered = asyncio.run(_measure(settings, input_path, workdir, config))
    return ratio_result(
        name,
        "address_batch flow run (Prefect server running, run history) vs a plain script of the same "
        "connector calls and file work, same sandbox and poll policy, in one process",
        timings,
        size={"rows": rows, "job_seconds": job_seconds},
        target=target,
        comparison="at_most",
        info={
            **answered,
            "prefect_api": api_url,
            "poll_policy": f"min {config.flow_poll_interval_s} s, the flow's defaults",
        },
    )


def run_small_batch(config: BenchConfig, workdir: Path) -> BenchResult:
    """``small_batch``: the flow on a 40-row batch vs the plain script."""
    return _run(SMALL_BATCH, SMALL_TARGET, config.small_batch_rows, config.batch_job_seconds, config, workdir)


def run_flow_overhead(config: BenchConfig, workdir: Path) -> BenchResult:
    """``flow_overhead``: the flow on 10,000 rows vs the plain script."""
    return _run(
        FLOW_OVERHEAD, OVERHEAD_TARGET, config.overhead_rows, config.overhead_job_seconds, config, workdir
    )
