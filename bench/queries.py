"""Benchmark 4: individual queries (runquery2) with bounded concurrency against one at a time, on an
in-process sandbox that answers each query after a fixed latency, as a network would (target: ≥ 10× faster).
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from bench.config import BenchConfig
from bench.data import NAMES, PRENAMES, SEED, STREETS, TOWNS
from bench.measure import BenchResult, alternate_async, ratio_result
from bench.sandbox_client import MAINTENANCE_KEY, sandbox_client
from connectors.address_service import AddressServiceClient
from sandbox.config import SandboxConfig
from sandbox.faults import FaultPlan, FaultRule
from sandbox.inprocess import SandboxTransport
from tasks.address_service.query import query_fields, run_queries

NAME = "queries"
TARGET = 10.0


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


async def _measure(config: BenchConfig) -> tuple[BenchResult, int]:
    latency = FaultRule(api="address", endpoint="runquery2", kind="delay", value=config.query_latency_s,
                        times=None)  # fmt: skip
    sandbox = SandboxConfig(faults=FaultPlan([latency]))
    records = query_records(config.queries)
    answered: dict[str, int] = {}
    transport = SandboxTransport(sandbox)
    connect = partial(sandbox_client, sandbox, transport=transport)
    async with connect() as client:

        async def candidate() -> None:
            frame = await run_queries(
                connect, records, key=MAINTENANCE_KEY, concurrency=config.query_concurrency
            )
            answered["candidate_errors"] = int(frame["QueryError"].notna().sum())
            answered["candidate_rows"] = len(frame)

        async def baseline() -> None:
            answered["baseline_rows"] = await _one_at_a_time(client, records)

        timings = await alternate_async(candidate, baseline, config.repeats)
    result = ratio_result(
        NAME,
        "run_queries(concurrency) vs a sequential loop of client.run_query, per-request latency injected",
        timings,
        size={
            "queries": config.queries,
            "concurrency": config.query_concurrency,
            "latency_s": config.query_latency_s,
        },
        target=TARGET,
        comparison="at_least",
        info={
            **answered,
            "ideal_speed_up": config.query_concurrency,
            "latency_floor_sequential_s": round(config.queries * config.query_latency_s, 3),
        },
    )
    return result, latency.fired


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Time ``run_queries(..., concurrency=N)`` (one chunk, as the default task runner runs it) against
    awaiting ``client.run_query`` one by one."""
    result, delayed = asyncio.run(_measure(config))
    result.info["requests_delayed"] = delayed
    return result
