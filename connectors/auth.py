"""Authentication shared by the connectors, as ``httpx.Auth`` classes: pre-emptive HTTP Basic here;
OAuth 2.0 client credentials in :mod:`connectors.oauth`.
"""

from __future__ import annotations

import base64
from collections.abc import Generator

import httpx
from pydantic import SecretStr


class PreemptiveBasicAuth(httpx.Auth):
    """HTTP Basic credentials sent with every request, without waiting for a 401 challenge."""

    def __init__(self, username: str, password: SecretStr) -> None:
        self.username = username
        token = base64.b64encode(f"{username}:{password.get_secret_value()}".encode()).decode("ascii")
        self._header = SecretStr(f"Basic {token}")

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._header.get_secret_value()
        yield request

    def __repr__(self) -> str:
        return f"PreemptiveBasicAuth(username={self.username!r}, password='**********')"
