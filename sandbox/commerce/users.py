"""The sandbox's registered end users: their OpenID Connect profile (userinfo claims, §2.11) and their
personal delivery addresses (§2.1), as the authorization server and the address sub-API both see them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class CommerceUser(BaseModel):
    """One end user: ``claims`` are the userinfo claims (``sub`` is the key of the user), ``addresses`` the
    Address resources (§2.1) the user owns, as JSON objects."""

    claims: dict[str, Any]
    addresses: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def subject(self) -> str:
        return str(self.claims["sub"])


def _address(
    type_: str, street: str, number: str | None, zip_code: str, city: str, *, id_: str | None, **extra: Any
) -> dict[str, Any]:
    """An Address (§2.1); ``number`` None leaves the house number out (a LOCKER has none), ``logistic``
    adds a logisticLocation, ``nickname`` a nickname."""
    house = {"street": street, "houseNumber": number, "houseKey": extra.get("key", "")}
    address: dict[str, Any] = {
        "type": type_,
        "addressee": {"title": "MISTER", "firstName": extra.get("first", "Hans"), "lastName": "Muster"},
        "geographicLocation": {
            "house": {name: value for name, value in house.items() if value is not None},
            "zip": {"zip": zip_code, "city": city},
        },
    }
    if "nickname" in extra:
        address["nickname"] = extra["nickname"]
    if "logistic" in extra:
        address["logisticLocation"] = extra["logistic"]
    if id_ is not None:
        address["id"] = id_
    return address


def _logistic(designation: str, zip_code: str, city: str, post_box_number: str = "") -> dict[str, Any]:
    """A logisticLocation whose street holds the box, locker or pickup-point designation."""
    location: dict[str, Any] = {"house": {"street": designation}, "zip": {"zip": zip_code, "city": city}}
    if post_box_number:
        location["postBoxNumber"] = post_box_number
    return location


def default_users() -> dict[str, CommerceUser]:
    """Two users, so that one user's address id is someone else's 404. Hans has an address of every type
    of §2.1; their streets and house keys are in the commerce reference data
    (:mod:`sandbox.commerce.reference`)."""
    hans = CommerceUser(
        claims={
            "sub": "c0a80101-0000-4000-8000-000000000001",
            "name": "Hans Muster",
            "given_name": "Hans",
            "family_name": "Muster",
            "preferred_username": "hans.muster",
            "email": "hans.muster@example.ch",
            "email_verified": "TRUE",
            "gender": "male",
            "locale": "de",
            "phone_number": "+41791234567",
            "phone_number_verified": "FALSE",
            "address": {
                "formatted": "Hans Muster\nWankdorfallee 4\n3030 Bern\nSchweiz",
                "street_address": "Wankdorfallee 4",
                "locality": "Bern",
                "postal_code": "3030",
                "country": "CH",
            },
            "updated_at": 1763900000,
        },
        addresses=[
            _address("MAIN", "Wankdorfallee", "4", "3030", "Bern", id_=None, key="76543210"),
            _address(
                "DOMICILE",
                "Bahnhofstrasse",
                "1",
                "8001",
                "Zürich",
                id_="5b7c2f1e-3d4a-4c8b-9e6f-0a1b2c3d4e5f",
                key="12345678",
            ),
            _address(
                "PICKUP_POINT",
                "Schanzenstrasse",
                "4",
                "3008",
                "Bern",
                id_="3e4f5a6b-7c8d-4e9f-8a0b-1c2d3e4f5a6b",
                nickname="PickPost Bern Schanzenpost",
                logistic=_logistic("PickPost 3008003", "3008", "Bern"),
            ),
            _address(
                "LOCKER",
                "Bahnhofplatz",
                None,
                "3011",
                "Bern",
                id_="7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d",
                nickname="My Post 24 Bern Bahnhof",
                logistic=_logistic("My Post 24 Bern Bahnhof", "3011", "Bern"),
            ),
            _address(
                "POSTBOX",
                "Wankdorfallee",
                "4",
                "3030",
                "Bern",
                id_="b1c2d3e4-f5a6-4b7c-9d8e-0f1a2b3c4d5e",
                key="76543210",
                nickname="Postfach",
                logistic=_logistic("Postfach 1234", "3001", "Bern", post_box_number="1234"),
            ),
        ],
    )
    anna = CommerceUser(
        claims={
            "sub": "c0a80101-0000-4000-8000-000000000002",
            "name": "Anna Beispiel",
            "given_name": "Anna",
            "family_name": "Beispiel",
            "preferred_username": "anna.beispiel",
            "email": "anna.beispiel@example.ch",
            "email_verified": "TRUE",
            "gender": "female",
            "locale": "fr",
            "updated_at": 1763900000,
        },
        addresses=[
            _address("MAIN", "Rue du Rhône", "10", "1204", "Genève", id_=None, first="Anna", key="87654321"),
            _address(
                "DOMICILE",
                "Rue du Rhône",
                "10",
                "1204",
                "Genève",
                id_="9d8e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a",
                first="Anna",
                key="87654321",
            ),
        ],
    )
    return {user.subject: user for user in (hans, anna)}
