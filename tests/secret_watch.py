"""A watch on every HTTP request the test suite sends through httpx: an OAuth client secret may travel only
as the ``client_secret`` field of a form body, never in a URL, a header or a JSON body (commerce spec §5,
rule 3). Requests are observed where httpx hands them to the transport, after the auth flow has run, so the
token requests that auth flows make are seen too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from urllib.parse import parse_qs, unquote_plus

import httpx

from postflows.settings import SANDBOX_COMMERCE_CLIENT_SECRET, SANDBOX_NEWSPAPER_CLIENT_SECRET

KNOWN_SECRETS = (SANDBOX_COMMERCE_CLIENT_SECRET, SANDBOX_NEWSPAPER_CLIENT_SECRET, "s3cr3t-value")


class SecretLeak(AssertionError):
    pass


def watched_secrets() -> tuple[str, ...]:
    from_env = (
        value
        for name, value in os.environ.items()
        if name.startswith("POSTFLOWS_") and name.endswith("_SECRET")
    )
    return tuple(secret for secret in (*KNOWN_SECRETS, *from_env) if secret)


def check_request(request: httpx.Request, secrets: Iterable[str]) -> None:
    """Raise :class:`SecretLeak` when a secret appears outside a form body's ``client_secret`` field."""
    url = unquote_plus(str(request.url))
    body = request.content if request.stream is not None and _is_read(request) else b""
    text = body.decode("utf-8", "replace")
    form = parse_qs(text) if "x-www-form-urlencoded" in request.headers.get("content-type", "") else {}
    for secret in secrets:
        if secret in url:
            raise SecretLeak(f"a client secret is in the URL of {request.method} {request.url.path}")
        for name, value in request.headers.items():
            if secret in value:
                raise SecretLeak(
                    f"a client secret is in the {name} header of {request.method} {request.url.path}"
                )
        if secret in text or secret in unquote_plus(text):
            fields = [name for name, values in form.items() if any(secret in value for value in values)]
            if fields != ["client_secret"] or form.get("client_secret") != [secret]:
                raise SecretLeak(
                    f"a client secret is in the body of {request.method} {request.url.path} "
                    "outside the client_secret field of a form body"
                )


def _is_read(request: httpx.Request) -> bool:
    try:
        request.content  # noqa: B018 - raises for a stream that has not been read
    except httpx.RequestNotRead:
        return False
    return True


_original = httpx.AsyncClient._send_single_request
_original_sync = httpx.Client._send_single_request
seen = {"requests": 0, "with_secret": 0}
# Set for a test marked ``misplaced_secret``, which sends a secret in the wrong place on purpose.
exempt = False


def _observe(request: httpx.Request) -> None:
    secrets = watched_secrets()
    if not exempt:
        check_request(request, secrets)
    seen["requests"] += 1
    if _is_read(request) and any(secret.encode() in request.content for secret in secrets):
        seen["with_secret"] += 1


async def _watched(self: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
    _observe(request)
    return await _original(self, request)


def _watched_sync(self: httpx.Client, request: httpx.Request) -> httpx.Response:
    _observe(request)
    return _original_sync(self, request)


def install() -> None:
    httpx.AsyncClient._send_single_request = _watched  # type: ignore[method-assign]
    httpx.Client._send_single_request = _watched_sync  # type: ignore[method-assign]
