"""Turning flow parameters and results into JSON the history can keep, without any secret in it.

Keys that name a credential are masked wherever they occur, ``SecretStr``/``SecretBytes`` values are masked
whatever their key, and everything else is reduced to JSON types (paths and UUIDs as text, datetimes ISO).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import Any
from uuid import UUID

from pydantic import BaseModel, SecretBytes, SecretStr

MASK = "**********"
SECRET_KEY_PARTS: tuple[str, ...] = ("password", "secret", "token", "authorization", "api_key", "apikey")


def is_secret_key(key: object) -> bool:
    """Whether a mapping key names a credential (case-insensitive, ``-`` and ``_`` alike)."""
    name = str(key).lower().replace("-", "_")
    return any(part in name for part in SECRET_KEY_PARTS)


def json_safe(value: Any, *, mask_secret_keys: bool = True) -> Any:
    """A JSON-serialisable copy of ``value`` with secrets replaced by ``MASK``.

    Args:
        value: Anything a flow might take as a parameter: mappings, sequences, pydantic models,
            dataclasses, paths, datetimes, enums, secrets.
        mask_secret_keys: Mask values under keys such as ``password`` or ``client_secret`` (see
            ``SECRET_KEY_PARTS``). Secret-typed values are masked either way.

    Returns:
        Plain dicts (string keys), lists, strings, numbers, booleans and ``None`` only.
    """
    if isinstance(value, SecretStr | SecretBytes):
        return MASK
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        # JSON has no NaN or infinity and PostgreSQL rejects them.
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Enum):
        return json_safe(value.value, mask_secret_keys=mask_secret_keys)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, PurePath | UUID | Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    if isinstance(value, BaseModel):
        return json_safe(value.model_dump(), mask_secret_keys=mask_secret_keys)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
        return json_safe(fields, mask_secret_keys=mask_secret_keys)
    if isinstance(value, Mapping):
        return {
            str(key): MASK
            if mask_secret_keys and is_secret_key(key) and item is not None
            else json_safe(item, mask_secret_keys=mask_secret_keys)
            for key, item in value.items()
        }
    if isinstance(value, set | frozenset):
        items = [json_safe(item, mask_secret_keys=mask_secret_keys) for item in value]
        return sorted(items, key=repr)
    if isinstance(value, list | tuple):
        return [json_safe(item, mask_secret_keys=mask_secret_keys) for item in value]
    # Unknown objects are kept by type name only: their str() could carry anything, credentials included.
    return f"<{type(value).__qualname__}>"
