"""What the crash-resume tests hold a process with: a ``hold`` fault (a request whose client is killed while
it waits is never processed), a ``late_answer`` fault (the work is done before the client learns of it) and
``/_sandbox/stored`` (what the APIs hold, so a test can prove no file was left behind)."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import httpx
import pytest
from starlette.types import Message

from sandbox.app import create_app
from sandbox.faults import FaultRule
from sandbox.inprocess import SANDBOX_ORIGIN
from tests.sandbox.test_address_support import PASSWORD, USER, address_client, create_output, make_config

pytestmark = pytest.mark.asyncio


async def _stored(client: httpx.AsyncClient) -> dict[str, list[str]]:
    stored: dict[str, list[str]] = (await client.get(f"{SANDBOX_ORIGIN}/_sandbox/stored")).json()
    return stored


async def test_stored_lists_files_until_they_are_deleted() -> None:
    async with address_client() as client:
        assert await _stored(client) == {
            "address_files": [],
            "address_jobs": [],
            "newspaper_orders": [],
            "newspaper_purchases": [],
            "statistics_uploads": [],
        }
        token = await create_output(client)
        assert (await _stored(client))["address_files"] == [token]
        assert (await client.get(f"/deletefile/{token}")).json() == {"Status": 0}
        assert (await _stored(client))["address_files"] == []


async def test_a_held_request_whose_client_stays_is_processed() -> None:
    config = make_config()
    config.faults.add(FaultRule(api="address", endpoint="createfile", kind="hold", value=0.2))
    async with address_client(config) as client:
        token = await create_output(client)
        assert (await _stored(client))["address_files"] == [token]
    assert config.faults.rules[0].fired == 1


async def test_a_held_request_whose_client_goes_away_is_never_processed() -> None:
    config = make_config()
    config.faults.add(FaultRule(api="address", endpoint="createfile", kind="hold", value=30))
    app = create_app(config)
    credentials = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/address/REST/v1/createfile",
        "raw_path": b"/address/REST/v1/createfile",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"sandbox"), (b"authorization", f"Basic {credentials}".encode())],
        "client": ("127.0.0.1", 1),
        "server": ("sandbox", 80),
    }
    incoming: list[Message] = [
        {"type": "http.request", "body": b"", "more_body": False},
        {"type": "http.disconnect"},  # the process was killed while its request was held
    ]
    sent: list[Message] = []

    async def receive() -> Message:
        return incoming.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    await asyncio.wait_for(app(scope, receive, send), 5)
    assert sent == []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=SANDBOX_ORIGIN) as client:
        assert (await _stored(client))["address_files"] == []
        counted = (await client.get("/_sandbox/requests")).json()
    assert counted == [{"api": "address", "method": "GET", "endpoint": "createfile", "count": 1}]


async def test_a_late_answer_comes_after_the_work_is_done() -> None:
    config = make_config()
    config.faults.add(FaultRule(api="address", endpoint="createfile", kind="late_answer", value=0.5))
    async with address_client(config) as client:
        answer = asyncio.ensure_future(client.get("/createfile"))
        for _ in range(100):
            files = (await _stored(client))["address_files"]
            if files:
                break
            await asyncio.sleep(0.01)
        assert len(files) == 1 and not answer.done()
        body = (await answer).json()["CreateFileResult"]
        assert body == {"FileToken": files[0], "Status": 0}
