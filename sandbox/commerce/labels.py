"""Address labels (barcode sub-API) and return orders (§4.4): the spec shows neither their paths nor their
fields (§2.13), so the sandbox serves them at ``commerce_paths.barcode_path`` and ``return_order_path``,
accepts any JSON object and answers 200 with ``{"id": <new UUID>, "received": [<the body's top-level keys,
sorted>]}``; a body that is not a JSON object is 400.
"""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Request

from sandbox.commerce.bodies import json_object
from sandbox.commerce.errors import INVALID_PARAMETER


def accepting_router(path: str) -> APIRouter:
    """A router accepting any JSON object posted to ``path``."""
    router = APIRouter()

    @router.post(path)
    async def accept(request: Request) -> dict[str, Any]:
        body = await json_object(request, INVALID_PARAMETER)
        return {"id": str(uuid.uuid4()), "received": sorted(body.data)}

    return router
