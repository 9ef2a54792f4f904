"""The composition root: builds connector clients from :class:`~runtime.settings.Settings`.

An unset service URL selects the embedded sandbox where it is allowed (``POSTFLOWS_SANDBOX``; a deployment
run needs it set: :func:`~runtime.endpoints.require_sandbox_allowed`), served in-process (one per process)
and keeping its state in ``<data dir>/sandbox``, so an order or job outlives the process and a later run
finds it. Nothing below this module knows the sandbox exists.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

import httpx
from pydantic import SecretStr

from connectors.address_service import AddressServiceClient
from connectors.commerce import CommerceClient
from connectors.commerce.oidc import OidcClient, OidcEndpoints, UserSession
from connectors.http import ClientOptions, RequestLog
from connectors.limits import ResponseLimits
from connectors.newspaper import NewspaperClient
from connectors.oauth import ClientCredentials
from connectors.ratelimit import Pacer, WindowGate
from connectors.retry import RetryPolicy
from history.identity import Endpoint
from runtime.api_limits import ADDRESS_SERVICE, COMMERCE_API, NEWSPAPER_API, RateLimitHook
from runtime.endpoints import Api as Api  # re-exported: callers import these from here too
from runtime.endpoints import ConfigurationError as ConfigurationError
from runtime.endpoints import api_settings as api_settings
from runtime.endpoints import api_url as api_url
from runtime.endpoints import describe_address_service as describe_address_service
from runtime.endpoints import describe_commerce as describe_commerce
from runtime.endpoints import describe_newspaper as describe_newspaper
from runtime.endpoints import require_sandbox_allowed, require_settings
from runtime.settings import (
    SANDBOX_ADDRESS_PASSWORD,
    SANDBOX_ADDRESS_USER,
    SANDBOX_COMMERCE_CLIENT_ID,
    SANDBOX_COMMERCE_CLIENT_SECRET,
    SANDBOX_NEWSPAPER_CLIENT_ID,
    SANDBOX_NEWSPAPER_CLIENT_SECRET,
    Settings,
    get_settings,
)
from runtime.settings.apis import AddressServiceSettings
from runtime.settings.variables import variable_named
from tasks.commerce.token_store import SavedLogin, TokenStore, login_name, now_text, token_store

logger = logging.getLogger("postflows")
T = TypeVar("T")


@lru_cache(maxsize=4)
def _sandbox_transport(
    job_seconds: float,
    faults: str | None,
    state_dir: Path,
    alignments: str | None,
    order_statuses: str | None,
    ping_answer: str,
    guesses: str = "ours",
) -> httpx.AsyncBaseTransport:
    from sandbox.address_service.alignments import AlignmentError, alignments_setting
    from sandbox.config import DEFAULT_ORDER_STATUSES, SandboxConfig, parse_order_statuses
    from sandbox.faults import FaultPlan
    from sandbox.inprocess import SandboxTransport

    try:
        agreed = alignments_setting(alignments)
    except AlignmentError as error:
        raise ConfigurationError(f"POSTFLOWS_SANDBOX_ALIGNMENTS: {error}") from None
    try:
        statuses = DEFAULT_ORDER_STATUSES if order_statuses is None else parse_order_statuses(order_statuses)
    except ValueError as error:
        raise ConfigurationError(f"POSTFLOWS_SANDBOX_ORDER_STATUSES: {error}") from None
    config = SandboxConfig(
        job_seconds=job_seconds,
        faults=FaultPlan.load(faults),
        state_dir=state_dir,
        alignments=agreed,
        order_statuses=statuses,
        address_ping_answer=ping_answer,
        guesses=guesses,
    )
    return SandboxTransport(config)


def sandbox_state_dir(settings: Settings) -> Path:
    """Where the embedded and the served sandbox keep their state unless told otherwise."""
    return (settings.data_dir / "sandbox").resolve()


def sandbox_transport(settings: Settings) -> httpx.AsyncBaseTransport:
    """The process-wide in-process sandbox for these settings."""
    return _sandbox_transport(
        settings.sandbox_job_seconds,
        settings.sandbox_faults,
        sandbox_state_dir(settings),
        settings.sandbox_alignments,
        settings.sandbox_order_statuses,
        settings.sandbox_ping_answer,
        settings.sandbox_guesses,
    )


@dataclass(frozen=True)
class SandboxReading:
    """How the embedded sandbox will read an upload: ``result_id`` names the column its result carries the
    record id in, or is None when it reads the upload in any layout (columns come back under their names)."""

    result_id: str | None


def sandbox_reading(settings: Settings, key: str, upload: Path) -> SandboxReading | None:
    """How the embedded sandbox will read ``upload`` for batch ``key``; None when the runs go to a real
    service (or a served sandbox), whose alignment is known only to it."""
    if not settings.address_service.is_sandbox:
        return None
    from sandbox.address_service.service import alignment_for

    config = getattr(sandbox_transport(settings), "config", None)
    if config is None:
        return None
    with upload.open("rb") as handle:
        head = handle.read(1 << 16)
    alignment = alignment_for(config, key, head)
    return SandboxReading(alignment.result_record_id if alignment is not None else None)


def reset_sandbox() -> None:
    """Drop the in-process sandbox; the next one is built anew, remembering what its state dir holds."""
    _sandbox_transport.cache_clear()


def retry_policy(settings: Settings) -> RetryPolicy:
    """How every client built here retries transient failures."""
    return RetryPolicy(
        max_attempts=settings.http_max_attempts,
        rate_limited_not_processed=settings.http_429_not_processed,
    )


def response_limits(settings: Settings) -> ResponseLimits:
    """How much of an answer every client built here reads, and how long an attempt may take."""
    return ResponseLimits(max_bytes=settings.response_max_bytes, deadline_s=settings.http_deadline_s)


_window_gates: dict[Endpoint, WindowGate] = {}
_window_gates_guard = threading.Lock()


def window_gate(settings: Settings) -> WindowGate:
    """The gate at which calls to the address service wait out its per-minute limit: one per service and
    process, shared by every client built here (each chunk task of a fan-out builds its own client). Worker
    processes elsewhere (Dask) have their own; the Prefect server's global rate limit bounds them together."""
    endpoint = address_service_endpoint(settings)
    with _window_gates_guard:
        return _window_gates.setdefault(endpoint, WindowGate())


_pacers: dict[tuple[Endpoint, int], Pacer] = {}


def query_pacer(settings: Settings) -> Pacer | None:
    """The pacer of the address service's queries (``address_service_queries_per_minute``): one per service,
    limit and process, shared like the :func:`window_gate`; None when the setting is 0."""
    per_minute = settings.address_service.queries_per_minute
    if per_minute <= 0:
        return None
    key = (address_service_endpoint(settings), per_minute)
    with _window_gates_guard:
        return _pacers.setdefault(key, Pacer(per_minute))


@dataclass(frozen=True)
class Service:
    """Where one API's calls go and as whom: the configured service, or the embedded sandbox with its
    published test account. ``auth_url`` is the authorization server (the newspaper API has none)."""

    api: Api
    base_url: str
    user: str
    secret: SecretStr
    token_url: str | None
    auth_url: str | None
    sandbox: bool = False

    def transport(
        self, settings: Settings, given: httpx.AsyncBaseTransport | None
    ) -> httpx.AsyncBaseTransport | None:
        """The transport a client of this service is built with: ``given``, else the in-process sandbox's
        (built on first use), else None for the network."""
        if given is not None or not self.sandbox:
            return given
        return sandbox_transport(settings)


def resolve(settings: Settings, api: Api) -> Service:
    """The service ``api``'s clients talk to: the embedded sandbox when its URL is unset (where allowed),
    else the configured one, once its settings are checked (:func:`~runtime.endpoints.require_settings`).

    Raises:
        ConfigurationError: a real service lacks a setting or has an unencrypted address; the sandbox is
            not allowed here or its settings are unusable.
    """
    require_settings(settings, api)
    if api_url(settings, api) is None:
        return _sandbox_service(api)
    if api == "address-service":
        config = settings.address_service
        return Service(
            api,
            str(config.url),
            _required(settings, config.user, "address_service", "user"),
            _required(settings, config.password, "address_service", "password"),
            token_url=None,
            auth_url=None,
        )
    if api == "newspaper":
        newspaper = settings.newspaper
        return Service(
            api,
            str(newspaper.url),
            _required(settings, newspaper.client_id, "newspaper", "client_id"),
            _required(settings, newspaper.client_secret, "newspaper", "client_secret"),
            token_url=_required(settings, newspaper.token_url, "newspaper", "token_url"),
            auth_url=None,
        )
    commerce = settings.commerce
    auth = _required(settings, commerce.auth_url, "commerce", "auth_url").rstrip("/")
    return Service(
        api,
        str(commerce.url),
        _required(settings, commerce.client_id, "commerce", "client_id"),
        _required(settings, commerce.client_secret, "commerce", "client_secret"),
        token_url=f"{auth}/OAuth/token",
        auth_url=auth,
    )


def _sandbox_service(api: Api) -> Service:
    """The embedded sandbox's side of ``api`` and its published test account."""
    from sandbox import inprocess

    auth = inprocess.auth_url()
    services = {
        "address-service": (inprocess.address_service_url(), SANDBOX_ADDRESS_USER, SANDBOX_ADDRESS_PASSWORD),
        "newspaper": (
            inprocess.newspaper_url(),
            SANDBOX_NEWSPAPER_CLIENT_ID,
            SANDBOX_NEWSPAPER_CLIENT_SECRET,
        ),
        "commerce": (inprocess.commerce_url(), SANDBOX_COMMERCE_CLIENT_ID, SANDBOX_COMMERCE_CLIENT_SECRET),
    }
    base_url, user, secret = services[api]
    token_url = {
        "address-service": None,
        "newspaper": inprocess.token_url(),
        "commerce": f"{auth}/OAuth/token",
    }
    return Service(
        api,
        base_url,
        user,
        SecretStr(secret),
        token_url=token_url[api],
        auth_url=auth if api == "commerce" else None,
        sandbox=True,
    )


def _required(settings: Settings, value: T | None, *path: str) -> T:
    """``value``, the setting at ``path``; a real service cannot be reached without it.

    Raises:
        ConfigurationError: naming the setting's variable.
    """
    if value is None or value == "":
        raise ConfigurationError(f"{variable_named(type(settings), *path)} must be set")
    return value


def endpoint(settings: Settings, api: Api) -> Endpoint:
    """The service ``api`` a run talks to, as its idempotency keys name it (the sandbox where allowed)."""
    if api_url(settings, api) is None:
        require_sandbox_allowed(settings, api)
        service = _sandbox_service(api)
        return Endpoint(service.base_url, service.user)
    config = api_settings(settings, api)
    user = config.user if isinstance(config, AddressServiceSettings) else config.client_id
    return Endpoint(str(config.url), user)


def address_service_endpoint(settings: Settings) -> Endpoint:
    """The address service a run talks to, as its idempotency keys name it."""
    return endpoint(settings, "address-service")


def newspaper_endpoint(settings: Settings) -> Endpoint:
    """The newspaper API a run talks to, as its idempotency keys name it."""
    return endpoint(settings, "newspaper")


def commerce_endpoint(settings: Settings) -> Endpoint:
    """The commerce API a run talks to, as its idempotency keys name it."""
    return endpoint(settings, "commerce")


def address_service_client(
    settings: Settings | None = None,
    *,
    request_log: RequestLog | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    sandbox_base_url: str | None = None,
) -> AddressServiceClient:
    """An :class:`AddressServiceClient` for the configured endpoint, or for the sandbox when none is set (at
    ``sandbox_base_url`` when given: another mount of the embedded sandbox).

    Raises:
        ConfigurationError: a real endpoint is configured but its user or password is not.
    """
    settings = settings or get_settings()
    service = resolve(settings, "address-service")
    return AddressServiceClient(
        sandbox_base_url if service.sandbox and sandbox_base_url else service.base_url,
        username=service.user,
        password=service.secret,
        options=ClientOptions(
            transport=service.transport(settings, transport),
            timeout=settings.http_timeout_s,
            retry=retry_policy(settings),
            limits=response_limits(settings),
            request_log=request_log,
            window_gate=window_gate(settings),
            pacer=query_pacer(settings),
            before_request=RateLimitHook(ADDRESS_SERVICE),
        ),
    )


def address_assistant_client(
    settings: Settings | None = None,
    *,
    request_log: RequestLog | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> AddressServiceClient:
    """An :class:`AddressServiceClient` for the address assistant (autocomplete, building verification) at
    ``POSTFLOWS_ADDRESS_ASSISTANT_URL``: §4.4 says the assistant has no test environment and its production
    environment is used directly, so it never follows the batch address. With neither that nor the batch URL
    set, the embedded sandbox serves it, as it serves the batch.

    Raises:
        ConfigurationError: the batch URL is set and the assistant's is not (before any request), or a real
            endpoint is configured but its user or password is not.
    """
    settings = settings or get_settings()
    config = settings.address_service
    if config.assistant_url:
        at_assistant = config.model_copy(update={"url": config.assistant_url})
        settings = settings.model_copy(update={"address_service": at_assistant})
    elif not config.is_sandbox:
        assistant, batch = (
            variable_named(type(settings), "address_service", name) for name in ("assistant_url", "url")
        )
        raise ConfigurationError(
            f"{assistant} must be set for the address assistant (autocomplete, verify-building): it has no "
            f"test environment, so it does not go to {batch}; name its production address"
        )
    return address_service_client(
        settings, request_log=request_log, transport=transport, sandbox_base_url=_sandbox_assistant(settings)
    )


def _sandbox_assistant(settings: Settings) -> str | None:
    """Where the embedded sandbox serves the assistant: at its own address when it answers the registered
    guesses the other way (``address-service.assistant-url``), else beside the batch (None)."""
    if settings.sandbox_guesses != "other":
        return None
    from sandbox import inprocess

    return inprocess.address_assistant_url()


def newspaper_client(
    settings: Settings | None = None,
    *,
    request_log: RequestLog | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> NewspaperClient:
    """A :class:`NewspaperClient` for the configured endpoint, or for the sandbox when no URL is set.

    Raises:
        ConfigurationError: a real endpoint is configured but its token URL or client credentials are not.
    """
    settings = settings or get_settings()
    service = resolve(settings, "newspaper")
    return NewspaperClient(
        service.base_url,
        credentials=ClientCredentials(str(service.token_url), service.user, service.secret, api="newspaper"),
        document_max_bytes=settings.download_max_bytes,
        structure_file_email_field=settings.newspaper.structure_file_email_field,
        options=ClientOptions(
            transport=service.transport(settings, transport),
            timeout=settings.http_timeout_s,
            retry=retry_policy(settings),
            limits=response_limits(settings),
            request_log=request_log,
            before_request=RateLimitHook(NEWSPAPER_API),
        ),
    )


# --- commerce API ---------------------------------------------------------------------------------------


def oidc_client(
    settings: Settings | None = None, *, transport: httpx.AsyncBaseTransport | None = None
) -> OidcClient:
    """The commerce API's authorization server, for signing a user in and reading userinfo."""
    settings = settings or get_settings()
    service = resolve(settings, "commerce")
    auth_url = str(service.auth_url)
    return OidcClient(
        auth_url,
        client_id=service.user,
        client_secret=service.secret,
        endpoints=OidcEndpoints(
            userinfo_url=settings.commerce.userinfo_url or f"{auth_url}/userinfo",
            issuer=settings.commerce.issuer or auth_url,
            jwks_url=settings.commerce.jwks_url,
        ),
        options=ClientOptions(
            transport=service.transport(settings, transport),
            timeout=settings.http_timeout_s,
            retry=retry_policy(settings),
            limits=response_limits(settings),
        ),
    )


def commerce_token_store(settings: Settings) -> TokenStore:
    """Where the signed-in user's refresh token for this service is kept."""
    service = resolve(settings, "commerce")
    try:
        return token_store(
            settings.commerce.token_store, settings.data_dir, login_name(str(service.auth_url), service.user)
        )
    except ValueError as error:
        raise ConfigurationError(str(error)) from None


def user_session(settings: Settings, oidc: OidcClient) -> UserSession | None:
    """The saved sign-in as a token source (rotated refresh tokens are saved back), or None."""
    store = commerce_token_store(settings)
    saved = store.load()
    if saved is None:
        return None

    def keep(refresh_token: SecretStr) -> None:
        store.save(SavedLogin(refresh_token, saved.subject, saved.scopes, now_text()))

    return UserSession(oidc, saved.refresh_token, on_refresh_token=keep)


def commerce_client(
    settings: Settings | None = None,
    *,
    user: UserSession | None = None,
    request_log: RequestLog | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> CommerceClient:
    """A :class:`CommerceClient` for the configured service, or for the sandbox when no URL is set.

    Raises:
        ConfigurationError: a real service is configured without its auth URL or client credentials.
    """
    settings = settings or get_settings()
    service = resolve(settings, "commerce")
    return CommerceClient(
        service.base_url,
        credentials=ClientCredentials(str(service.token_url), service.user, service.secret, api="commerce"),
        user=user,
        scopes=settings.commerce.scopes,
        paths=settings.commerce.paths,
        options=ClientOptions(
            transport=service.transport(settings, transport),
            timeout=settings.http_timeout_s,
            retry=retry_policy(settings),
            limits=response_limits(settings),
            request_log=request_log,
            before_request=RateLimitHook(COMMERCE_API),
        ),
    )
