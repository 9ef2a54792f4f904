"""Which endpoint each API's calls go to, the settings a real one needs and that its addresses are encrypted
(``http://`` only on loopback unless allowed): what the CLI checks and announces before anything heavy is
imported. :mod:`postflows.wiring` builds the clients after the same checks; this module imports no connector,
so a command refuses a bad configuration in about the time of ``postflows --help``. A password in an
endpoint's URL is shown as ``***``.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from postflows.privacy import masked_url

if TYPE_CHECKING:
    from postflows.settings import Settings


class ConfigurationError(ValueError):
    """A setting needed to reach an endpoint is missing (or, for the embedded sandbox, unusable)."""


Api = Literal["address-service", "newspaper", "commerce"]
# Per API: the variable of its URL, and the settings a real endpoint needs besides the URL.
_NEEDED: dict[Api, tuple[str, tuple[str, ...]]] = {
    "address-service": (
        "POSTFLOWS_ADDRESS_SERVICE_URL",
        ("address_service_user", "address_service_password"),
    ),
    "newspaper": (
        "POSTFLOWS_NEWSPAPER_URL",
        ("newspaper_token_url", "newspaper_client_id", "newspaper_client_secret"),
    ),
    "commerce": (
        "POSTFLOWS_COMMERCE_URL",
        ("commerce_auth_url", "commerce_client_id", "commerce_client_secret"),
    ),
}
# Per API: every address setting its calls may go to (a real endpoint's).
_ADDRESSES: dict[Api, tuple[str, ...]] = {
    "address-service": ("address_service_url",),
    "newspaper": ("newspaper_url", "newspaper_token_url"),
    "commerce": (
        "commerce_url",
        "commerce_auth_url",
        "commerce_userinfo_url",
        "commerce_issuer",
        "commerce_jwks_url",
    ),
}
_LABELS: dict[Api, str] = {
    "address-service": "address service",
    "newspaper": "newspaper API",
    "commerce": "commerce API",
}


def api_url(settings: Settings, api: Api) -> str | None:
    """The configured address of ``api``; None selects the embedded sandbox."""
    urls = {
        "address-service": settings.address_service_url,
        "newspaper": settings.newspaper_url,
        "commerce": settings.commerce_url,
    }
    return urls[api] or None


def require_settings(settings: Settings, api: Api, *, block_may_fill: bool = False) -> None:
    """Refuse a real endpoint of ``api`` whose credentials or token address are not set, or one of whose
    addresses is ``http://`` off loopback (unless ``POSTFLOWS_ALLOW_HTTP``); the sandbox needs none.
    ``block_may_fill``: credentials still unset may come from the Postflows Credentials block (only the
    other settings are required here).

    Raises:
        ConfigurationError: naming every missing setting as its environment variable, or the address
            setting that is not encrypted.
    """
    from postflows.settings import CREDENTIAL_FIELDS

    url = api_url(settings, api)
    if url is None:
        return
    url_variable, needed = _NEEDED[api]
    missing = [
        f"POSTFLOWS_{name.upper()}"
        for name in needed
        if not getattr(settings, name) and not (block_may_fill and name in CREDENTIAL_FIELDS)
    ]
    if missing:
        raise ConfigurationError(
            f"{', '.join(missing)} must be set when {url_variable} points at a real service "
            f"({masked_url(url)})"
        )
    if not settings.allow_http:
        for name in _ADDRESSES[api]:
            require_encrypted(f"POSTFLOWS_{name.upper()}", getattr(settings, name))


def require_encrypted(variable: str, url: str | None) -> None:
    """Refuse an ``http://`` address whose host is not loopback (127.0.0.0/8, ::1, localhost): the
    credentials of every request (Basic, a client secret, bearer tokens) would cross the network readable.

    Raises:
        ConfigurationError: one line naming ``variable`` and ``POSTFLOWS_ALLOW_HTTP``.
    """
    if not url:
        return
    parts = urlsplit(url.strip())
    if parts.scheme.lower() != "http" or _is_loopback(parts.hostname or ""):
        return
    raise ConfigurationError(
        f"{variable} is http:// to {parts.hostname or url}, which would send credentials unencrypted: "
        "use https://, or set POSTFLOWS_ALLOW_HTTP=true to accept it"
    )


def _is_loopback(host: str) -> bool:
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def describe_address_service(settings: Settings) -> str:
    """Where address service calls go, for the CLI to announce."""
    if settings.address_service_is_sandbox:
        return "embedded sandbox (POSTFLOWS_ADDRESS_SERVICE_URL is not set)"
    return masked_url(str(settings.address_service_url))


def describe_newspaper(settings: Settings) -> str:
    """Where newspaper API calls go, for the CLI to announce."""
    if settings.newspaper_is_sandbox:
        return "embedded sandbox (POSTFLOWS_NEWSPAPER_URL is not set)"
    return masked_url(str(settings.newspaper_url))


def describe_commerce(settings: Settings) -> str:
    """Where commerce API calls go, for the CLI to announce."""
    if settings.commerce_is_sandbox:
        return "embedded sandbox (POSTFLOWS_COMMERCE_URL is not set)"
    return masked_url(str(settings.commerce_url))


def describe_endpoint(settings: Settings, api: Api) -> str:
    """``<API>: <where its calls go>``, the line a flow command prints before it starts."""
    describe = {
        "address-service": describe_address_service,
        "newspaper": describe_newspaper,
        "commerce": describe_commerce,
    }[api]
    return f"{_LABELS[api]}: {describe(settings)}"
