"""Flow tests run under the session's Prefect test harness (a real temporary Prefect server, started once and
shared with tests/reliability) against a fresh in-process sandbox per test whose requests are counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from prefect.client.orchestration import get_client
from prefect.exceptions import ObjectNotFound

from runtime.api_limits import ADDRESS_SERVICE, COMMERCE_API, NEWSPAPER_API, forget_known_limits
from sandbox.config import SandboxConfig
from sandbox.faults import FaultRule
from sandbox.inprocess import SandboxTransport, UploadProfile


@pytest.fixture(scope="session", autouse=True)
def _prefect(prefect_harness: None) -> None:
    """Every flow test reports to the session's Prefect test server."""


@pytest.fixture(autouse=True)
def _no_task_retries(_isolated_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Prefect task retries unless a test asks for them: a fault meant to outlast the HTTP retries
    must not be waited out for minutes."""
    monkeypatch.setenv("POSTFLOWS_TASK_RETRIES", "0")


class CountingTransport(httpx.AsyncBaseTransport):
    """The sandbox transport, counting requests by (method, path) and keeping their JSON bodies."""

    def __init__(self, inner: SandboxTransport) -> None:
        self.inner = inner
        self.config = inner.config
        self.calls: Counter[tuple[str, str]] = Counter()
        self.json_bodies: list[tuple[str, Any]] = []  # (path, body) of each request that sent JSON

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.calls[(request.method, request.url.path)] += 1
        if request.headers.get("content-type", "").startswith("application/json"):
            self.json_bodies.append((request.url.path, json.loads(request.content)))
        return await self.inner.handle_async_request(request)

    def upload_refusal(self, key: str, head: bytes, profile: UploadProfile) -> str | None:
        return self.inner.upload_refusal(key, head, profile)

    def count(self, suffix: str) -> int:
        return sum(n for (_, path), n in self.calls.items() if path.endswith(suffix) or f"{suffix}/" in path)


@dataclass
class Sandbox:
    config: SandboxConfig
    transport: CountingTransport
    faults: list[FaultRule] = field(default_factory=list)

    def inject(self, **rule: object) -> None:
        self.config.faults.add(FaultRule.model_validate(rule))


def counted_sandbox(monkeypatch: pytest.MonkeyPatch, config: SandboxConfig) -> Sandbox:
    """The sandbox of ``config``, its requests counted, as the transport every flow of the test talks to."""
    transport = CountingTransport(SandboxTransport(config))
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: transport)
    return Sandbox(config=transport.config, transport=transport)


@pytest.fixture
def sandbox(monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return counted_sandbox(monkeypatch, SandboxConfig(job_seconds=0.4))


@pytest.fixture
def other_sandbox(monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """The sandbox answering every registered guess the other plausible way (``guesses="other"``, see
    :mod:`sandbox.guesses`), with what a guess may move moved (``sandbox.config.with_other_answers``)."""
    return counted_sandbox(monkeypatch, SandboxConfig(job_seconds=0.4, guesses="other"))


@pytest.fixture
def flow_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Settings for one flow test: its own data directory and SQLite history, quick HTTP retries."""
    data_dir = tmp_path / "data"
    monkeypatch.setenv("POSTFLOWS_DATA_DIR", str(data_dir))
    monkeypatch.setenv("POSTFLOWS_DATABASE_URL", f"sqlite:///{data_dir / 'history.db'}")
    monkeypatch.setenv("POSTFLOWS_HTTP_MAX_ATTEMPTS", "2")
    for name in ("URL", "TOKEN_URL", "CLIENT_ID", "CLIENT_SECRET"):
        monkeypatch.delenv(f"POSTFLOWS_NEWSPAPER_{name}", raising=False)
    return data_dir


def dask_task_runner(*, processes: bool) -> Any:
    """A task runner on a local Dask cluster of two workers, started for one flow run (no dashboard port to
    collide on)."""
    from prefect_dask.task_runners import DaskTaskRunner

    return DaskTaskRunner(
        cluster_kwargs={
            "n_workers": 2,
            "threads_per_worker": 2,
            "processes": processes,
            "dashboard_address": ":0",
        }
    )


async def delete_api_limits() -> None:
    """The per-API rate limits gone from the test server. A test that makes them (``postflows setup``) deletes
    them again: the server is shared by the flow tests of its process, and a limit left behind would hold
    every later run's requests to its rate."""
    async with get_client() as client:
        for name in (ADDRESS_SERVICE, NEWSPAPER_API, COMMERCE_API):
            with contextlib.suppress(ObjectNotFound):
                await client.delete_global_concurrency_limit_by_name(name)
    forget_known_limits()


async def delete_automations() -> None:
    """The automations of ``postflows setup`` gone from the test server (a test making them deletes them)."""
    from deployments.automations import CRASH_SILENT_RUNS, NOTIFY_FAILURES, RETRY_CRASHED_RUNS

    async with get_client() as client:
        for name in (CRASH_SILENT_RUNS, RETRY_CRASHED_RUNS, NOTIFY_FAILURES):
            for automation in await client.read_automations_by_name(name):
                await client.delete_automation(automation.id)


async def delete_work_pools() -> None:
    """The catalog's work pools gone from the test server (``postflows setup`` makes them)."""
    from deployments.deploy import pool_names, pools_by_deployment

    async with get_client() as client:
        for pool in pool_names(pools_by_deployment()):
            with contextlib.suppress(ObjectNotFound):
                await client.delete_work_pool(pool)


@pytest.fixture
def setup_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The environment of ``postflows setup`` or ``deploy`` on the test server, as a user sets it; the limits
    and automations they make are deleted afterwards, and the catalog's work pools."""
    from prefect.settings import PREFECT_API_URL

    monkeypatch.setenv("PREFECT_API_URL", str(PREFECT_API_URL.value()))
    monkeypatch.setenv("POSTFLOWS_DATA_DIR", str(tmp_path / "data"))
    yield
    asyncio.run(delete_automations())
    asyncio.run(delete_api_limits())
    asyncio.run(delete_work_pools())


@pytest.fixture
async def address_query_deployment() -> AsyncIterator[UUID]:
    """The address-query deployment as `postflows serve` builds it, on the test server (nothing runs it)."""

    from deployments.catalog import CATALOG
    from deployments.serve import build, close_parameter_schema

    (spec,) = [spec for spec in CATALOG if spec.name == "address-query"]
    runner_deployment = await asyncio.to_thread(build, spec)  # built as serve builds it: outside a loop
    deployment_id: UUID = await runner_deployment.apply()
    async with get_client() as client:
        await close_parameter_schema(client, deployment_id, spec)  # as serve closes it after each apply
    yield deployment_id
    async with get_client() as client:
        await client.delete_deployment(deployment_id)
