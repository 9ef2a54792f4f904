"""The run object: what one flow run works with, built once where the flow starts and handed down.

A flow begins with :meth:`Run.begin`, which reads the settings once (the environment, ``.env`` and the
credentials block); every step below takes the run (or what it needs of it) and builds nothing of its own:
the clients of the APIs the flow calls come from :meth:`Run.address_service`, :meth:`Run.newspaper` and
:meth:`Run.commerce`, each for the service the settings name, or for the embedded sandbox where that is asked
for and allowed. Each client module is imported when its client is first asked for, so a run imports only the
connector of the API it calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from runtime.endpoints import Api
from runtime.settings import Settings, get_settings

if TYPE_CHECKING:
    from connectors.address_service import AddressServiceClient
    from connectors.commerce import CommerceClient
    from connectors.commerce.oidc import UserSession
    from connectors.http import RequestLog
    from connectors.newspaper import NewspaperClient
    from history.identity import Endpoint


@dataclass(frozen=True)
class Run:
    """One flow run's settings and the APIs it calls (``apis``: its clients are built for these only)."""

    flow: str
    settings: Settings
    apis: tuple[Api, ...] = ()

    @classmethod
    def begin(cls, flow: str, apis: Sequence[Api] = (), settings: Settings | None = None) -> Run:
        """The run of ``flow``, with the settings read now (or ``settings``, already read)."""
        return cls(flow, settings if settings is not None else get_settings(), tuple(apis))

    @property
    def sandbox(self) -> bool:
        """Whether one of the run's APIs answers from the embedded sandbox (its URL setting is unset)."""
        sandboxes = {
            "address-service": self.settings.address_service.is_sandbox,
            "newspaper": self.settings.newspaper.is_sandbox,
            "commerce": self.settings.commerce.is_sandbox,
        }
        return any(sandboxes[api] for api in self.apis)

    def endpoint(self, api: Api) -> Endpoint:
        """The service ``api`` the run talks to, as its idempotency keys name it."""
        from runtime.wiring import endpoint

        return endpoint(self.settings, api)

    def address_service(self, request_log: RequestLog | None = None) -> AddressServiceClient:
        """A client of the address web service's batch and queries."""
        from runtime.wiring import address_service_client

        return address_service_client(self.settings, request_log=request_log)

    def newspaper(self, request_log: RequestLog | None = None) -> NewspaperClient:
        """A client of the newspaper API."""
        from runtime.wiring import newspaper_client

        return newspaper_client(self.settings, request_log=request_log)

    def commerce(
        self, request_log: RequestLog | None = None, *, user: UserSession | None = None
    ) -> CommerceClient:
        """A client of the commerce API (as the signed-in ``user`` where one is given)."""
        from runtime.wiring import commerce_client

        return commerce_client(self.settings, user=user, request_log=request_log)
