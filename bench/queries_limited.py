"""Benchmark: individual queries against a service that allows so many a minute (the sandbox answers Status
106 beyond it). The client paces itself at the configured limit
(``POSTFLOWS_ADDRESS_SERVICE_QUERIES_PER_MINUTE``) instead of running into the limit and waiting out the
minute. Value: the total time ÷ the least time the limit allows (queries ÷ limit); target ≤ 1.05, and at
most 1 % of the queries answered 106.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from pathlib import Path

from bench.config import BenchConfig
from bench.measure import BenchResult
from bench.queries import query_records
from runtime.settings import Settings
from runtime.wiring import address_service_client
from sandbox.config import SandboxConfig
from sandbox.faults import FaultPlan, FaultRule
from sandbox.inprocess import SandboxTransport
from tasks.address_service.query import QuerySpec, run_queries
from tasks.sending import SendCounter

NAME = "queries_limited"
TARGET = 1.05
MAX_THROTTLED_SHARE = 0.01
THROTTLED = "ThrottledStatusError"


async def _measure(config: BenchConfig, workdir: Path) -> tuple[float, SendCounter, int]:
    latency = FaultRule(api="address", endpoint="runquery2", kind="delay", value=config.query_latency_s,
                        times=None)  # fmt: skip
    sandbox = SandboxConfig(faults=FaultPlan([latency]), max_queries_per_minute=config.queries_per_minute)
    settings = Settings(
        _env_file=None,
        data_dir=workdir,
        address_service_queries_per_minute=config.queries_per_minute,
    )
    transport = SandboxTransport(sandbox)
    connect = partial(address_service_client, settings, transport=transport)
    records = query_records(config.limited_queries)
    sends = SendCounter()
    started = time.perf_counter()
    frame = await run_queries(
        connect,
        records,
        spec=QuerySpec(settings.address_service.query_key),
        concurrency=config.query_concurrency,
        sends=sends,
    )
    elapsed = time.perf_counter() - started
    return elapsed, sends, int(frame["QueryError"].notna().sum())


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """One run of ``run_queries`` (concurrency as in ``queries``) through the wiring's paced client."""
    elapsed, sends, failed = asyncio.run(_measure(config, workdir))
    minimum = config.limited_queries / config.queries_per_minute * 60.0
    throttled = sends.outcomes.get(THROTTLED, 0)
    share = throttled / max(1, sends.total)
    result = BenchResult(
        name=NAME,
        description="run_queries with the address service's queries-per-minute setting against a sandbox "
        "that answers 106 beyond that limit: total time ÷ (queries ÷ limit)",
        size={
            "queries": config.limited_queries,
            "per_minute": config.queries_per_minute,
            "concurrency": config.query_concurrency,
            "latency_s": config.query_latency_s,
        },
        repeats=1,
        target=TARGET,
        comparison="at_most",
        value=elapsed / minimum,
        value_label="total time / minimum the limit allows",
        candidate_s=[elapsed],
        info={
            "minimum_s": round(minimum, 2),
            "queries_sent": sends.total,
            "sends_by_outcome": dict(sends.outcomes),
            "answered_106_share": round(share, 5),
            "rows_with_error": failed,
        },
    )
    result.require(share <= MAX_THROTTLED_SHARE, f"at most {MAX_THROTTLED_SHARE:.0%} of queries answered 106")
    result.require(failed == 0, "every query answered")
    return result
