"""Signing a user in through a redirect URI this machine cannot listen on: the pasted redirect finishes
the sign-in, and without it the sign-in is refused before the authorization server is asked anything."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import SecretStr

from connectors.commerce.oidc import AuthorizationRequest, UserTokens
from connectors.errors import LoginFailed
from postflows.commerce_login import SignInDialogue, SignInRequest, sign_in
from tasks.commerce.token_store import SavedLogin

REMOTE_REDIRECT = "https://app.example.test/signed-in"


class _AuthorizationServer:
    """Stands in for the OIDC client: records what the sign-in began with and was finished with."""

    def __init__(self) -> None:
        self.begun: list[tuple[str, tuple[str, ...], str | None]] = []
        self.finished: list[str] = []

    def begin(self, redirect_uri: str, scopes: tuple[str, ...], *, login_hint: str | None = None) -> Any:
        self.begun.append((redirect_uri, scopes, login_hint))
        return AuthorizationRequest("https://auth.example.test/authorize?x=1", redirect_uri, scopes, "s", "n")

    async def finish(self, request: AuthorizationRequest, redirect: str) -> UserTokens:
        self.finished.append(redirect)
        claims = {"sub": "user-7", "preferred_username": "ann"}
        return UserTokens(None, SecretStr("refresh-secret"), claims, frozenset(request.scopes))  # type: ignore[arg-type]


class _Store:
    where = "the test's store"

    def __init__(self) -> None:
        self.saved: list[SavedLogin] = []

    def save(self, login: SavedLogin) -> None:
        self.saved.append(login)


def test_a_pasted_redirect_finishes_a_sign_in_this_machine_cannot_listen_for() -> None:
    server, store, said, opened = _AuthorizationServer(), _Store(), [], []

    async def browser(url: str) -> None:
        opened.append(url)

    async def pasted() -> str:
        return f"{REMOTE_REDIRECT}?code=c&state=s"

    request = SignInRequest(REMOTE_REDIRECT, ("openid", "address"), login_hint="ann@example.test")
    dialogue = SignInDialogue(said.append, browser=browser, pasted_redirect=pasted)

    result = asyncio.run(sign_in(server, store, request, dialogue))  # type: ignore[arg-type]

    assert server.begun == [(REMOTE_REDIRECT, ("openid", "address"), "ann@example.test")]
    assert server.finished == [f"{REMOTE_REDIRECT}?code=c&state=s"]
    assert said[1] == opened[0] == "https://auth.example.test/authorize?x=1"
    assert (result.subject, result.username, result.scopes) == ("user-7", "ann", ("address", "openid"))
    [saved] = store.saved
    assert saved.refresh_token.get_secret_value() == "refresh-secret" and saved.subject == "user-7"
    assert all("refresh-secret" not in line for line in said)


def test_without_a_pasted_redirect_a_remote_redirect_uri_is_refused_before_anything_is_asked() -> None:
    server, store = _AuthorizationServer(), _Store()
    request = SignInRequest(REMOTE_REDIRECT, ("openid",))

    with pytest.raises(LoginFailed, match="not a loopback address .* with --redirect"):
        asyncio.run(sign_in(server, store, request, SignInDialogue(lambda line: None)))  # type: ignore[arg-type]

    assert server.begun == [] and store.saved == []
