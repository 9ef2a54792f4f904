"""Strict JSON text, the only kind the project writes: no ``NaN``, ``Infinity`` or ``-Infinity`` (which
Python's :mod:`json` writes by default and a strict parser refuses). A float that is not finite (pandas
writes a missing number as NaN) is ``null``; any other value JSON cannot hold goes through ``default``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every float that is not finite, in any mapping, list or tuple, replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def json_text(
    value: Any,
    *,
    indent: int | None = None,
    sort_keys: bool = False,
    compact: bool = False,
    ascii_only: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``value`` as strict JSON text (see the module); ``compact`` leaves out the spaces after separators."""
    return json.dumps(
        finite(value),
        indent=indent,
        sort_keys=sort_keys,
        separators=(",", ":") if compact else None,
        ensure_ascii=ascii_only,
        allow_nan=False,
        default=None if default is None else lambda item: finite(default(item)),
    )
