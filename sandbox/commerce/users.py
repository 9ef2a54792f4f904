"""The sandbox's registered end users: their OpenID Connect profile (userinfo claims, §2.11) and their
personal delivery addresses (§2.1), as the authorization server and the address sub-API both see them.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter

USERS_FILE = "default_users.json"


class CommerceUser(BaseModel):
    """One end user: ``claims`` are the userinfo claims (``sub`` is the key of the user), ``addresses`` the
    Address resources (§2.1) the user owns, as JSON objects."""

    claims: dict[str, Any]
    addresses: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def subject(self) -> str:
        return str(self.claims["sub"])


_USERS = TypeAdapter(list[CommerceUser])


def default_users() -> dict[str, CommerceUser]:
    """Two users, so that one user's address id is someone else's 404. Hans has an address of every type
    of §2.1; their streets and house keys are in the commerce reference data
    (:mod:`sandbox.commerce.reference`). They are kept in ``data/default_users.json``; each call gives
    users of their own, free to change."""
    text = resources.files("sandbox.commerce.data").joinpath(USERS_FILE).read_text(encoding="utf-8")
    users = _USERS.validate_json(text)
    return {user.subject: user for user in users}
