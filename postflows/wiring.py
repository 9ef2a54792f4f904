"""The composition root: builds connector clients from :class:`~postflows.settings.Settings`.

An unset service URL selects the embedded sandbox, served in-process (one instance per process, so jobs
started by one client are visible to the next) and keeping its state in ``<data dir>/sandbox``, so an order
or job outlives the process and a later run (or another process at the same time) finds it. Nothing below
this module knows the sandbox exists.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path

import httpx
from pydantic import SecretStr

from connectors.address_service import AddressServiceClient
from connectors.http import RequestLog
from connectors.newspaper import NewspaperClient
from connectors.ratelimit import WindowGate
from connectors.retry import RetryPolicy
from postflows.settings import (
    SANDBOX_ADDRESS_PASSWORD,
    SANDBOX_ADDRESS_USER,
    SANDBOX_NEWSPAPER_CLIENT_ID,
    SANDBOX_NEWSPAPER_CLIENT_SECRET,
    Settings,
    get_settings,
)
from tasks.idempotency import Endpoint

logger = logging.getLogger("postflows")


class ConfigurationError(ValueError):
    """A setting needed to reach an endpoint is missing (or, for the embedded sandbox, unusable)."""


@lru_cache(maxsize=4)
def _sandbox_transport(
    job_seconds: float, faults: str | None, state_dir: Path, alignments: str | None
) -> httpx.AsyncBaseTransport:
    from sandbox.address_service.alignments import AlignmentError, alignments_setting
    from sandbox.config import SandboxConfig
    from sandbox.faults import FaultPlan
    from sandbox.inprocess import SandboxTransport

    try:
        agreed = alignments_setting(alignments)
    except AlignmentError as error:
        raise ConfigurationError(f"POSTFLOWS_SANDBOX_ALIGNMENTS: {error}") from None
    config = SandboxConfig(
        job_seconds=job_seconds, faults=FaultPlan.load(faults), state_dir=state_dir, alignments=agreed
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
    )


def reset_sandbox() -> None:
    """Drop the in-process sandbox; the next one is built anew, remembering what its state dir holds."""
    _sandbox_transport.cache_clear()


def _retry(settings: Settings) -> RetryPolicy:
    return RetryPolicy(max_attempts=settings.http_max_attempts)


def window_gate(settings: Settings) -> WindowGate:
    """The gate at which one client's calls wait out a per-minute limit (tests swap in a simulated clock)."""
    return WindowGate()


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


def describe_address_service(settings: Settings) -> str:
    if settings.address_service_is_sandbox:
        return "embedded sandbox (POSTFLOWS_ADDRESS_SERVICE_URL is not set)"
    return str(settings.address_service_url)


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
            request_log=request_log,
            window_gate=window_gate(settings),
        )
    if not settings.address_service_user or settings.address_service_password is None:
        raise ConfigurationError(
            "POSTFLOWS_ADDRESS_SERVICE_USER and POSTFLOWS_ADDRESS_SERVICE_PASSWORD must be set "
            "when POSTFLOWS_ADDRESS_SERVICE_URL points at a real service"
        )
    return AddressServiceClient(
        str(settings.address_service_url),
        username=settings.address_service_user,
        password=settings.address_service_password,
        transport=transport,
        timeout=settings.http_timeout_s,
        retry=_retry(settings),
        request_log=request_log,
        window_gate=window_gate(settings),
    )


def describe_newspaper(settings: Settings) -> str:
    """Where newspaper API calls go, for the CLI to announce."""
    if settings.newspaper_is_sandbox:
        return "embedded sandbox (POSTFLOWS_NEWSPAPER_URL is not set)"
    return str(settings.newspaper_url)


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
            transport=transport or sandbox_transport(settings),
            timeout=settings.http_timeout_s,
            retry=_retry(settings),
            request_log=request_log,
        )
    missing = [
        f"POSTFLOWS_NEWSPAPER_{name.upper()}"
        for name, value in (
            ("token_url", settings.newspaper_token_url),
            ("client_id", settings.newspaper_client_id),
            ("client_secret", settings.newspaper_client_secret),
        )
        if not value
    ]
    if missing or settings.newspaper_client_secret is None or settings.newspaper_token_url is None:
        raise ConfigurationError(
            f"{', '.join(missing)} must be set when POSTFLOWS_NEWSPAPER_URL points at a real service"
        )
    return NewspaperClient(
        str(settings.newspaper_url),
        token_url=settings.newspaper_token_url,
        client_id=settings.newspaper_client_id,
        client_secret=settings.newspaper_client_secret,
        transport=transport,
        timeout=settings.http_timeout_s,
        retry=_retry(settings),
        request_log=request_log,
    )
