"""Which endpoint each API's calls go to, the settings a real one needs and that its addresses are encrypted
(``http://`` only on loopback unless allowed): what the CLI checks and announces before anything heavy is
imported. :mod:`runtime.wiring` builds the clients after the same checks; this module imports no connector,
so a command refuses a bad configuration in about the time of ``postflows --help``. A password in an
endpoint's URL is shown as ``***``.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from functools import cache
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from core.errors import PostflowsError
from runtime.privacy import masked_url

if TYPE_CHECKING:
    from runtime.settings import Settings
    from runtime.settings.apis import AddressServiceSettings, CommerceSettings, NewspaperSettings


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
# The entry point group the sandbox's distribution (postflows-sandbox, the extra below) declares: the runtime
# finds the sandbox by it (runtime.wiring.embedded), never by importing it.
SANDBOX_ENTRY_POINTS = "postflows.sandbox"
SANDBOX_ENTRY_POINT = "embedded"
SANDBOX_EXTRA = "postflows[sandbox]"
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
    """The configured address of ``api``; None selects the embedded sandbox (where it may serve:
    :func:`require_sandbox_allowed`)."""
    return api_settings(settings, api).url or None


def in_deployment_run() -> bool:
    """Whether this process runs a flow run of a deployment (a worker's or ``postflows serve``'s): Prefect
    sets ``PREFECT__FLOW_RUN_ID`` in such a run's process, and its flow run names its deployment. Prefect is
    not imported here: a process that has not imported it runs no flow."""
    if os.environ.get("PREFECT__FLOW_RUN_ID"):
        return True
    context = sys.modules.get("prefect.context")
    run_context = None if context is None else context.FlowRunContext.get()
    flow_run = getattr(run_context, "flow_run", None)
    return getattr(flow_run, "deployment_id", None) is not None


def require_sandbox_allowed(settings: Settings, api: Api) -> None:
    """Refuse the embedded sandbox for ``api`` (its URL unset) where it was not asked for:
    ``POSTFLOWS_SANDBOX=0`` refuses it everywhere; unset, a deployment run (:func:`in_deployment_run`)
    refuses it, so that a worker without the settings never answers a run from the sandbox; the command
    line (no deployment) uses it. ``POSTFLOWS_SANDBOX=1`` allows it everywhere.

    Raises:
        ConfigurationError: one line naming the API's URL variable and ``POSTFLOWS_SANDBOX``.
    """
    if settings.sandbox:
        return
    from runtime.settings.variables import variable_named

    url = variable_named(type(settings), _GROUPS[api], "url")
    sandbox = variable_named(type(settings), "sandbox")
    if settings.sandbox is False:
        raise ConfigurationError(
            f"{url} is not set and {sandbox}=0 refuses the embedded sandbox: set {url} to the "
            f"{_LABELS[api]}'s address"
        )
    if in_deployment_run():
        raise ConfigurationError(
            f"{url} is not set in this deployment run, which uses the embedded sandbox only with "
            f"{sandbox}=1: set {url} (or {sandbox}=1) in the deployment's job variables or the worker's "
            "environment (`postflows deploy` carries the settings it is given; `--sandbox` sets the latter)"
        )
    if not sandbox_installed():
        raise ConfigurationError(
            f"{url} is not set, and the embedded sandbox that would serve the {_LABELS[api]} is not "
            f"installed: pip install '{SANDBOX_EXTRA}', or set {url}"
        )


@cache
def sandbox_installed() -> bool:
    """Whether the embedded sandbox is installed: its distribution's entry point (``postflows[sandbox]``),
    looked up once per process (reading every installed distribution's entry points takes about 8 ms)."""
    from importlib.metadata import entry_points

    return bool(entry_points(group=SANDBOX_ENTRY_POINTS, name=SANDBOX_ENTRY_POINT))


def require_settings(settings: Settings, api: Api, *, block_may_fill: bool = False) -> None:
    """Refuse a real endpoint of ``api`` whose credentials or token address are not set, or one of whose
    addresses is ``http://`` off loopback (unless ``POSTFLOWS_ALLOW_HTTP``); the sandbox needs none, but
    must be allowed where it would serve (:func:`require_sandbox_allowed`). ``block_may_fill``: credentials
    still unset may come from the Postflows Credentials block (only the other settings are required here).

    Raises:
        ConfigurationError: naming every missing setting as its environment variable, or the address
            setting that is not encrypted, or the URL and ``POSTFLOWS_SANDBOX`` where the sandbox is refused.
    """
    from runtime.settings import CREDENTIAL_FIELDS
    from runtime.settings.variables import variables_of

    url = api_url(settings, api)
    if url is None:
        require_sandbox_allowed(settings, api)
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
