"""The commerce API's clients: its authorization server (sign-in, userinfo), the signed-in user's saved
session and the API client, built from the settings."""

from __future__ import annotations

import httpx
from pydantic import SecretStr

from connectors.commerce import CommerceClient
from connectors.commerce.oidc import OidcClient, OidcEndpoints, UserSession
from connectors.http import RequestLog
from connectors.oauth import ClientCredentials
from runtime.api_limits import COMMERCE_API, RateLimitHook
from runtime.endpoints import ConfigurationError
from runtime.settings import Settings, get_settings
from runtime.wiring.services import resolve
from tasks.commerce.token_store import SavedLogin, TokenStore, login_name, now_text, token_store


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
        options=service.options(settings, transport),
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
        options=service.options(
            settings, transport, request_log=request_log, before_request=RateLimitHook(COMMERCE_API)
        ),
    )
