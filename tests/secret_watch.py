"""A watch on every HTTP request the test suite sends through httpx: each kind of credential may travel only
where it belongs, never in a URL (commerce spec §5, rule 3; RFC 6749 §2.3.1, RFC 6750 §2):

* an OAuth client secret: as the ``client_secret`` field of a form body, or in the body of a Prefect block
  document written (the credentials block ``postflows deploy`` saves);
* a password: inside an ``Authorization: Basic`` header (the encoded header value nowhere else either), or
  in the body of a Prefect block document written (the same block);
* an access token: as the whole ``Authorization: Bearer`` header;
* a refresh token: as the ``refresh_token`` field of a form body, or in the body of a Prefect block document
  written (the ``block:<name>`` token store); an ID token: nowhere.

Requests are observed where httpx hands them to the transport, after the auth flow has run, so the token
requests that auth flows make are seen too. The tokens come from the token answers seen during the test (the
most recent :data:`REMEMBERED_TOKENS`), the passwords from the settings' environment and the Basic headers
seen during the test.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import parse_qs, unquote_plus

import httpx

from runtime.settings import (
    SANDBOX_ADDRESS_PASSWORD,
    SANDBOX_COMMERCE_CLIENT_SECRET,
    SANDBOX_NEWSPAPER_CLIENT_SECRET,
)
from tests.secret_scan import base64_core

KNOWN_SECRETS = (SANDBOX_COMMERCE_CLIENT_SECRET, SANDBOX_NEWSPAPER_CLIENT_SECRET, "s3cr3t-value")
REMEMBERED_TOKENS = 64
# Shorter values (a test's "pw") would be found in unrelated text.
MIN_LENGTH = 8
FORM = "x-www-form-urlencoded"
# Prefect keeps block documents encrypted: a sign-in's refresh token may be written to a Secret block there
# (POSTFLOWS_COMMERCE_TOKEN_STORE=block:<name>).
SECRET_STORE = "/block_documents"


class SecretLeak(AssertionError):
    pass


@dataclass
class IssuedTokens:
    """Tokens from the token answers seen, newest last."""

    access: deque[str] = field(default_factory=lambda: deque(maxlen=REMEMBERED_TOKENS))
    refresh: deque[str] = field(default_factory=lambda: deque(maxlen=REMEMBERED_TOKENS))
    id: deque[str] = field(default_factory=lambda: deque(maxlen=REMEMBERED_TOKENS))
    passwords: deque[str] = field(default_factory=lambda: deque(maxlen=REMEMBERED_TOKENS))

    def learn(self, answer: bytes) -> int:
        """Remember the tokens of a token answer's JSON body; how many were new."""
        try:
            body = json.loads(answer)
        except (UnicodeDecodeError, ValueError):
            return 0
        if not isinstance(body, dict):
            return 0
        new = 0
        for name, kept in (
            ("access_token", self.access),
            ("refresh_token", self.refresh),
            ("id_token", self.id),
        ):
            value = body.get(name)
            if isinstance(value, str) and len(value) >= MIN_LENGTH and value not in kept:
                kept.append(value)
                new += 1
        return new


def watched_secrets() -> tuple[str, ...]:
    """The client secrets: the sandbox's and any ``POSTFLOWS_*_SECRET`` of the environment."""
    from_env = (
        value
        for name, value in os.environ.items()
        if name.startswith("POSTFLOWS_") and name.endswith("_SECRET")
    )
    return tuple(secret for secret in (*KNOWN_SECRETS, *from_env) if secret)


def watched_passwords() -> tuple[str, ...]:
    """The sandbox's password, any ``POSTFLOWS_*_PASSWORD`` of the environment and those of Basic headers
    seen."""
    from_env = (
        value
        for name, value in os.environ.items()
        if name.startswith("POSTFLOWS_") and name.endswith("_PASSWORD")
    )
    candidates = (SANDBOX_ADDRESS_PASSWORD, *from_env, *issued.passwords)
    return tuple(password for password in candidates if len(password) >= MIN_LENGTH)


def check_request(
    request: httpx.Request,
    secrets: Iterable[str],
    *,
    passwords: Iterable[str] = (),
    access_tokens: Iterable[str] = (),
    refresh_tokens: Iterable[str] = (),
    id_tokens: Iterable[str] = (),
) -> None:
    """Raise :class:`SecretLeak` when a credential travels where its kind must not (see the module)."""
    where = f"{request.method} {request.url.path}"
    url = str(request.url)
    urls = (url, unquote_plus(url))
    body = request.content if request.stream is not None and _is_read(request) else b""
    text = body.decode("utf-8", "replace")
    is_form = FORM in request.headers.get("content-type", "")
    texts = (text, unquote_plus(text)) if is_form else (text,)
    form = parse_qs(text) if is_form else {}
    authorization = request.headers.get("authorization", "")
    others = [(name, value) for name, value in request.headers.items() if name.lower() != "authorization"]

    def nowhere_but(
        kind: str, value: str, *, header: bool = False, field_name: str | None = None, stored: bool = False
    ) -> None:
        if any(value in part for part in urls):
            raise SecretLeak(f"a {kind} is in the URL of {where}")
        for name, header_value in others:
            if value in header_value:
                raise SecretLeak(f"a {kind} is in the {name} header of {where}")
        if not header and value in authorization:
            raise SecretLeak(f"a {kind} is in the authorization header of {where}")
        if stored and request.method in {"POST", "PUT", "PATCH"} and SECRET_STORE in request.url.path:
            return
        if any(value in part for part in texts):
            fields = [name for name, values in form.items() if any(value in v for v in values)]
            if field_name is None or fields != [field_name] or form.get(field_name) != [value]:
                where_allowed = f"outside the {field_name} field of a form body" if field_name else ""
                raise SecretLeak(f"a {kind} is in the body of {where} {where_allowed}".rstrip())

    for secret in secrets:
        nowhere_but("client secret", secret, field_name="client_secret", stored=True)
    for password in passwords:
        nowhere_but("password", password, stored=True)
        for spelling in _base64_spellings(password):
            nowhere_but("Basic credential", spelling, header=True)
    for token in access_tokens:
        nowhere_but("access token", token, header=True)
        if token in authorization and authorization != f"Bearer {token}":
            raise SecretLeak(f"an access token is in the authorization header of {where} but not as Bearer")
    for token in refresh_tokens:
        nowhere_but("refresh token", token, field_name="refresh_token", stored=True)
    for token in id_tokens:
        nowhere_but("ID token", token)


@lru_cache(maxsize=256)
def _base64_spellings(password: str) -> tuple[str, ...]:
    """How a password looks inside any base64 text, such as a Basic authorization header."""
    return tuple(base64_core(password.encode(), offset).decode() for offset in range(3))


def _is_read(request: httpx.Request) -> bool:
    try:
        request.content  # noqa: B018 - raises for a stream that has not been read
    except httpx.RequestNotRead:
        return False
    return True


def _is_token_request(request: httpx.Request) -> bool:
    return (
        request.method == "POST"
        and FORM in request.headers.get("content-type", "")
        and _is_read(request)
        and b"grant_type=" in request.content
    )


def _basic_password(request: httpx.Request) -> str | None:
    scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        _, separator, password = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return password if separator and password else None


_original = httpx.AsyncClient._send_single_request
_original_sync = httpx.Client._send_single_request
seen = {"requests": 0, "with_secret": 0, "tokens": 0}
issued = IssuedTokens()
# Set for a test marked ``misplaced_secret``, which sends a secret in the wrong place on purpose.
exempt = False


def _observe(request: httpx.Request) -> None:
    secrets = watched_secrets()
    password = _basic_password(request)
    if password is not None and len(password) >= MIN_LENGTH and password not in issued.passwords:
        issued.passwords.append(password)
    if not exempt:
        check_request(
            request,
            secrets,
            passwords=watched_passwords(),
            access_tokens=issued.access,
            refresh_tokens=issued.refresh,
            id_tokens=issued.id,
        )
    seen["requests"] += 1
    if _is_read(request) and any(secret.encode() in request.content for secret in secrets):
        seen["with_secret"] += 1


def _learn(response: httpx.Response) -> None:
    if response.status_code == 200:
        seen["tokens"] += issued.learn(response.content)


async def _watched(self: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
    _observe(request)
    response = await _original(self, request)
    if _is_token_request(request):
        await response.aread()
        _learn(response)
    return response


def _watched_sync(self: httpx.Client, request: httpx.Request) -> httpx.Response:
    _observe(request)
    response = _original_sync(self, request)
    if _is_token_request(request):
        response.read()
        _learn(response)
    return response


def install() -> None:
    httpx.AsyncClient._send_single_request = _watched  # type: ignore[method-assign]
    httpx.Client._send_single_request = _watched_sync  # type: ignore[method-assign]
