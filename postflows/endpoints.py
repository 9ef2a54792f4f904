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

from connectors.errors import PostflowsError
from postflows.privacy import masked_url

if TYPE_CHECKING:
    from postflows.settings import Settings
    from postflows.settings.apis import AddressServiceSettings, CommerceSettings, NewspaperSettings


class ConfigurationError(PostflowsError, ValueError):
    """A setting is missing or unusable (for a real endpoint, or for the embedded sandbox); the message
    names its environment variable. The CLI ends with exit code 2."""

    exit_code = 2


Api = Literal["address-service", "newspaper", "commerce"]
# Per API: the field of its settings (Settings.<group>), the fields a real endpoint needs besides the URL,
# and every address field its calls may go to.
_GROUPS: dict[Api, str] = {
    "address-service": "address_service",
    "newspaper": "newspaper",
    "commerce": "commerce",
}
_NEEDED: dict[Api, tuple[str, ...]] = {
    "address-service": ("user", "password"),
    "newspaper": ("token_url", "client_id", "client_secret"),
    "commerce": ("auth_url", "client_id", "client_secret"),
}
_ADDRESSES: dict[Api, tuple[str, ...]] = {
    "address-service": ("url",),
    "newspaper": ("url", "token_url"),
    "commerce": ("url", "auth_url", "userinfo_url", "issuer", "jwks_url"),
}
_LABELS: dict[Api, str] = {
    "address-service": "address service",
    "newspaper": "newspaper API",
    "commerce": "commerce API",
}


def api_settings(
    settings: Settings, api: Api
) -> AddressServiceSettings | NewspaperSettings | CommerceSettings:
    """The settings of ``api``."""
    by_api: dict[Api, AddressServiceSettings | NewspaperSettings | CommerceSettings] = {
        "address-service": settings.address_service,
        "newspaper": settings.newspaper,
        "commerce": settings.commerce,
    }
    return by_api[api]


def api_url(settings: Settings, api: Api) -> str | None:
    """The configured address of ``api``; None selects the embedded sandbox."""
    return api_settings(settings, api).url or None


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
    from postflows.settings.variables import variables_of

    url = api_url(settings, api)
    if url is None:
        return
    group = _GROUPS[api]
    named = {variable.path: variable for variable in variables_of(type(settings))}
    config = api_settings(settings, api)
    missing = [
        named[group, name].name
        for name in _NEEDED[api]
        if not getattr(config, name)
        and not (block_may_fill and named[group, name].setting in CREDENTIAL_FIELDS)
    ]
    if missing:
        raise ConfigurationError(
            f"{', '.join(missing)} must be set when {named[group, 'url'].name} points at a real service "
            f"({masked_url(url)})"
        )
    if not settings.allow_http:
        for name in _ADDRESSES[api]:
            require_encrypted(named[group, name].name, getattr(config, name))


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
    if settings.address_service.is_sandbox:
        return "embedded sandbox (POSTFLOWS_ADDRESS_SERVICE_URL is not set)"
    return masked_url(str(settings.address_service.url))


def describe_newspaper(settings: Settings) -> str:
    """Where newspaper API calls go, for the CLI to announce."""
    if settings.newspaper.is_sandbox:
        return "embedded sandbox (POSTFLOWS_NEWSPAPER_URL is not set)"
    return masked_url(str(settings.newspaper.url))


def describe_commerce(settings: Settings) -> str:
    """Where commerce API calls go, for the CLI to announce."""
    if settings.commerce.is_sandbox:
        return "embedded sandbox (POSTFLOWS_COMMERCE_URL is not set)"
    return masked_url(str(settings.commerce.url))


def describe_endpoint(settings: Settings, api: Api) -> str:
    """``<API>: <where its calls go>``, the line a flow command prints before it starts."""
    describe = {
        "address-service": describe_address_service,
        "newspaper": describe_newspaper,
        "commerce": describe_commerce,
    }[api]
    return f"{_LABELS[api]}: {describe(settings)}"
