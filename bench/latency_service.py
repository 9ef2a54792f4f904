"""A service that only waits: an httpx transport answering ``runquery2`` as the sandbox does (the sandbox's
own answer to one query, with each request's Id) after a fixed latency, and costing the process nothing
else. The ``queries`` benchmark measures the client's concurrency with it: a real service does its matching
on its own machines, while the in-process sandbox would charge its routing and matching to the client's
two cores.
"""

from __future__ import annotations

import asyncio
import json

import httpx

from bench.sandbox_client import MAINTENANCE_KEY, sandbox_client
from connectors.http import RequestTraits
from sandbox.config import SandboxConfig
from sandbox.inprocess import SandboxTransport

SAMPLE_FIELDS = {"Prename_in": "Hans", "Name_in": "Muster", "Streetname_in": "Lindenstrasse",
                 "HouseNo_in": "12", "ZipCode_in": "6010", "TownName_in": "Kriens"}  # fmt: skip


class LatencyService(httpx.AsyncBaseTransport):
    """Answers every runquery2 with ``answer`` (its ``Result.Id`` set to the request's) after ``latency_s``.

    Attributes:
        requests: the queries answered.
    """

    def __init__(self, answer: dict[str, object], latency_s: float) -> None:
        head, _, tail = json.dumps(answer).partition('"Id": 0')
        if not tail:
            raise ValueError("the sample answer carries no Result.Id")
        self._head, self._tail = head.encode(), tail.encode()
        self.latency_s = latency_s
        self.requests = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not request.url.path.endswith("/runquery2"):
            return httpx.Response(404)
        record_id = int(json.loads(await request.aread())["address"]["Id"])
        await asyncio.sleep(self.latency_s)
        self.requests += 1
        body = b'%s"Id": %d%s' % (self._head, record_id, self._tail)
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})


async def sample_answer() -> dict[str, object]:
    """The in-process sandbox's answer to one query, its Id set to 0."""
    config = SandboxConfig()
    async with sandbox_client(config, transport=SandboxTransport(config)) as client:
        answer = await client._call(  # noqa: SLF001 - the raw answer, as the service sends it
            "POST",
            "/runquery2",
            "runquery2",
            json={
                "address": {
                    "Id": 0,
                    "Data": [{"FieldName": k, "Value": v} for k, v in SAMPLE_FIELDS.items()],
                },
                "key": MAINTENANCE_KEY,
                "timeout": 10000,
            },  # fmt: skip
            traits=RequestTraits(idempotent=True),
        )
    return answer
