"""JSON-safe conversion with secret masking (core.redaction), independent of any database."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from enum import Enum
from pathlib import Path
from uuid import UUID

from pydantic import BaseModel, SecretBytes, SecretStr

from core.redaction import MASK, is_secret_key, json_safe, register_secret, scrubbed_json


class Colour(Enum):
    RED = "red"


class Credentials(BaseModel):
    user: str
    password: SecretStr
    note: SecretStr | None = None


@dataclass
class Target:
    path: Path
    api_token: str


def test_secret_key_names() -> None:
    for key in (
        "password",
        "DB_PASSWORD",
        "clientSecret",
        "access-token",
        "Authorization",
        "X-Api-Key",
        "apikey",
    ):
        assert is_secret_key(key), key
    for key in ("user", "year", "path", "keyword", "author"):
        assert not is_secret_key(key), key


def test_nested_structures_are_masked_and_json_safe() -> None:
    value = {
        "auth": Credentials(user="ann", password=SecretStr("pw"), note=SecretStr("n")),
        "target": Target(path=Path("/tmp/x"), api_token="t"),
        "items": ({"token": "a"}, {"ok": 1}),
        "tags": {"b", "a"},
        "raw": SecretBytes(b"bytes"),
        "blob": b"\x00\x01",
        "when": date(2026, 1, 2),
        "wait": timedelta(minutes=1),
        "colour": Colour.RED,
        "amount": Decimal("1.50"),
        "id": UUID(int=1),
        "ratio": float("nan"),
        "other": object(),
        "password": None,
        7: "int key",
    }
    safe = json_safe(value)
    json.dumps(safe, allow_nan=False)
    assert safe == {
        "auth": {"user": "ann", "password": MASK, "note": MASK},
        "target": {"path": "/tmp/x", "api_token": MASK},
        "items": [{"token": MASK}, {"ok": 1}],
        "tags": ["a", "b"],
        "raw": MASK,
        "blob": "<2 bytes>",
        "when": "2026-01-02",
        "wait": 60.0,
        "colour": "red",
        "amount": "1.50",
        "id": "00000000-0000-0000-0000-000000000001",
        "ratio": "nan",
        "other": "<object>",
        "password": None,
        "7": "int key",
    }


def test_key_masking_can_be_turned_off_but_secret_values_stay_masked() -> None:
    safe = json_safe({"batch_token": "T-1", "secret": SecretStr("x")}, mask_secret_keys=False)
    assert safe == {"batch_token": "T-1", "secret": MASK}


def test_kept_json_loses_registered_secrets_in_keys_and_texts_as_well() -> None:
    register_secret("Kept-Json-Value 5")
    value = {
        "note": "the service echoed Kept-Json-Value 5",
        "password": "any",
        "rows": [{"Kept-Json-Value 5": 1}, Path("/tmp/Kept-Json-Value 5")],
    }
    assert scrubbed_json(value) == {
        "note": "the service echoed [redacted]",
        "password": MASK,
        "rows": [{"[redacted]": 1}, "/tmp/[redacted]"],
    }
