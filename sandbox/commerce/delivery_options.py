"""The sandbox's delivery catalogue: logistic products (§2.6), additional services and delivery instructions
(§2.7). A realistic handful with names in the four languages; codes and barcodes are the sandbox's own.

The catalogue is kept in ``data/delivery_options.json``: the economy and priority parcels, and the same-day
products of the acceptance points (§2.8).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

CATALOGUE_FILE = "delivery_options.json"


def _load_catalogue() -> dict[str, Any]:
    text = resources.files("sandbox.commerce.data").joinpath(CATALOGUE_FILE).read_text(encoding="utf-8")
    catalogue: dict[str, Any] = json.loads(text)
    return catalogue


_CATALOGUE = _load_catalogue()
ADDITIONAL_SERVICES: tuple[dict[str, Any], ...] = tuple(_CATALOGUE["additional_services"])
DELIVERY_INSTRUCTIONS: tuple[dict[str, Any], ...] = tuple(_CATALOGUE["delivery_instructions"])
PRODUCTS: dict[str, dict[str, Any]] = {product["productCode"]: product for product in _CATALOGUE["products"]}
