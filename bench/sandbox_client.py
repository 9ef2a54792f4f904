"""An address-service client wired to an in-process sandbox, as the benchmarks use it."""

from __future__ import annotations

from pydantic import SecretStr

from connectors.address_service import AddressServiceClient
from sandbox.config import SandboxConfig
from sandbox.inprocess import SandboxTransport, address_service_url

MAINTENANCE_KEY = "postflows_maintenance_v1"


def sandbox_client(config: SandboxConfig) -> AddressServiceClient:
    """A client of a fresh sandbox built from ``config`` (its test account, no socket)."""
    return AddressServiceClient(
        address_service_url(),
        username=config.address_user,
        password=SecretStr(config.address_password),
        transport=SandboxTransport(config),
    )
