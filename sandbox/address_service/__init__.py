"""Sandbox of the address web service (REST/v1): batch alignment, individual queries and the address
assistant over synthetic detailed records of a few postcode areas and a directory of every Swiss postcode,
with Basic authentication and fault injection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import FastAPI

from sandbox.address_service.batch_routes import batch_router
from sandbox.address_service.query_routes import query_router
from sandbox.address_service.service import AddressService, accepted, processed_failure
from sandbox.state import SandboxState

if TYPE_CHECKING:  # the config holds this package's alignments: a runtime import would be circular
    from sandbox.config import SandboxConfig

__all__ = ["accepted", "create_app", "processed_failure"]


def create_app(config: SandboxConfig, state: SandboxState) -> FastAPI:
    """The address-service app for ``config`` keeping its files and jobs in ``state``, to be mounted at
    ``/address/REST/v1``."""
    service = AddressService(config, state)
    app = FastAPI(title="address web service sandbox", version="1")
    app.state.service = service
    app.include_router(batch_router(service))
    app.include_router(query_router(service))
    return app
