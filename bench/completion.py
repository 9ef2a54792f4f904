"""Benchmark 5: how soon ``wait_for_batch`` sees a batch job finish, as a share of the job's length
(target: at most 5 % late). Jobs of known length run on an in-process sandbox with the real clock.
"""

from __future__ import annotations

import asyncio
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
SMALL_BATCH = (
    "KundenNr;Prename;Name;Streetname;HouseNo;ZIPCode;TownName\r\n"
    "A1;Hans;Muster;Lindenstrasse;12;6010;Kriens\r\n"
).encode("cp1252")


async def _one_job(client: AddressServiceClient, job_seconds: float, policy: PollPolicy) -> dict[str, float]:
    input_token = await client.upload_file(SMALL_BATCH)
    output_token = await client.create_file()
    job = await client.run_batch(MAINTENANCE_KEY, input_token, output_token)
    polls: list[BatchStatus] = []
    final = await wait_for_batch(client, job.batch_token, policy=policy, on_status=polls.append)
    detected = time.time()  # the sandbox's clock is epoch time, so both ends are read from the same clock
    assert final.start_date_time is not None
    finished = final.start_date_time.timestamp() + job_seconds
    await client.delete_file(input_token, missing_ok=True)
    await client.delete_file(output_token, missing_ok=True)
    late = detected - finished
    return {"late_s": late, "late_share": late / job_seconds, "polls": float(len(polls))}


async def _measure(config: BenchConfig, policy: PollPolicy) -> list[dict[str, float]]:
    async with sandbox_client(SandboxConfig(job_seconds=config.job_seconds)) as client:
        return [await _one_job(client, config.job_seconds, policy) for _ in range(config.jobs)]


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Run ``config.jobs`` jobs one after another and compare detection with each job's true end."""
    policy = PollPolicy()
    jobs = asyncio.run(_measure(config, policy))
    shares = [job["late_share"] for job in jobs]
    return BenchResult(
        name=NAME,
        description="wait_for_batch (default PollPolicy): (detected - actual end) / job length",
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
            "polls_per_job": [int(job["polls"]) for job in jobs],
            "poll_policy": {
                "min_interval_s": policy.min_interval_s,
                "max_interval_s": policy.max_interval_s,
                "max_wait_s": policy.max_wait_s,
            },
        },
    )
