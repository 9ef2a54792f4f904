"""Personal addresses of the signed-in end user (§4.1 ``users/current/addresses``): the list, the MAIN
address and one address by its UUID, only ever the token's own user's.

``commerce_type_spelling = "real"`` serves the pickup-point and locker types as the real service spells them
(``PICK_POST``, ``MY_POST_24``) instead of the spec's ``PICKUP_POINT`` and ``LOCKER``. A token whose user
the sandbox does not know, or who has no MAIN address, gets 404; a known user without addresses gets ``[]``.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request

from sandbox.auth import IssuedToken
from sandbox.commerce.errors import INVALID_ID, NOT_FOUND, CommerceError

if TYPE_CHECKING:
    from sandbox.commerce.users import CommerceUser
    from sandbox.config import SandboxConfig

PERSONAL = "/address/v1/users/current/addresses"
REAL_TYPE_SPELLING = {"PICKUP_POINT": "PICK_POST", "LOCKER": "MY_POST_24"}


def personal_router(config: SandboxConfig, user_token: Callable[..., IssuedToken]) -> APIRouter:
    """The three personal routes; ``user_token`` is the bearer check the router is protected by (asked
    again here for the token's user)."""
    router = APIRouter()

    def served(address: dict[str, Any]) -> dict[str, Any]:
        answer = copy.deepcopy(address)
        if config.commerce_type_spelling == "real":
            answer["type"] = REAL_TYPE_SPELLING.get(answer.get("type", ""), answer.get("type"))
        return answer

    def user_of(request: Request) -> CommerceUser:
        token = user_token(request)
        user = config.commerce_users.get(token.subject or "")
        if user is None:
            raise CommerceError(404, NOT_FOUND, f"user {token.subject} has no addresses here")
        return user

    @router.get(PERSONAL)
    def addresses(request: Request) -> list[dict[str, Any]]:
        return [served(address) for address in user_of(request).addresses]

    @router.get(f"{PERSONAL}/main")
    def main_address(request: Request) -> dict[str, Any]:
        for address in user_of(request).addresses:
            if address.get("type") == "MAIN":
                return served(address)
        raise CommerceError(404, NOT_FOUND, "the user has no MAIN address")

    @router.get(PERSONAL + "/{address_id}")
    def address(address_id: str, request: Request) -> dict[str, Any]:
        try:
            wanted = uuid.UUID(address_id)
        except ValueError as exc:
            raise CommerceError(400, INVALID_ID, f"id {address_id!r} is not a UUID") from exc
        for owned in user_of(request).addresses:
            if _same_id(owned.get("id"), wanted):
                return served(owned)
        raise CommerceError(404, NOT_FOUND, f"address {wanted} does not exist or is not the user's")

    return router


def _same_id(stored: Any, wanted: uuid.UUID) -> bool:
    try:
        return isinstance(stored, str) and uuid.UUID(stored) == wanted
    except ValueError:
        return False
