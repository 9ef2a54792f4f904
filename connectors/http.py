"""The shared HTTP core: one async client base with explicit timeouts, the retry loop and a request log.

Every connector subclasses :class:`ApiClient`. The transport is injectable (``http_client=`` or
``transport=``) so tests, the embedded sandbox and benchmarks plug in without patching. The request log
carries method, path, status, attempt and duration only: never headers, query strings or bodies.

Every answer is bounded (:class:`~connectors.limits.ResponseLimits`): a body is read in chunks no further
than its byte limit, JSON deeper than the nesting limit is refused before it is parsed, and each attempt
has a total deadline beside the per-read timeout, from sending to the last byte of the body, a streamed
download's included. A failure while a body streams is the same typed error as one before the status line.

Whether a failed request was sent is decided here and only here, by the exception's type and by which
request of the auth flow failed (:func:`connectors.sending.transport_failure`), never by comparing addresses.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self, cast

import httpx

from connectors import sending
from connectors.bodies import GuardedBody, read_body, with_body
from connectors.errors import (
    ApiError,
    DeadlineExceeded,
    JsonTooDeep,
    RateLimited,
    error_for_http_status,
)
from connectors.jsontext import json_nesting_exceeds
from connectors.limits import (
    BODY_LIMIT_EXTENSION,
    HTTP_DEADLINE_SETTING,
    JSON_MAX_DEPTH,
    BodyLimit,
    ResponseLimits,
)
from connectors.ratelimit import Pacer, WindowGate
from connectors.retry import RetryPolicy

logger = logging.getLogger("postflows.http")

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)

ResponseCheck = Callable[[httpx.Response], None]


@dataclass(frozen=True)
class RequestRecord:
    """One attempt of one remote call, as the request log sees it."""

    api: str
    method: str
    path: str
    attempt: int
    duration_s: float
    status_code: int | None
    outcome: str  # "ok" or the error class name
    error: str | None = None


RequestLog = Callable[[RequestRecord], None]
BeforeRequest = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class ClientOptions:
    """How a client reaches its service, the same for every connector client (see :class:`ApiClient`).

    Attributes:
        http_client: an ``httpx.AsyncClient`` to use; the caller keeps ownership of it.
        transport: a transport for the client built here when ``http_client`` is not given.
        timeout: explicit timeouts for the client built here.
        retry: the policy for transient failures; None: the default :class:`RetryPolicy`.
        request_log: called once per attempt with a :class:`RequestRecord`.
        sleep: the coroutine used between retries (tests pass a recorder).
        window_gate: the gate for per-window limits; pass one to share it between clients of a run.
        pacer: spaces the requests sent with ``paced=True`` (those a service counts against a per-minute
            limit); pass one to share it between clients of a run. None: they go as they come.
        before_request: awaited before every attempt is sent (the composition root takes a slot of a
            shared rate limit here); it may wait, never changes the request.
        limits: how much of an answer is read and how long an attempt may take; None: the defaults.
    """

    http_client: httpx.AsyncClient | None = None
    transport: httpx.AsyncBaseTransport | None = None
    timeout: httpx.Timeout | float = field(default_factory=lambda: DEFAULT_TIMEOUT)
    retry: RetryPolicy | None = None
    request_log: RequestLog | None = None
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    window_gate: WindowGate | None = None
    pacer: Pacer | None = None
    before_request: BeforeRequest | None = None
    limits: ResponseLimits | None = None


@dataclass(frozen=True)
class RequestTraits:
    """What the core must know of one request beyond its address and body.

    Attributes:
        idempotent: whether it may be sent again after a failure of unknown outcome; None: by its method
            (GET, HEAD, OPTIONS, DELETE and PUT are).
        paced: it waits for its turn at the client's pacer (if it has one) before every attempt.
        transfer: it moves a file (an upload, a download, a document answer), which has a download's
            deadline.
        body_limit: the most bytes of its answer read; None: the client's limit.
    """

    idempotent: bool | None = None
    paced: bool = False
    transfer: bool = False
    body_limit: BodyLimit | None = None


PLAIN = RequestTraits()
"""A request whose method decides whether it is idempotent, unpaced, with the client's limits."""


class ApiClient:
    """Base of every connector client.

    Args:
        base_url: the API's base address; request paths are appended to it.
        auth: an ``httpx.Auth`` applied to every request unless a call passes its own.
        options: how the service is reached (:class:`ClientOptions`); None: the defaults.
    """

    api_name: ClassVar[str] = "api"

    def __init__(
        self, base_url: str, *, auth: httpx.Auth | None = None, options: ClientOptions | None = None
    ) -> None:
        options = options or ClientOptions()
        self.base_url = base_url.rstrip("/")
        self._auth = auth
        self._owns_client = options.http_client is None
        self._http = options.http_client or httpx.AsyncClient(
            transport=options.transport, timeout=options.timeout
        )
        sending.install(self._http)  # a submission's proof that it never left (connectors.sending)
        self.retry = options.retry or RetryPolicy()
        self._request_log = options.request_log
        self._sleep = options.sleep
        self.window_gate = options.window_gate or WindowGate(sleep=options.sleep)
        self.pacer = options.pacer
        self._before_request = options.before_request
        self.limits = options.limits or ResponseLimits()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_client:
            await self._http.aclose()

    def url(self, path: str) -> str:
        """``path`` below the base URL; an absolute URL (another host of the same API) is kept."""
        if "://" in path:
            return path
        return f"{self.base_url}/{path.lstrip('/')}"

    async def request(
        self,
        method: str,
        path: str,
        *,
        check: ResponseCheck | None = None,
        auth: httpx.Auth | None = None,
        traits: RequestTraits = PLAIN,
        **kwargs: Any,
    ) -> httpx.Response:
        """Send a request, retrying transient failures; return the checked response, its body read.

        ``check`` evaluates the body (service status codes, error arrays) and raises a typed error.
        A request that changes something (POST unless ``traits.idempotent``) is retried only when the
        failure proves that the service did not act on it: it was never sent, or the service refused it as
        rate-limited. After a failure whose outcome is unknown (read timeout, dropped connection, a passed
        deadline, 5xx, an unreadable answer, an internal service error) it is never sent again. A per-window
        limit closes the client's window gate until the next window; those waits do not use up the attempts.
        ``traits`` also say whether every attempt waits for the client's pacer, and how much of the answer
        is read within which deadline (:class:`RequestTraits`).
        """
        safe = traits.idempotent if traits.idempotent is not None else method.upper() in _IDEMPOTENT
        limit = traits.body_limit or self.limits.body
        seconds = self.limits.deadline_for(transfer=traits.transfer)
        tries = _Tries()
        while True:
            tries.attempt += 1
            await self._ready(paced=traits.paced)
            started = time.monotonic()
            status: int | None = None
            request = self._http.build_request(method, self.url(path), **kwargs)
            try:
                streamed = await self._send(request, auth, seconds)
                status = streamed.status_code
                try:
                    response = await self._read(streamed, limit)
                finally:
                    await streamed.aclose()
                if response.is_error:
                    raise self.error_for_response(response)
                if check is not None:
                    check(response)
            except ApiError as error:
                self._log(method, path, tries.attempt, started, status, error)
                await self._recover(error, safe=safe, tries=tries)
                continue
            self._log(method, path, tries.attempt, started, status, None)
            return response

    async def _recover(self, error: ApiError, *, safe: bool, tries: _Tries) -> None:
        """Return once the failed request may be sent again (after the wait it needs); else raise ``error``.

        A request that is not ``safe`` is never sent again after a failure of unknown outcome. A per-window
        limit waits for the next window without using up an attempt, at most ``max_window_waits`` times.
        """
        if isinstance(error, RateLimited) and not self.retry.rate_limited_not_processed:
            error.before_work = False
        if not safe and error.outcome_unknown:
            raise error
        if error.window_s and error.retryable and tries.window_waits < self.retry.max_window_waits:
            tries.window_waits += 1
            tries.attempt -= 1
            wait = self.window_gate.close_for_window(error.window_s)
            logger.info("%s: %s; waiting %.1fs for the next window", self.api_name, error, wait)
            return
        await self._retry_or_raise(error, tries.attempt)

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        path: str,
        *,
        check: ResponseCheck | None = None,
        auth: httpx.Auth | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[httpx.Response]:
        """Open a streamed response (a download); retries happen only until the status line is checked.

        The caller reads the body through the core: a failure while it streams is raised as a typed
        :class:`~connectors.errors.TransportFailure` (a retry of the caller's whole step may follow), and
        the download's deadline holds until the last byte. The attempt is logged when the block ends.
        """
        seconds = self.limits.deadline_for(transfer=True)
        attempt = 0
        while True:
            attempt += 1
            await self._ready(paced=False)
            started = time.monotonic()
            request = self._http.build_request(method, self.url(path), **kwargs)
            try:
                response = await self._send(request, auth, seconds)
            except ApiError as error:
                self._log(method, path, attempt, started, None, error)
                await self._retry_or_raise(error, attempt)
                continue
            try:
                if response.is_error:
                    raise self.error_for_response(await self._read(response, self.limits.body))
                if check is not None:
                    check(response)
            except ApiError as error:
                await response.aclose()
                self._log(method, path, attempt, started, response.status_code, error)
                await self._retry_or_raise(error, attempt)
                continue
            ended: BaseException | None = None
            try:
                yield response
            except BaseException as exc:
                ended = exc
                raise
            finally:
                await response.aclose()
                self._log(method, path, attempt, started, response.status_code, ended)
            return

    async def _send(self, request: httpx.Request, auth: httpx.Auth | None, seconds: float) -> httpx.Response:
        """Send one attempt and return its response with the body still to come, read through a
        :class:`~connectors.bodies.GuardedBody`; the attempt has ``seconds`` in all, body included."""
        deadline = asyncio.get_running_loop().time() + seconds
        request.extensions[BODY_LIMIT_EXTENSION] = self.limits.body
        timer = asyncio.timeout_at(deadline)
        try:
            async with timer:
                response = await self._dispatch(request, auth)
        except httpx.TransportError as exc:
            raise sending.transport_failure(exc, self.api_name, request=request) from exc
        except TimeoutError as exc:
            if not timer.expired():
                raise
            raise self._late(request, seconds) from exc

        def failed(exc: httpx.TransportError | TimeoutError) -> ApiError:
            if isinstance(exc, httpx.TransportError):
                return sending.transport_failure(exc, self.api_name, request=request)
            return self._late(request, seconds)

        # An AsyncClient's responses stream asynchronously.
        stream = cast(httpx.AsyncByteStream, response.stream)
        response.stream = GuardedBody(stream, deadline=deadline, failed=failed)
        return response

    async def _read(self, response: httpx.Response, limit: BodyLimit) -> httpx.Response:
        """The answer with its body read within ``limit``. A success answer over it, or JSON nested too
        deep, is refused; an error answer is cut at the limit, and its body dropped when it nests too deep,
        so its status alone is mapped."""
        if response.is_error:
            read = await read_body(response, limit, api=self.api_name, cut=True)
            return with_body(read, b"") if json_nesting_exceeds(read.content) else read
        read = await read_body(response, limit, api=self.api_name)
        if json_nesting_exceeds(read.content):
            request = response.request
            raise JsonTooDeep(
                f"{self.api_name}: the answer to {request.method} {request.url.path} nests arrays and "
                f"objects deeper than {JSON_MAX_DEPTH} levels; not read",
                api=self.api_name,
            )
        return read

    def _late(self, request: httpx.Request, seconds: float) -> DeadlineExceeded:
        return DeadlineExceeded(
            f"{self.api_name}: no whole answer to {request.method} {request.url.path} within the deadline "
            f"of {seconds:g} s ({HTTP_DEADLINE_SETTING})",
            api=self.api_name,
        )

    async def _ready(self, *, paced: bool) -> None:
        """Wait until an attempt may go: the window gate, the before-request hook, the pacer if ``paced``."""
        await self.window_gate.wait()
        if self._before_request is not None:
            await self._before_request()
        if paced and self.pacer is not None:
            await self.pacer.wait()

    def error_for_response(self, response: httpx.Response) -> ApiError:
        """The typed error for a non-success response; a connector overrides it to read its error bodies."""
        return error_for_http_status(response, api=self.api_name)

    async def _dispatch(self, request: httpx.Request, auth: httpx.Auth | None) -> httpx.Response:
        """Send ``request`` with ``auth``, else the client's own, else the ``httpx.AsyncClient``'s default."""
        chosen = auth or self._auth
        if chosen is None:
            return await self._http.send(request, stream=True)
        return await self._http.send(request, auth=chosen, stream=True)

    async def _retry_or_raise(self, error: ApiError, attempt: int) -> None:
        if not self.retry.should_retry(error, attempt):
            raise error
        wait = self.retry.delay(error, attempt)
        logger.info("%s: retrying after %s (attempt %d, waiting %.2fs)", self.api_name, error, attempt, wait)
        await self._sleep(wait)

    def _log(
        self,
        method: str,
        path: str,
        attempt: int,
        started: float,
        status: int | None,
        error: BaseException | None,
    ) -> None:
        record = RequestRecord(
            api=self.api_name,
            method=method.upper(),
            path=path.split("?", 1)[0],  # absolute URLs keep their host: they never carry credentials
            attempt=attempt,
            duration_s=time.monotonic() - started,
            status_code=status,
            outcome="ok" if error is None else type(error).__name__,
            error=None if error is None else str(error),
        )
        logger.debug("%s %s %s -> %s (%s)", record.api, record.method, record.path, status, record.outcome)
        if self._request_log is not None:
            self._request_log(record)


_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "DELETE", "PUT"})


@dataclass
class _Tries:
    """The attempts of one request so far, and the waits for a next window among them."""

    attempt: int = 0
    window_waits: int = 0
