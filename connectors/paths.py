"""Where the commerce API's operations are and the scope each asks for: what a deployment may set
(:class:`CommercePaths`, :class:`CommerceScopes`), kept out of the commerce connector so that the settings
of every run name them without loading it (an address run loads no other API's module); and the variable
that sets each path (:data:`PATH_SETTINGS`), which an error about a path names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType


@dataclass(frozen=True)
class CommerceScopes:
    """The scope each operation asks for. The defaults are the spec's names for a confidential client;
    a public client uses ``DCAPI_ADDRESS_VALIDATE`` and ``DCAPI_ADDRESS_AUTOCOMPLETE``."""

    validation: str = "DCAPI_ADDRESS_READ"
    autocomplete: str = "DCAPI_ADDRESS_READ"
    personal: str = "DCAPI_ADDRESS_READ"
    delivery: str = "DCAPI_DELIVERY"
    pickup: str = "DCAPI_PICKUP"
    barcode: str = "DCAPI_BARCODE_READ"
    return_order: str = "DCAPI_RETURN_ORDER"

    def all(self) -> frozenset[str]:
        return frozenset(getattr(self, item.name) for item in fields(self))


@dataclass(frozen=True)
class CommercePaths:
    """Where each sub-API and each endpoint the spec shows no path for lives, relative to the base URL."""

    address: str = "/address/v1"
    delivery: str = "/api/delivery/v1"
    pickup: str = "/pickup/v1"
    same_day: str = "/api/delivery/v1/sameday/acceptancepoints"
    pickup_points: str | None = None  # default: <pickup>/points
    pickup_points_method: str = "POST"
    barcode: str = "/barcode/v1/addresslabels"
    return_order: str = "/delivery/collection/order/v2/orders"

    def __post_init__(self) -> None:
        # A sub-API written as the spec writes its base ("/pickup/v1/") must not give "/pickup/v1//users".
        for name in ("address", "delivery", "pickup"):
            object.__setattr__(self, name, getattr(self, name).rstrip("/"))
        object.__setattr__(self, "pickup_points_method", self.pickup_points_method.upper())


PATH_SETTINGS: Mapping[str, str] = MappingProxyType(
    {
        "address": "POSTFLOWS_COMMERCE_ADDRESS_PATH",
        "delivery": "POSTFLOWS_COMMERCE_DELIVERY_PATH",
        "pickup": "POSTFLOWS_COMMERCE_PICKUP_PATH",
        "same_day": "POSTFLOWS_COMMERCE_SAME_DAY_PATH",
        "pickup_points": "POSTFLOWS_COMMERCE_PICKUP_POINTS_PATH",
        "pickup_points_method": "POSTFLOWS_COMMERCE_PICKUP_POINTS_METHOD",
        "barcode": "POSTFLOWS_COMMERCE_BARCODE_PATH",
        "return_order": "POSTFLOWS_COMMERCE_RETURN_ORDER_PATH",
    }
)
"""The environment variable that sets each field of :class:`CommercePaths` (the settings read them by these
names); an answer that says a path is wrong names its variable."""
