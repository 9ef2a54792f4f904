"""Benchmark 4: individual queries (runquery2) with bounded concurrency against one at a time, against a
service that answers each query after a fixed latency, as a network would (target: ≥ 25× faster, the bound
is the concurrency). The serial baseline runs ``serial_queries`` and is scaled to all of them.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
from pydantic import SecretStr

from bench.config import BenchConfig
from bench.data import NAMES, PRENAMES, SEED, STREETS, TOWNS
from bench.latency_service import LatencyService, sample_answer
from bench.measure import BenchResult, alternate_async, ratio_result
from bench.sandbox_client import MAINTENANCE_KEY, sandbox_client
from connectors.address_service import AddressServiceClient
from connectors.http import ClientOptions, RequestLog
from sandbox.config import SandboxConfig
from sandbox.faults import FaultPlan, FaultRule
from sandbox.inprocess import SandboxTransport, address_service_url
from tasks.address_service.query import QuerySpec, query_fields, run_queries

NAME = "queries"
TARGET = 25.0


def query_records(count: int, *, seed: int = SEED) -> pd.DataFrame:
    """Records with §2.3 column names, as ``run_queries`` takes them."""
    rng = np.random.default_rng(seed + 3)
    towns = rng.integers(0, len(TOWNS), count)
    return pd.DataFrame(
        {
            "RecordId": np.arange(1, count + 1, dtype=np.int64),
            "Prename": np.asarray(PRENAMES, dtype=object)[rng.integers(0, len(PRENAMES), count)],
            "Name": np.asarray(NAMES, dtype=object)[rng.integers(0, len(NAMES), count)],
            "Streetname": np.asarray(STREETS, dtype=object)[rng.integers(0, len(STREETS), count)],
            "HouseNo": rng.integers(1, 200, count).astype(str).astype(object),
            "ZIPCode": np.asarray([t[0] for t in TOWNS], dtype=object)[towns],
            "TownName": np.asarray([t[1] for t in TOWNS], dtype=object)[towns],
        }
    )


async def _one_at_a_time(client: AddressServiceClient, records: pd.DataFrame) -> int:
    answered = 0
    for record in records.to_dict("records"):
        fields = query_fields({str(k): v for k, v in record.items()})
        await client.run_query(MAINTENANCE_KEY, int(record["RecordId"]), fields)
        answered += 1
    return answered


def _client(
    transport: httpx.AsyncBaseTransport, request_log: RequestLog | None = None
) -> AddressServiceClient:
    return AddressServiceClient(
        address_service_url(),
        username="bench",
        password=SecretStr("bench"),
        options=ClientOptions(transport=transport, request_log=request_log),
    )


async def _measure(config: BenchConfig) -> BenchResult:
    service = LatencyService(await sample_answer(), config.query_latency_s)
    connect = partial(_client, service)
    records = query_records(config.queries)
    serial = records.head(min(config.serial_queries, config.queries))
    scale = len(records) / len(serial)
    answered: dict[str, int] = {}
    async with connect() as client:

        async def candidate() -> None:
            frame = await run_queries(
                connect, records, spec=QuerySpec(MAINTENANCE_KEY), concurrency=config.query_concurrency
            )
            answered["candidate_errors"] = int(frame["QueryError"].notna().sum())
            answered["candidate_rows"] = len(frame)

        async def baseline() -> None:
            answered["baseline_rows"] = await _one_at_a_time(client, serial)

        timings = await alternate_async(candidate, baseline, config.repeats)
    timings.baseline = [seconds * scale for seconds in timings.baseline]
    return ratio_result(
        NAME,
        "run_queries(concurrency) vs a sequential loop of client.run_query (timed on serial_queries, scaled "
        "to all), against a service that answers after a fixed latency",
        timings,
        size={
            "queries": config.queries,
            "serial_queries": len(serial),
            "concurrency": config.query_concurrency,
            "latency_s": config.query_latency_s,
        },
        target=TARGET,
        comparison="at_least",
        info={
            **answered,
            "baseline": f"{len(serial)} queries one at a time, scaled ×{scale:g} to {len(records)}",
            "service": "bench.latency_service: the sandbox's answer after the latency, no matching work",
            "ideal_speed_up": config.query_concurrency,
            "latency_floor_sequential_s": round(config.queries * config.query_latency_s, 3),
            "requests_answered": service.requests,
        },
    )


async def _on_sandbox(config: BenchConfig, queries: int) -> dict[str, float]:
    """One concurrent and one serial run against the in-process sandbox (latency injected), for information:
    there the sandbox's routing and matching share the client's cores."""
    latency = FaultRule(api="address", endpoint="runquery2", kind="delay", value=config.query_latency_s,
                        times=None)  # fmt: skip
    sandbox = SandboxConfig(faults=FaultPlan([latency]))
    connect = partial(sandbox_client, sandbox, transport=SandboxTransport(sandbox))
    records = query_records(queries)
    serial = records.head(max(1, queries // 10))
    started = time.perf_counter()
    await run_queries(connect, records, spec=QuerySpec(MAINTENANCE_KEY), concurrency=config.query_concurrency)
    concurrent_s = time.perf_counter() - started
    async with connect() as client:
        started = time.perf_counter()
        await _one_at_a_time(client, serial)
        serial_s = (time.perf_counter() - started) * len(records) / len(serial)
    return {"queries": queries, "concurrent_s": round(concurrent_s, 3), "serial_scaled_s": round(serial_s, 3),
            "speed_up": round(serial_s / concurrent_s, 2)}  # fmt: skip


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Time ``run_queries(..., concurrency=N)`` (one chunk, as the default task runner runs it) against
    awaiting ``client.run_query`` one by one, both against :class:`LatencyService`; then, for information,
    both once against the in-process sandbox at a fifth of the size."""
    result = asyncio.run(_measure(config))
    result.info["on_the_in_process_sandbox (information)"] = asyncio.run(
        _on_sandbox(config, max(10, config.queries // 5))
    )
    return result
