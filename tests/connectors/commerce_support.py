"""A fake commerce service and authorization server on ``httpx.MockTransport``, written from the spec (not
from the sandbox): routes keyed by method and address, a token endpoint for the three grants, and a record of
every request so tests can check methods, paths, queries, bodies, bearer tokens and token forms."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx
from pydantic import SecretStr

from connectors.commerce import CommerceClient
from connectors.commerce.id_token import Clock
from connectors.commerce.oidc import OidcClient, OidcEndpoints
from connectors.http import ClientOptions
from connectors.limits import ResponseLimits
from connectors.oauth import ClientCredentials, TokenSource
from connectors.paths import CommercePaths, CommerceScopes
from connectors.retry import RetryPolicy

BASE = "https://api.example.test/dcapi"
AUTH = "https://auth.example.test/idp"
TOKEN_URL = f"{AUTH}/OAuth/token"
USERINFO_URL = "https://userinfo.example.test/v1/userinfo"
JWKS_URL = f"{AUTH}/jwks"
CLIENT_ID = "postflows-client"
SECRET = "s3cr3t-value"  # noqa: S105 - one of the secrets the suite's secret watch looks for
TODAY = dt.date(2030, 6, 17)

Reply = Callable[[httpx.Request], httpx.Response]
TokenReply = Callable[[dict[str, str]], httpx.Response]


@dataclass
class Call:
    """One request to the service (anything but the token endpoint)."""

    method: str
    url: str
    path: str
    params: list[tuple[str, str]]
    query: str
    body: Any
    authorization: str | None

    @property
    def scope(self) -> str:
        """The scope of the client-credentials token the call carried (``cc:<scope>:<n>``)."""
        assert self.authorization is not None, f"{self.method} {self.path} carried no Authorization header"
        return self.authorization.removeprefix("Bearer ").split(":")[1]


@dataclass
class TokenCall:
    """One request to the token endpoint."""

    url: str
    form: dict[str, list[str]]
    headers: dict[str, str]

    @property
    def grant(self) -> str:
        return self.form["grant_type"][0]

    def fields(self) -> dict[str, str]:
        """The form as single values (each field must occur once)."""
        assert all(len(values) == 1 for values in self.form.values()), self.form
        return {name: values[0] for name, values in self.form.items()}


def reply(body: Any = None, status: int = 200, *, text: str | None = None) -> Reply:
    """A reply built afresh for each request: JSON ``body``, or plain ``text``."""
    if text is not None:
        return lambda request: httpx.Response(status, text=text)
    if body is None:
        return lambda request: httpx.Response(status)
    return lambda request: httpx.Response(status, json=body)


@dataclass
class FakeCommerce:
    """The service and its authorization server. Client credentials get ``cc:<scope>:<n>`` tokens; the
    refresh grant gets ``user:<n>`` tokens (and a new refresh token when ``rotate`` is set); anything else at
    the token endpoint is answered by ``token_reply``. The first ``token_outage`` token requests get a 503."""

    routes: dict[tuple[str, str], list[Reply]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    token_calls: list[TokenCall] = field(default_factory=list)
    token_reply: TokenReply | None = None
    rotate: bool = False
    revoked: set[str] = field(default_factory=set)
    token_outage: int = 0
    issued: int = 0

    def route(self, method: str, url: str, *replies: Reply | Any) -> None:
        """Answer ``method url`` with ``replies`` in turn (the last one repeats); a non-callable is JSON."""
        self.routes[(method, url)] = [item if callable(item) else reply(item) for item in replies]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url.copy_with(query=None))
        if url == TOKEN_URL:
            return self._token(request)
        body = json.loads(request.content) if request.content else None
        self.calls.append(
            Call(
                request.method,
                url,
                request.url.path,
                list(request.url.params.multi_items()),
                request.url.query.decode(),
                body,
                request.headers.get("Authorization"),
            )
        )
        replies = self.routes.get((request.method, url))
        if replies is None:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        answer = replies.pop(0) if len(replies) > 1 else replies[0]
        return answer(request)

    def api_calls(self, method: str, url: str) -> list[Call]:
        return [call for call in self.calls if (call.method, call.url) == (method, url)]

    @property
    def token_scopes(self) -> list[str]:
        """The scopes of the client-credentials token requests, in order."""
        return [call.fields()["scope"] for call in self.token_calls if call.grant == "client_credentials"]

    def _token(self, request: httpx.Request) -> httpx.Response:
        assert request.method == "POST", request.method
        assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
        form = parse_qs(request.content.decode(), keep_blank_values=True)
        call = TokenCall(str(request.url), form, dict(request.headers))
        self.token_calls.append(call)
        fields = call.fields()
        if self.token_outage:
            self.token_outage -= 1
            return httpx.Response(503, json={"error": "temporarily_unavailable"})
        self.issued += 1
        if call.grant == "client_credentials":
            return _token_response(f"cc:{fields['scope']}:{self.issued}")
        if call.grant == "refresh_token" and self.token_reply is None:
            if fields["refresh_token"] in self.revoked:
                return httpx.Response(
                    400, json={"error": "invalid_grant", "error_description": "refresh token revoked"}
                )
            rotated = {"refresh_token": f"refresh-{self.issued}"} if self.rotate else {}
            return _token_response(f"user:{self.issued}", **rotated)
        assert self.token_reply is not None, f"no token reply for grant {call.grant}"
        return self.token_reply(fields)


def _token_response(access_token: str, **extra: Any) -> httpx.Response:
    body = {"access_token": access_token, "token_type": "Bearer", "expires_in": 3600, **extra}
    return httpx.Response(200, json=body, headers={"Content-Type": "application/json;charset=UTF-8"})


async def no_sleep(seconds: float) -> None:
    return None


def commerce_client(
    server: FakeCommerce,
    *,
    credentials: ClientCredentials | None = None,
    user: TokenSource | None = None,
    scopes: CommerceScopes | None = None,
    paths: CommercePaths | None = None,
    limits: ResponseLimits | None = None,
) -> CommerceClient:
    """A client of ``server`` below a base URL with a path prefix, on a fixed today and without waits."""
    return CommerceClient(
        BASE,
        credentials=credentials or ClientCredentials(TOKEN_URL, CLIENT_ID, SecretStr(SECRET), api="commerce"),
        user=user,
        scopes=scopes,
        paths=paths,
        today=lambda: TODAY,
        options=ClientOptions(
            transport=httpx.MockTransport(server),
            retry=RetryPolicy(max_attempts=3, base_delay=0),
            sleep=no_sleep,
            limits=limits,
        ),
    )


def oidc_client(
    server: FakeCommerce,
    *,
    issuer: str | None = None,
    jwks_url: str | None = JWKS_URL,
    clock: Clock = time.time,
) -> OidcClient:
    """The authorization server's client on ``server``; ``jwks_url`` defaults to :data:`JWKS_URL` (None:
    from the issuer's discovery document)."""
    return OidcClient(
        AUTH,
        client_id=CLIENT_ID,
        client_secret=SecretStr(SECRET),
        endpoints=OidcEndpoints(userinfo_url=USERINFO_URL, issuer=issuer, jwks_url=jwks_url),
        clock=clock,
        options=ClientOptions(
            transport=httpx.MockTransport(server),
            retry=RetryPolicy(max_attempts=3, base_delay=0),
            sleep=no_sleep,
        ),
    )
