"""Helpers of the commerce API sandbox tests: a config on a fake clock, tokens minted directly (for the end
users or by client credentials) and a client on the in-process sandbox's commerce mount."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from sandbox.config import SandboxConfig
from sandbox.inprocess import SANDBOX_ORIGIN, SandboxTransport
from tests.sandbox.test_newspaper_support import FakeClock

COMMERCE = f"{SANDBOX_ORIGIN}/commerce"
CLIENT_ID = "sandbox-commerce-client"
HANS = "c0a80101-0000-4000-8000-000000000001"
ANNA = "c0a80101-0000-4000-8000-000000000002"
ANNAS_DOMICILE = "9d8e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a"
HANS_DOMICILE = "5b7c2f1e-3d4a-4c8b-9e6f-0a1b2c3d4e5f"
PERSONAL = "/address/v1/users/current/addresses"


def commerce_sandbox(**settings: Any) -> tuple[SandboxConfig, FakeClock]:
    """A config on a fake clock (Monday 16 June 2025, 09:00 in Zürich)."""
    clock = FakeClock()
    return SandboxConfig(clock=clock, **settings), clock


def mint(config: SandboxConfig, *scopes: str, subject: str | None = None) -> str:
    """An access token for ``scopes``, issued to end user ``subject`` (None: client credentials)."""
    issued = config.tokens.issue(CLIENT_ID, frozenset(scopes), 3600, config.clock(), subject=subject)
    return issued.access_token


@asynccontextmanager
async def commerce_client(
    config: SandboxConfig, *scopes: str, subject: str | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """A client on the commerce mount carrying a token for ``scopes`` (none: no Authorization header)."""
    headers = {"Authorization": f"Bearer {mint(config, *scopes, subject=subject)}"} if scopes else {}
    async with httpx.AsyncClient(
        transport=SandboxTransport(config), base_url=COMMERCE, headers=headers
    ) as http:
        yield http


def address_body(
    street: str = "", number: str = "", zip_code: str = "", city: str = "", **extra: Any
) -> dict[str, Any]:
    """A validation request (§2.2)."""
    body: dict[str, Any] = {
        "addressee": {"firstName": "Hans", "lastName": "Muster"},
        "geographicLocation": {
            "house": {"street": street, "houseNumber": number},
            "zip": {"zip": zip_code, "city": city},
        },
        "logisticLocation": {"postBoxNumber": extra.pop("post_box", "")},
        "fullValidation": True,
    }
    body.update(extra)
    return body


def error_code(response: httpx.Response) -> str:
    """The ``code`` of a commerce error body, checking the body has the sandbox's error shape."""
    body = response.json()
    assert isinstance(body["message"], str) and body["message"], body
    return str(body["code"])
