"""Where each API's calls go and as whom (:class:`Service`), and what every client built from
:class:`~runtime.settings.Settings` shares: the retry policy, the response limits, the idempotency keys'
name of the service.

An unset service URL selects the embedded sandbox where it is allowed (``POSTFLOWS_SANDBOX``; a deployment
run needs it set: :func:`~runtime.endpoints.require_sandbox_allowed`), attached as a transport
(:mod:`runtime.wiring.embedded`); the clients and everything below them never know which one they talk to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import httpx
from pydantic import SecretStr

from connectors.http import BeforeRequest, ClientOptions, RequestLog
from connectors.limits import ResponseLimits
from connectors.retry import RetryPolicy
from history.identity import Endpoint
from runtime.endpoints import Api as Api  # re-exported: callers import these from runtime.wiring too
from runtime.endpoints import ConfigurationError as ConfigurationError
from runtime.endpoints import api_settings as api_settings
from runtime.endpoints import api_url as api_url
from runtime.endpoints import describe_address_service as describe_address_service
from runtime.endpoints import describe_commerce as describe_commerce
from runtime.endpoints import describe_newspaper as describe_newspaper
from runtime.endpoints import require_sandbox_allowed, require_settings
from runtime.settings import Settings
from runtime.settings.apis import AddressServiceSettings
from runtime.settings.variables import variable_named
from runtime.wiring import embedded

T = TypeVar("T")


def retry_policy(settings: Settings) -> RetryPolicy:
    """How every client built here retries transient failures."""
    return RetryPolicy(
        max_attempts=settings.http_max_attempts,
        rate_limited_not_processed=settings.http_429_not_processed,
    )


def response_limits(settings: Settings) -> ResponseLimits:
    """How much of an answer every client built here reads, and how long an attempt may take."""
    return ResponseLimits(max_bytes=settings.response_max_bytes, deadline_s=settings.http_deadline_s)


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
        return embedded.sandbox_transport(settings)

    def options(
        self,
        settings: Settings,
        given: httpx.AsyncBaseTransport | None,
        *,
        request_log: RequestLog | None = None,
        before_request: BeforeRequest | None = None,
    ) -> ClientOptions:
        """How a client of this service is reached: its :meth:`transport`, the settings' time-out, retry
        policy and answer limits, the run's ``request_log`` and the rate-limit hook ``before_request``."""
        return ClientOptions(
            transport=self.transport(settings, given),
            timeout=settings.http_timeout_s,
            retry=retry_policy(settings),
            limits=response_limits(settings),
            request_log=request_log,
            before_request=before_request,
        )


def resolve(settings: Settings, api: Api) -> Service:
    """The service ``api``'s clients talk to: the embedded sandbox when its URL is unset (where allowed),
    else the configured one, once its settings are checked (:func:`~runtime.endpoints.require_settings`).

    Raises:
        ConfigurationError: a real service lacks a setting or has an unencrypted address; the sandbox is
            not allowed here, not installed, or its settings are unusable.
    """
    require_settings(settings, api)
    if api_url(settings, api) is None:
        return sandbox_service(api)
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


def sandbox_service(api: Api, mount: str | None = None) -> Service:
    """The embedded sandbox's side of ``api`` (at ``mount``, another of its mounts, when given) and its
    published test account, as the installed sandbox tells them.

    Raises:
        SandboxMissing: the sandbox is not installed (:func:`~runtime.endpoints.require_sandbox_allowed`
            refuses that first, naming the unset URL).
    """
    served = embedded.sandbox_service(mount or api, f"the {api} with its URL unset")
    return Service(
        api,
        str(served["base_url"]),
        str(served["user"]),
        SecretStr(str(served["secret"])),
        token_url=served["token_url"],
        auth_url=served["auth_url"],
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
        service = sandbox_service(api)
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
