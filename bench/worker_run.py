"""``worker_run`` and ``worker_run_cpu``: what a deployment run of the address batch costs on a process
worker, side by side with what Prefect itself costs, a run of an empty flow (:mod:`bench.empty_flow`) on
the same pool, worker and server.

One Prefect server of the benchmark's own (SQLite, every request it answers in its log), the sandbox served
over HTTP (no latency, no faults, batch jobs of ``batch_job_seconds``), the ``address-batch`` deployment of
the catalog (:func:`deployments.deploy.ensure_deployment`) and the empty flow's on one process pool, and one
``prefect worker start --type process --limit 1``: it runs one flow run at a time, so a figure is what one
run costs, never time spent queueing. The worker polls every second (``PREFECT_WORKER_QUERY_SECONDS=1``:
Prefect's default of 10 s would put up to 10 s of waiting into each run) and takes only runs that are due
(``PREFECT_WORKER_PREFETCH_SECONDS=0``: a run created now is due at once, and none is started ahead of its
time); both sides run under these settings.

After one unmeasured run of each side (bytecode, the history's migration, the sandbox's reference data),
``worker_runs`` rounds each create one run of either side, in alternating order, and wait until the
worker has reaped its process. The address batch's runs take a 40-row file (``small_batch_rows``) with a
fresh idempotency key each, its inputs and outputs under the benchmark's directory, the flow's poll policy
with ``flow_poll_interval_s``; each must end Completed with its results.csv written, or the benchmark fails.
Per run:

* wall time: the server's clock from the run's creation to its end (picking it up, starting its process,
  importing the flow, the run itself);
* CPU seconds of the worker and the runs it started (:mod:`bench.process_tree`) and of the Prefect server,
  from just before the run is created until its process is reaped; the sandbox stands in for the remote
  API and is not counted. The benchmark's watching (a read of the run every 0.5 s) costs the server a
  little CPU on both sides;
* Prefect API requests (:mod:`bench.prefect_requests`): what the server answered between two marks but the
  worker's polling and the benchmark's own requests.

With ``--worker-direct-engine`` both sides' deployments carry the job variable ``command`` (this
interpreter's ``python -m prefect.engine``): the worker starts the engine itself, without the workspace
supervisor process the process worker otherwise starts first, each importing Prefect (docs/performance.md,
"Sizing workers and the server").

``worker_run``'s value is the median wall time of the address batch over the empty flow's (≤ 1.5×),
``worker_run_cpu``'s the same of CPU seconds (≤ 2×); both come from one measurement, which
``worker_run_cpu`` reads from the run's directory when ``worker_run`` made it in the same benchmark run.
The benchmark always starts a server of its own, whatever ``prefect_api_url`` says: it reads that
server's log.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import load_world, process_tree
from bench.config import BenchConfig
from bench.data import write_address_file
from bench.measure import BenchResult, Timings, ratio_result
from bench.prefect_requests import RequestTally

NAME = "worker_run"
CPU_NAME = "worker_run_cpu"
TARGET = 1.5
CPU_TARGET = 2.0
POOL = "bench-worker-run"
ADDRESS_BATCH = "address-batch"
EMPTY = load_world.EMPTY_FLOW
SIDES = (ADDRESS_BATCH, EMPTY)
WORKER_LIMIT = 1
WORKER_SETTINGS = {"PREFECT_WORKER_QUERY_SECONDS": "1", "PREFECT_WORKER_PREFETCH_SECONDS": "0"}
NO_RATE_LIMITS = {"address": 0, "newspaper": 0, "commerce": 0}
WATCH_S = 0.5
RUN_TIMEOUT_S = 300.0
IDLE_WINDOW_S = 3.0
MEASUREMENT_FILE = "worker_run.measurement.json"


@dataclass(frozen=True)
class RunCost:
    """One measured flow run: its side, seconds from creation to end and to Running, the CPU seconds of the
    worker with its runs and of the server, and the Prefect API requests it cost."""

    side: str
    wall_s: float
    start_s: float
    worker_cpu_s: float
    server_cpu_s: float
    requests: int
    websockets: int
    by_kind: dict[str, int]

    @property
    def cpu_s(self) -> float:
        return self.worker_cpu_s + self.server_cpu_s


@dataclass(frozen=True)
class Measurement:
    """Every measured run of both sides, the requests counted in a quiet window of the idle worker, and the
    job variable ``command`` each side's deployment had on the server (None: the worker's default)."""

    runs: list[RunCost]
    idle_requests: int
    commands: dict[str, str | None] = dataclasses.field(default_factory=dict)

    def of(self, side: str) -> list[RunCost]:
        return [cost for cost in self.runs if cost.side == side]


@dataclass(frozen=True)
class World:
    """The running server and worker, the deployments (side → id) and what the runs get."""

    server: load_world.PrefectServer
    worker_pids: list[int]
    idle_children: set[int]
    deployments: dict[str, str]
    commands: dict[str, str | None]
    workdir: Path
    config: BenchConfig
    input_path: Path

    def cpu(self) -> tuple[float, float]:
        """CPU seconds so far of the worker with its runs, and of the server."""
        worker = sum(process_tree.cpu_seconds(pid) for pid in self.worker_pids)
        return worker, process_tree.cpu_seconds(self.server.pid)

    def parameters(self, side: str, label: str) -> dict[str, Any]:
        """The parameters of a run of ``side``: the address batch's input, output and key; none else."""
        if side != ADDRESS_BATCH:
            return {}
        return {
            "request": {
                "input_path": str(self.input_path),
                "idempotency_key": f"bench-worker-run-{uuid.uuid4().hex}",
            },
            "output": {"output_dir": str(self.workdir / "out" / label)},
            "polling": {"min_poll_interval_s": self.config.flow_poll_interval_s},
        }


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """``worker_run``: wall time per run, the address batch against the empty flow."""
    measured = measurement(config, workdir)
    return _result(
        measured,
        config,
        (NAME, TARGET, "wall_s"),
        "address-batch deployment run vs an empty flow's on the same process worker (--limit 1) and Prefect "
        "server: wall time from creation to end",
        requests_by_kind_per_run=_by_kind(measured),
    )


def run_cpu(config: BenchConfig, workdir: Path) -> BenchResult:
    """``worker_run_cpu``: CPU seconds per run of the worker, its runs and the server, side by side."""
    return _result(
        measurement(config, workdir),
        config,
        (CPU_NAME, CPU_TARGET, "cpu_s"),
        "address-batch deployment run vs an empty flow's on the same process worker and Prefect server: CPU "
        "seconds of the worker, its runs and the server (the medians are CPU seconds)",
    )


def _result(
    measured: Measurement,
    config: BenchConfig,
    row: tuple[str, float, str],
    description: str,
    **info: Any,
) -> BenchResult:
    """The row ``(name, target, figure)``: each side's runs' ``figure``, the address batch's over the empty
    flow's, with the measurement's information and ``info``."""
    name, target, figure = row
    timings = Timings(*([getattr(cost, figure) for cost in measured.of(side)] for side in SIDES))
    return ratio_result(
        name,
        description,
        timings,
        size=_size(config),
        target=target,
        comparison="at_most",
        info={**_info(measured, config), **info},
    )


def measurement(config: BenchConfig, workdir: Path) -> Measurement:
    """The measurement of this benchmark run: the one ``worker_run`` left in the run's directory (same
    configuration), else a new one made in ``workdir`` and left there."""
    shared = workdir.parent / MEASUREMENT_FILE
    wanted = dataclasses.asdict(config)
    if shared.is_file():
        document = json.loads(shared.read_text(encoding="utf-8"))
        if document["config"] == wanted:
            runs = [RunCost(**cost) for cost in document["runs"]]
            return Measurement(runs, int(document["idle_requests"]), dict(document.get("commands") or {}))
    measured = measure(config, workdir)
    document = {"config": wanted, **dataclasses.asdict(measured)}
    shared.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return measured


def measure(config: BenchConfig, workdir: Path) -> Measurement:
    """Both sides' runs, alternating, on one server and worker started for them."""
    with _world(config, workdir) as world:
        for side in SIDES:
            _one_run(world, side, f"warm-up-{side}")
        idle = _idle_requests(world)
        runs = []
        for round_number in range(config.worker_runs):
            for side in SIDES if round_number % 2 == 0 else reversed(SIDES):
                runs.append(_one_run(world, side, f"{round_number:02d}-{side}"))
    return Measurement(runs, idle, world.commands)


@contextlib.contextmanager
def _world(config: BenchConfig, workdir: Path) -> Iterator[World]:
    env = load_world.base_environment(workdir, NO_RATE_LIMITS)
    plan = load_world.SandboxPlan(0.0, config.batch_job_seconds, ())
    history_url = f"sqlite:///{workdir / 'history.db'}"
    (workdir / "input").mkdir()
    input_path = write_address_file(workdir / "input" / "addresses.csv", config.small_batch_rows)
    with (
        load_world.prefect_server(workdir / "prefect") as server,
        load_world.served_sandbox(workdir / "sandbox", env, plan) as sandbox,
    ):
        worker_env = load_world.worker_environment(env, server.api_url, history_url, sandbox, workdir)
        deployments, commands = asyncio.run(
            _deploy(server.api_url, direct_engine=config.worker_direct_engine)
        )
        folder = workdir / "worker"
        with load_world.workers({**worker_env, **WORKER_SETTINGS}, POOL, 1, WORKER_LIMIT, folder) as started:
            pids = [process.pid for process in started]
            idle = process_tree.descendants(pids)
            yield World(server, pids, idle, deployments, commands, workdir, config, input_path)


async def _deploy(
    api_url: str, *, direct_engine: bool = False
) -> tuple[dict[str, str], dict[str, str | None]]:
    """The pool, the address batch's deployment (as ``postflows deploy`` makes it) and the empty flow's; with
    ``direct_engine``, both started by Prefect's engine directly, with this interpreter (as ``postflows
    deploy --worker-python`` makes them). Each side's deployment id and job variable ``command``, as the
    server holds them."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from deployments.catalog import spec_named
    from deployments.deploy import engine_command, ensure_deployment, ensure_work_pools

    spec = spec_named(ADDRESS_BATCH)
    python = sys.executable if direct_engine else None
    with temporary_settings({PREFECT_API_URL: api_url}):
        await ensure_work_pools([POOL])
        await ensure_deployment(spec, POOL, command=engine_command(python) if python else None)
        empty_id = await load_world.deploy_empty_flow(api_url, POOL, worker_python=python)
        async with get_client() as client:
            held = {
                ADDRESS_BATCH: await client.read_deployment_by_name(spec.full_name),
                EMPTY: await client.read_deployment(empty_id),
            }
    ids = {side: str(deployment.id) for side, deployment in held.items()}
    return ids, {side: (deployment.job_variables or {}).get("command") for side, deployment in held.items()}


def _idle_requests(world: World) -> int:
    """What the count takes for the run's requests in a quiet window of the idle worker (none expected)."""
    start = world.server.log.mark("idle-start")
    time.sleep(IDLE_WINDOW_S)
    return world.server.log.count(start, world.server.log.mark("idle-end")).counted


def _one_run(world: World, side: str, label: str) -> RunCost:
    """Create one run of ``side``, wait until it is final and its process reaped; what it cost."""
    log = world.server.log
    tally = RequestTally()
    start = log.mark(f"{label}-start")
    worker_before, server_before = world.cpu()
    flow_run = _create_and_wait(world, side, label, tally)
    if not process_tree.wait_until_reaped(world.worker_pids, world.idle_children):
        raise RuntimeError(f"run {label}: its process was not reaped by the worker within a minute")
    worker_after, server_after = world.cpu()
    requests = log.count(start, log.mark(f"{label}-end"), own=tally)
    _check_completed(world, side, label, flow_run)
    return RunCost(
        side=side,
        wall_s=(flow_run.end_time - flow_run.created).total_seconds(),
        start_s=(flow_run.start_time - flow_run.created).total_seconds(),
        worker_cpu_s=worker_after - worker_before,
        server_cpu_s=server_after - server_before,
        requests=requests.counted,
        websockets=requests.websockets,
        by_kind=dict(requests.by_kind),
    )


def _create_and_wait(world: World, side: str, label: str, tally: RequestTally) -> Any:
    """Create a run of ``side``'s deployment and read it every :data:`WATCH_S` until it is final."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    deadline = time.monotonic() + RUN_TIMEOUT_S
    with (
        temporary_settings({PREFECT_API_URL: world.server.api_url}),
        get_client(sync_client=True, httpx_settings=tally.sync_httpx_settings()) as client,
    ):
        flow_run = client.create_flow_run_from_deployment(
            uuid.UUID(world.deployments[side]), parameters=world.parameters(side, label)
        )
        while flow_run.state is None or not flow_run.state.is_final():
            if time.monotonic() > deadline:
                raise RuntimeError(f"run {label} ({side}) not final after {RUN_TIMEOUT_S:.0f} s")
            time.sleep(WATCH_S)
            flow_run = client.read_flow_run(flow_run.id)
    return flow_run


def _check_completed(world: World, side: str, label: str, flow_run: Any) -> None:
    """Fail the benchmark when the run did not complete, or the address batch wrote no results."""
    state = flow_run.state
    if state.type.value != "COMPLETED":
        raise RuntimeError(
            f"run {label} ({side}) ended {state.name}: {state.message}; "
            f"see {world.workdir / 'worker' / 'worker-1' / 'worker.log'}"
        )
    results = world.workdir / "out" / label / "results.csv"
    if side == ADDRESS_BATCH and not results.is_file():
        raise RuntimeError(f"run {label} completed without writing {results}")


def _size(config: BenchConfig) -> dict[str, Any]:
    return {
        "rows": config.small_batch_rows,
        "job_seconds": config.batch_job_seconds,
        "runs_per_side": config.worker_runs,
    }


def _info(measured: Measurement, config: BenchConfig) -> dict[str, Any]:
    """Both sides' medians: requests, WebSocket connections, seconds to Running, CPU by process; how the
    worker started the runs."""

    def median(side: str, figure: str) -> float:
        return round(float(statistics.median(getattr(cost, figure) for cost in measured.of(side))), 3)

    return {
        "prefect_api_requests_per_run": {side: median(side, "requests") for side in SIDES},
        "websocket_connections_per_run": {side: median(side, "websockets") for side in SIDES},
        "seconds_to_running": {side: median(side, "start_s") for side in SIDES},
        "cpu_s": {
            side: {"worker_and_runs": median(side, "worker_cpu_s"), "server": median(side, "server_cpu_s")}
            for side in SIDES
        },
        "idle_requests_counted": measured.idle_requests,
        "worker": f"prefect worker start --type process --limit {WORKER_LIMIT}, "
        + ", ".join(f"{name}={value}" for name, value in WORKER_SETTINGS.items()),
        "prefect_api": "a server of the benchmark's own (SQLite), requests counted from its access log",
        "commands": measured.commands,
        "engine": "started directly (job variable command: python -m prefect.engine)"
        if config.worker_direct_engine
        else "the process worker's default: a workspace supervisor process, then the engine's",
    }


def _by_kind(measured: Measurement) -> dict[str, dict[str, float]]:
    """Per side, the requests of each kind per run, most frequent first."""
    per_side = {}
    for side in SIDES:
        costs = measured.of(side)
        total: Counter[str] = Counter()
        for cost in costs:
            total.update(cost.by_kind)
        per_side[side] = {kind: round(count / len(costs), 2) for kind, count in total.most_common()}
    return per_side
