"""The composition root: builds connector clients from :class:`~postflows.settings.Settings`.

An unset service URL selects the embedded sandbox, served in-process (one instance per process, so jobs
started by one client are visible to the next) and keeping its state in ``<data dir>/sandbox``, so an order
or job outlives the process and a later run (or another process at the same time) finds it. Nothing below
this module knows the sandbox exists.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import httpx
from pydantic import SecretStr

from connectors.address_service import AddressServiceClient
from connectors.commerce import CommerceClient, CommercePaths, CommerceScopes
from connectors.commerce.oidc import OidcClient, UserSession
from connectors.http import RequestLog
from connectors.limits import ResponseLimits
from connectors.newspaper import NewspaperClient
from connectors.oauth import ClientCredentials
from connectors.ratelimit import Pacer, WindowGate
from connectors.retry import RetryPolicy
from history.identity import Endpoint
from postflows.api_limits import ADDRESS_SERVICE, COMMERCE_API, NEWSPAPER_API, RateLimitHook
from postflows.endpoints import Api as Api  # re-exported: callers import these from here too
from postflows.endpoints import ConfigurationError as ConfigurationError
from postflows.endpoints import api_url as api_url
from postflows.endpoints import describe_address_service as describe_address_service
from postflows.endpoints import describe_commerce as describe_commerce
from postflows.endpoints import describe_newspaper as describe_newspaper
from postflows.endpoints import require_settings as require_settings
from postflows.settings import (
    SANDBOX_ADDRESS_PASSWORD,
    SANDBOX_ADDRESS_USER,
    SANDBOX_COMMERCE_CLIENT_ID,
    SANDBOX_COMMERCE_CLIENT_SECRET,
    SANDBOX_NEWSPAPER_CLIENT_ID,
    SANDBOX_NEWSPAPER_CLIENT_SECRET,
    Settings,
    get_settings,
)
from tasks.commerce.token_store import SavedLogin, TokenStore, login_name, now_text, token_store

logger = logging.getLogger("postflows")


@lru_cache(maxsize=4)
def _sandbox_transport(
    job_seconds: float,
    faults: str | None,
    state_dir: Path,
    alignments: str | None,
    order_statuses: str | None,
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
    )


@dataclass(frozen=True)
class SandboxReading:
    """How the embedded sandbox will read an upload: ``result_id`` names the column its result carries the
    record id in, or is None when it reads the upload in any layout (columns come back under their names)."""

    result_id: str | None


def sandbox_reading(settings: Settings, key: str, upload: Path) -> SandboxReading | None:
    """How the embedded sandbox will read ``upload`` for batch ``key``; None when the runs go to a real
    service (or a served sandbox), whose alignment is known only to it."""
    if not settings.address_service_is_sandbox:
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


def _retry(settings: Settings) -> RetryPolicy:
    return RetryPolicy(max_attempts=settings.http_max_attempts)


def _limits(settings: Settings) -> ResponseLimits:
    return ResponseLimits(max_bytes=settings.response_max_bytes, deadline_s=settings.http_deadline_s)


_window_gates: dict[Endpoint, WindowGate] = {}
_window_gates_guard = threading.Lock()


def window_gate(settings: Settings) -> WindowGate:
    """The gate at which calls to the address service wait out its per-minute limit: one per service and
    process, shared by every client built here (each chunk task of a fan-out builds its own client, on its
    own thread's event loop). Worker processes elsewhere (Dask) each have their own gate; the global rate
    limit of the Prefect server is what bounds them together. Tests swap in a simulated clock."""
    endpoint = address_service_endpoint(settings)
    with _window_gates_guard:
        return _window_gates.setdefault(endpoint, WindowGate())


_pacers: dict[tuple[Endpoint, int], Pacer] = {}


def query_pacer(settings: Settings) -> Pacer | None:
    """The pacer of the address service's queries (``address_service_queries_per_minute``): one per service,
    limit and process, shared like the :func:`window_gate`; None when the setting is 0."""
    per_minute = settings.address_service_queries_per_minute
    if per_minute <= 0:
        return None
    key = (address_service_endpoint(settings), per_minute)
    with _window_gates_guard:
        return _pacers.setdefault(key, Pacer(per_minute))


def address_service_endpoint(settings: Settings) -> Endpoint:
    """The address service a run talks to, as its idempotency keys name it."""
    if settings.address_service_is_sandbox:
        from sandbox.inprocess import address_service_url

        return Endpoint(address_service_url(), SANDBOX_ADDRESS_USER)
    return Endpoint(str(settings.address_service_url), settings.address_service_user)


def newspaper_endpoint(settings: Settings) -> Endpoint:
    """The newspaper API a run talks to, as its idempotency keys name it."""
    if settings.newspaper_is_sandbox:
        from sandbox.inprocess import newspaper_url

        return Endpoint(newspaper_url(), SANDBOX_NEWSPAPER_CLIENT_ID)
    return Endpoint(str(settings.newspaper_url), settings.newspaper_client_id)


def address_service_client(
    settings: Settings | None = None,
    *,
    request_log: RequestLog | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> AddressServiceClient:
    """An :class:`AddressServiceClient` for the configured endpoint, or for the sandbox when none is set."""
    settings = settings or get_settings()
    if settings.address_service_is_sandbox:
        from sandbox.inprocess import address_service_url

        return AddressServiceClient(
            address_service_url(),
            username=SANDBOX_ADDRESS_USER,
            password=SecretStr(SANDBOX_ADDRESS_PASSWORD),
            transport=transport or sandbox_transport(settings),
            timeout=settings.http_timeout_s,
            retry=_retry(settings),
            limits=_limits(settings),
            request_log=request_log,
            window_gate=window_gate(settings),
            pacer=query_pacer(settings),
            before_request=RateLimitHook(ADDRESS_SERVICE),
        )
    require_settings(settings, "address-service")
    assert settings.address_service_user and settings.address_service_password is not None
    return AddressServiceClient(
        str(settings.address_service_url),
        username=settings.address_service_user,
        password=settings.address_service_password,
        transport=transport,
        timeout=settings.http_timeout_s,
        retry=_retry(settings),
        limits=_limits(settings),
        request_log=request_log,
        window_gate=window_gate(settings),
        pacer=query_pacer(settings),
        before_request=RateLimitHook(ADDRESS_SERVICE),
    )


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
    if settings.newspaper_is_sandbox:
        from sandbox.inprocess import newspaper_url, token_url

        return NewspaperClient(
            newspaper_url(),
            token_url=token_url(),
            client_id=SANDBOX_NEWSPAPER_CLIENT_ID,
            client_secret=SecretStr(SANDBOX_NEWSPAPER_CLIENT_SECRET),
            document_max_bytes=settings.download_max_bytes,
            transport=transport or sandbox_transport(settings),
            timeout=settings.http_timeout_s,
            retry=_retry(settings),
            limits=_limits(settings),
            request_log=request_log,
            before_request=RateLimitHook(NEWSPAPER_API),
        )
    require_settings(settings, "newspaper")
    assert settings.newspaper_token_url and settings.newspaper_client_secret is not None
    return NewspaperClient(
        str(settings.newspaper_url),
        token_url=settings.newspaper_token_url,
        client_id=settings.newspaper_client_id,
        client_secret=settings.newspaper_client_secret,
        document_max_bytes=settings.download_max_bytes,
        transport=transport,
        timeout=settings.http_timeout_s,
        retry=_retry(settings),
        limits=_limits(settings),
        request_log=request_log,
        before_request=RateLimitHook(NEWSPAPER_API),
    )


# --- commerce API ---------------------------------------------------------------------------------------


class CommerceSite:
    """Where the commerce API and its authorization server are, and the client registered there."""

    def __init__(self, settings: Settings) -> None:
        if settings.commerce_is_sandbox:
            from sandbox.inprocess import auth_url, commerce_url

            self.sandbox = True
            self.base_url = commerce_url()
            self.auth_url = auth_url()
            self.client_id = SANDBOX_COMMERCE_CLIENT_ID
            self.client_secret = SecretStr(SANDBOX_COMMERCE_CLIENT_SECRET)
        else:
            require_settings(settings, "commerce")
            self.sandbox = False
            self.base_url = str(settings.commerce_url)
            self.auth_url = str(settings.commerce_auth_url).rstrip("/")
            self.client_id = str(settings.commerce_client_id)
            self.client_secret = settings.commerce_client_secret or SecretStr("")
        self.userinfo_url = settings.commerce_userinfo_url or f"{self.auth_url}/userinfo"
        self.issuer = settings.commerce_issuer or self.auth_url
        self.jwks_url = settings.commerce_jwks_url

    @property
    def token_url(self) -> str:
        return f"{self.auth_url}/OAuth/token"


def commerce_endpoint(settings: Settings) -> Endpoint:
    """The commerce API a run talks to, as its idempotency keys name it."""
    site = CommerceSite(settings)
    return Endpoint(site.base_url, site.client_id)


def commerce_scopes(settings: Settings) -> CommerceScopes:
    return CommerceScopes(
        validation=settings.commerce_scope_validation,
        autocomplete=settings.commerce_scope_autocomplete,
        personal=settings.commerce_scope_personal,
        delivery=settings.commerce_scope_delivery,
        pickup=settings.commerce_scope_pickup,
        barcode=settings.commerce_scope_barcode,
        return_order=settings.commerce_scope_return_order,
    )


def commerce_paths(settings: Settings) -> CommercePaths:
    return CommercePaths(
        address=settings.commerce_address_path,
        delivery=settings.commerce_delivery_path,
        pickup=settings.commerce_pickup_path,
        same_day=settings.commerce_same_day_path,
        pickup_points=settings.commerce_pickup_points_path,
        pickup_points_method=settings.commerce_pickup_points_method.upper(),
        barcode=settings.commerce_barcode_path,
        return_order=settings.commerce_return_order_path,
    )


def _commerce_transport(
    settings: Settings, transport: httpx.AsyncBaseTransport | None
) -> httpx.AsyncBaseTransport | None:
    if transport is not None:
        return transport
    return sandbox_transport(settings) if settings.commerce_is_sandbox else None


def oidc_client(
    settings: Settings | None = None, *, transport: httpx.AsyncBaseTransport | None = None
) -> OidcClient:
    """The commerce API's authorization server, for signing a user in and reading userinfo."""
    settings = settings or get_settings()
    site = CommerceSite(settings)
    return OidcClient(
        site.auth_url,
        client_id=site.client_id,
        client_secret=site.client_secret,
        userinfo_url=site.userinfo_url,
        issuer=site.issuer,
        jwks_url=site.jwks_url,
        transport=_commerce_transport(settings, transport),
        timeout=settings.http_timeout_s,
        retry=_retry(settings),
        limits=_limits(settings),
    )


def commerce_token_store(settings: Settings) -> TokenStore:
    """Where the signed-in user's refresh token for this service is kept."""
    site = CommerceSite(settings)
    try:
        return token_store(
            settings.commerce_token_store, settings.data_dir, login_name(site.auth_url, site.client_id)
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
    site = CommerceSite(settings)
    return CommerceClient(
        site.base_url,
        credentials=ClientCredentials(site.token_url, site.client_id, site.client_secret, api="commerce"),
        user=user,
        scopes=commerce_scopes(settings),
        paths=commerce_paths(settings),
        transport=_commerce_transport(settings, transport),
        timeout=settings.http_timeout_s,
        retry=_retry(settings),
        limits=_limits(settings),
        request_log=request_log,
        before_request=RateLimitHook(COMMERCE_API),
    )
