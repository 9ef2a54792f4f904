"""The newspaper API's client, built from the settings."""

from __future__ import annotations

import httpx

from connectors.http import RequestLog
from connectors.newspaper import NewspaperClient
from connectors.oauth import ClientCredentials
from runtime.api_limits import NEWSPAPER_API, RateLimitHook
from runtime.settings import Settings, get_settings
from runtime.wiring.services import resolve


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
        options=service.options(
            settings, transport, request_log=request_log, before_request=RateLimitHook(NEWSPAPER_API)
        ),
    )
