"""Benchmark 5: how soon ``wait_for_batch`` sees a batch job finish, as a share of the job's length, and how
many status calls it makes (targets: at most 5 % late, at most 25 calls for a job of an hour). The jobs run
on an in-process sandbox whose clock is simulated: the poller's sleeps move it, so an hour passes at once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
import time
from pathlib import Path

from bench.config import BenchConfig
from bench.measure import BenchResult
from bench.sandbox_client import MAINTENANCE_KEY, sandbox_client
from connectors.address_service import AddressServiceClient, BatchStatus
from sandbox.config import SandboxConfig
from tasks.address_service.batch import wait_for_batch
from tasks.polling import PollPolicy

NAME = "completion"
TARGET = 0.05
DATE_RESOLUTION_S = 0.001
MAX_CALLS = 25
"""Status calls allowed for a job of an hour (scaled linearly for other lengths, at least this many)."""

SMALL_BATCH = (
    "KundenNr;Prename;Name;Streetname;HouseNo;ZIPCode;TownName\r\n"
    "A1;Hans;Muster;Lindenstrasse;12;6010;Kriens\r\n"
).encode("cp1252")


class SimulatedClock:
    """Epoch seconds that move only when the poller sleeps; the sandbox and the poller both read it."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)
        await asyncio.sleep(0)


async def _one_job(
    client: AddressServiceClient, clock: SimulatedClock, job_seconds: float, policy: PollPolicy
) -> dict[str, float]:
    input_token = await client.upload_file(SMALL_BATCH)
    output_token = await client.create_file()
    job = await client.run_batch(MAINTENANCE_KEY, input_token, output_token)
    polls: list[BatchStatus] = []
    final = await wait_for_batch(
        client, job.batch_token, policy=policy, on_status=polls.append, sleep=clock.sleep, clock=clock
    )
    detected = clock()
    assert isinstance(final, BatchStatus) and final.start_date_time is not None  # the policy never parks
    finished = final.start_date_time.timestamp() + job_seconds
    await client.delete_file(input_token)
    await client.delete_file(output_token)
    late = detected - finished
    if -DATE_RESOLUTION_S < late < 0:  # the service's start date carries whole milliseconds only
        late = 0.0
    return {"late_s": late, "late_share": late / job_seconds, "polls": float(len(polls))}


async def _measure(config: BenchConfig, policy: PollPolicy) -> list[dict[str, float]]:
    clock = SimulatedClock()
    sandbox = SandboxConfig(job_seconds=config.job_seconds, clock=clock)
    async with sandbox_client(sandbox) as client:
        return [await _one_job(client, clock, config.job_seconds, policy) for _ in range(config.jobs)]


def allowed_calls(job_seconds: float) -> int:
    """Status calls allowed for a job of ``job_seconds``: 25 per hour, never fewer than 25."""
    return max(MAX_CALLS, round(MAX_CALLS * job_seconds / 3600.0))


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Run ``config.jobs`` jobs one after another on the simulated clock and compare detection with each
    job's true end; the row fails when the lateness or the number of status calls is over its bound."""
    policy = dataclasses.replace(
        PollPolicy(), max_wait_s=max(PollPolicy().max_wait_s, 2 * config.job_seconds)
    )
    jobs = asyncio.run(_measure(config, policy))
    shares = [job["late_share"] for job in jobs]
    calls = [int(job["polls"]) for job in jobs]
    allowed = allowed_calls(config.job_seconds)
    result = BenchResult(
        name=NAME,
        description="wait_for_batch (default PollPolicy, a deadline of twice the job), simulated clock: "
        f"(detected - actual end) / job length ≤ {TARGET:.0%}, and status calls per job ≤ {allowed}",
        size={"jobs": config.jobs, "job_seconds": config.job_seconds},
        repeats=config.jobs,
        target=TARGET,
        comparison="at_most",
        value=statistics.median(shares),
        value_label="median lateness / job length",
        candidate_s=[job["late_s"] for job in jobs],
        info={
            "late_share_per_job": [round(share, 4) for share in shares],
            "max_late_share": round(max(shares), 4),
            "status_calls_per_job": calls,
            "status_calls_allowed": allowed,
            "calls_within_bound": max(calls) <= allowed,
            "clock": "simulated (the poller's sleeps move the sandbox's clock)",
            "poll_policy": {
                "min_interval_s": policy.min_interval_s,
                "max_interval_s": policy.max_interval_s,
                "max_wait_s": policy.max_wait_s,
            },
        },
    )
    result.require(max(calls) <= allowed, f"at most {allowed} status calls per job (made up to {max(calls)})")
    return result
