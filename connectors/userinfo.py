"""The OpenID Connect claims of a signed-in user (``/userinfo``), apart from the sign-in itself, so that the
commerce models use them without loading the OpenID Connect client and its libraries."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict


def parse_flag(value: object) -> object:
    """Userinfo flags come as ``TRUE``/``FALSE`` strings (commerce spec §2.11) or as JSON booleans."""
    if isinstance(value, str) and value.strip().upper() in ("TRUE", "FALSE"):
        return value.strip().upper() == "TRUE"
    return value


Flag = Annotated[bool, BeforeValidator(parse_flag)]


class UserinfoAddress(BaseModel):
    model_config = ConfigDict(extra="allow")

    formatted: str | None = None
    street_address: str | None = None
    locality: str | None = None
    postal_code: str | None = None
    country: str | None = None


class Userinfo(BaseModel):
    """The OpenID Connect claims of the signed-in user; unknown claims are kept."""

    model_config = ConfigDict(extra="allow")

    sub: str
    name: str | None = None
    given_name: str | None = None
    family_name: str | None = None
    preferred_username: str | None = None
    email: str | None = None
    email_verified: Flag | None = None
    gender: str | None = None
    locale: str | None = None
    phone_number: str | None = None
    phone_number_verified: Flag | None = None
    address: UserinfoAddress | None = None
    updated_at: int | str | None = None
