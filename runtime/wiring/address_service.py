"""The address service's clients: the batch and query client, the address assistant's, the gate and pacer
they share per service and process, and what the service's transport can tell before an upload is sent."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

import httpx

from connectors.address_service import AddressServiceClient
from connectors.http import RequestLog
from connectors.ratelimit import Pacer, WindowGate
from fileio.address_service.profiles import AlignmentProfile
from history.identity import Endpoint
from runtime.api_limits import ADDRESS_SERVICE, RateLimitHook
from runtime.endpoints import ConfigurationError
from runtime.settings import Settings, get_settings
from runtime.settings.variables import variable_named
from runtime.wiring.services import (
    address_service_endpoint,
    api_url,
    resolve,
    sandbox_service,
)

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
        options=replace(
            service.options(
                settings, transport, request_log=request_log, before_request=RateLimitHook(ADDRESS_SERVICE)
            ),
            window_gate=window_gate(settings),
            pacer=query_pacer(settings),
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
    return sandbox_service("address-service", mount="address-assistant").base_url


UPLOAD_HEAD_BYTES = 1 << 16


@dataclass(frozen=True)
class UploadProfile:
    """What a transport that answers ahead reads of the alignment profile: its name and the columns the
    record id is sent in and expected back in."""

    name: str
    sent_id: str
    returned_id: str


@runtime_checkable
class AnswersAhead(Protocol):
    """A transport that can tell, before anything is sent, why a batch's results could not be merged (the
    embedded sandbox knows the alignment it will read an upload by; a service over the network cannot)."""

    def upload_refusal(self, key: str, head: bytes, profile: UploadProfile) -> str | None: ...


def upload_refusal(settings: Settings, profile: AlignmentProfile, batch_key: str, upload: Path) -> str | None:
    """Why the address service this run talks to would return results of ``upload`` for ``batch_key``
    that ``profile`` cannot merge, where its transport can tell before anything is sent; else None (a
    service over the network, whose alignment is known only to it). A run refuses it; a dry run reports
    it."""
    if api_url(settings, "address-service") is not None:
        return None
    transport = resolve(settings, "address-service").transport(settings, None)
    if not isinstance(transport, AnswersAhead):
        return None
    with upload.open("rb") as handle:
        head = handle.read(UPLOAD_HEAD_BYTES)
    expected = UploadProfile(profile.name, profile.upload.record_id, profile.result_record_id)
    return transport.upload_refusal(batch_key, head, expected)
