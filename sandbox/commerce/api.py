"""Sandbox of the commerce API (address, delivery, pickup, barcode and return-order sub-APIs), mounted at
``/commerce``: every endpoint of the spec's §4 behind the bearer check of its scope, §7's error answers as
``{"code", "message"}`` (see :mod:`sandbox.commerce.errors`), and the unshown paths from
``SandboxConfig.commerce_paths``.

Scopes: personal addresses need ``DCAPI_ADDRESS_READ`` on a token the end user consented to (a client
credentials token is 403); validation ``DCAPI_ADDRESS_READ`` or ``DCAPI_ADDRESS_VALIDATE``; zips, streets and
houses ``DCAPI_ADDRESS_READ`` or ``DCAPI_ADDRESS_AUTOCOMPLETE``; delivery and same-day ``DCAPI_DELIVERY``;
pickup users and points ``DCAPI_PICKUP``; barcode ``DCAPI_BARCODE_READ``; return orders
``DCAPI_RETURN_ORDER``. Pickup users are kept in ``state``; everything else is computed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter, Depends, FastAPI

from sandbox.auth import require_scope
from sandbox.commerce.addresses import personal_router
from sandbox.commerce.autocomplete import autocomplete_router
from sandbox.commerce.delivery import delivery_router
from sandbox.commerce.errors import install_commerce_errors, processed_failure, service_status_fault
from sandbox.commerce.labels import accepting_router, label_router
from sandbox.commerce.pickup import pickup_router
from sandbox.commerce.sameday import same_day_router
from sandbox.commerce.validation import validation_router
from sandbox.state import SandboxState

if TYPE_CHECKING:  # the config imports this package's users: a runtime import would be circular
    from sandbox.config import SandboxConfig

__all__ = ["create_app", "processed_failure"]

SCOPE_ADDRESS_READ = "DCAPI_ADDRESS_READ"
SCOPE_ADDRESS_VALIDATE = "DCAPI_ADDRESS_VALIDATE"
SCOPE_ADDRESS_AUTOCOMPLETE = "DCAPI_ADDRESS_AUTOCOMPLETE"
SCOPE_DELIVERY = "DCAPI_DELIVERY"
SCOPE_PICKUP = "DCAPI_PICKUP"
SCOPE_BARCODE = "DCAPI_BARCODE_READ"
SCOPE_RETURN_ORDER = "DCAPI_RETURN_ORDER"


def create_app(config: SandboxConfig, state: SandboxState) -> FastAPI:
    """The commerce API app for ``config``, keeping its pickup users in ``state``."""
    app = FastAPI(title="sandbox commerce API", version="1")
    install_commerce_errors(app)
    paths = config.commerce_paths

    def protect(router: APIRouter, *scopes: str, user: bool = False) -> None:
        # The bearer check runs first, so a fault or a bad body never answers an unauthorised caller.
        check = require_scope(config, *scopes, user=user)
        app.include_router(router, dependencies=[Depends(check), Depends(service_status_fault)])

    personal_check = require_scope(config, SCOPE_ADDRESS_READ, user=True)
    app.include_router(
        personal_router(config, personal_check),
        dependencies=[Depends(personal_check), Depends(service_status_fault)],
    )
    # commerce.scopes, the other way: validation and look-ups take their own scopes only.
    other = config.guesses == "other"
    protect(
        validation_router(config.clock), *(() if other else (SCOPE_ADDRESS_READ,)), SCOPE_ADDRESS_VALIDATE
    )
    protect(autocomplete_router(), *(() if other else (SCOPE_ADDRESS_READ,)), SCOPE_ADDRESS_AUTOCOMPLETE)
    protect(delivery_router(config.clock), SCOPE_DELIVERY)
    protect(same_day_router(paths.same_day_path), SCOPE_DELIVERY)
    protect(pickup_router(paths, state, config.clock), SCOPE_PICKUP)
    protect(label_router(paths.barcode_path), SCOPE_BARCODE)
    protect(accepting_router(paths.return_order_path), SCOPE_RETURN_ORDER)
    return app
