"""Whether a request of a submission has been handed to a transport: token requests of the auth flow do not
count, the API request does, and a client given from outside reports its requests too."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from pydantic import SecretStr

from connectors.errors import AuthFailed
from connectors.http import ApiClient, ClientOptions
from connectors.oauth import ClientCredentials, OAuth2ClientCredentialsAuth
from connectors.sending import install, note_request, watch_sending

BASE = "https://api.example.test"
TOKEN_URL = "https://auth.example.test/OAuth/token"


def client_for(handler: httpx.MockTransport) -> ApiClient:
    credentials = ClientCredentials(TOKEN_URL, "client-1", SecretStr("s3cr3t-value"))
    return ApiClient(
        BASE, auth=OAuth2ClientCredentialsAuth(credentials, ["A"]), options=ClientOptions(transport=handler)
    )


async def test_a_refused_token_hands_over_nothing_of_the_request() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(401, json={"error": "invalid_client"}, request=request)

    async with client_for(httpx.MockTransport(handler)) as client:
        with watch_sending() as watch, pytest.raises(AuthFailed):
            await client.request("POST", "/labels", json={"a": 1})
    assert seen == ["/OAuth/token"] and not watch.started


async def test_a_cancellation_while_the_token_is_asked_for_hands_over_nothing() -> None:
    asked = asyncio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        asked.set()
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async with client_for(httpx.MockTransport(handler)) as client:
        with watch_sending() as watch:
            sending = asyncio.create_task(client.request("POST", "/labels", json={"a": 1}))
            await asked.wait()
            sending.cancel()
            with pytest.raises(asyncio.CancelledError):
                await sending
    assert not watch.started


async def test_the_api_request_is_handed_over_once_the_token_came() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) == TOKEN_URL:
            body = {"access_token": "tok", "token_type": "Bearer", "expires_in": 300}
            return httpx.Response(200, json=body, request=request)
        return httpx.Response(200, json={"ok": True}, request=request)

    async with client_for(httpx.MockTransport(handler)) as client:
        with watch_sending() as watch:
            await client.request("POST", "/labels", json={"a": 1})
    assert watch.started


async def test_a_given_client_reports_once_and_nothing_is_noted_outside_a_watch() -> None:
    given = httpx.AsyncClient()
    install(given)
    ApiClient(BASE, options=ClientOptions(http_client=given))
    assert given.event_hooks["request"] == [note_request]
    await note_request(httpx.Request("POST", BASE))  # no watch running: nothing to note, no error
    await given.aclose()
