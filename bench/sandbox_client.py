"""An address-service client wired to an in-process sandbox, as the benchmarks use it."""

from __future__ import annotations

from pydantic import SecretStr

from connectors.address_service import AddressServiceClient
from connectors.http import ClientOptions, RequestLog
from sandbox.config import SandboxConfig
from sandbox.inprocess import SandboxTransport, address_service_url

MAINTENANCE_KEY = "postflows_maintenance_v1"


def sandbox_client(
    config: SandboxConfig,
    *,
    transport: SandboxTransport | None = None,
    request_log: RequestLog | None = None,
) -> AddressServiceClient:
    """A client of the sandbox ``transport`` serves, or of a fresh one built from ``config`` (its test
    account, no socket)."""
    return AddressServiceClient(
        address_service_url(),
        username=config.address_user,
        password=SecretStr(config.address_password),
        options=ClientOptions(transport=transport or SandboxTransport(config), request_log=request_log),
    )
