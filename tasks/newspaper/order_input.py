"""Reading and checking a newspaper order (§2.1 JSON) before anything is sent; no Prefect here, so the CLI
refuses a bad order before Prefect loads."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from connectors.newspaper import GratisOrder, StandardOrder, check_gratis_order, check_standard_order
from connectors.newspaper.validation import ensure_valid
from tasks.errors import InputError

OrderKind = Literal["standard", "gratis"]


def load_order(path: Path, kind: OrderKind) -> StandardOrder | GratisOrder:
    """Read an order body (§2.1 JSON) from ``path``.

    Raises:
        InputError: the file is missing, not JSON, or not an order object.
    """
    if not path.is_file():
        raise InputError("order file not found", path=path)
    try:
        body = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"not a JSON order: {exc}", path=path) from exc
    return order_from_body(body, kind, source=path)


def order_from_body(body: Any, kind: OrderKind, *, source: Path | str) -> StandardOrder | GratisOrder:
    """The order of a request body (§2.1), read from a file or filled in a form (named by ``source``).

    Raises:
        InputError: not an order object, or a field of the wrong type (named by its path).
    """
    if not isinstance(body, dict):
        raise InputError("the order must be a JSON object (§2.1)", path=source)
    model = GratisOrder if kind == "gratis" else StandardOrder
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}" for error in exc.errors()
        )
        raise InputError(f"not a valid {kind} order: {problems}", path=source) from exc


def check_order(order: StandardOrder | GratisOrder, *, today: dt.date) -> None:
    """Validate before anything is sent; raises ``OrderInvalid`` naming each bad field."""
    if isinstance(order, StandardOrder):
        ensure_valid("standard order", check_standard_order(order, today=today))
    else:
        ensure_valid("gratis order", check_gratis_order(order, today=today))
