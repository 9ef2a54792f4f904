"""Where the commerce sandbox serves the endpoints whose path or method the spec does not show (§4.2–§4.4).

Every path is relative to the commerce mount (``/commerce``); the pickup users and pickup points live under
``pickup_prefix`` (the spec's ``/pickup/v1``; the real service is known to use ``/pickpost/v1``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, field_validator


class CommercePaths(BaseModel):
    """Paths of the unshown endpoints (defaults: the ones the connector's settings start from)."""

    # Same-day acceptance points: a GET carrying the JSON body of §2.8.
    same_day_path: str = "/api/delivery/v1/sameday/acceptancepoints"
    pickup_prefix: str = "/pickup/v1"
    pickup_points_method: Literal["GET", "POST", "PUT"] = "POST"
    # Relative to ``pickup_prefix``: the default serves ``POST /pickup/v1/points``.
    pickup_points_path: str = "/points"
    barcode_path: str = "/barcode/v1/addresslabels"
    return_order_path: str = "/delivery/collection/order/v2/orders"

    @field_validator(
        "same_day_path", "pickup_prefix", "pickup_points_path", "barcode_path", "return_order_path"
    )
    @classmethod
    def _absolute(cls, value: str) -> str:
        """One leading slash, no trailing one: ``pickpost/v1/`` reads ``/pickpost/v1``."""
        trimmed = value.strip().strip("/")
        if not trimmed:
            raise ValueError("a path needs at least one segment")
        return f"/{trimmed}"

    @property
    def pickup_users_path(self) -> str:
        return f"{self.pickup_prefix}/users"

    @property
    def pickup_points_full_path(self) -> str:
        return f"{self.pickup_prefix}{self.pickup_points_path}"
