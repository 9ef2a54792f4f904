"""Reading and checking a newspaper order (§2.1 JSON) before anything is sent; no Prefect here, so the CLI
refuses a bad order before Prefect loads. A file that is not an order is refused naming the line, column and
field of each problem, never quoting what it holds (:mod:`fileio.structured_files`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from connectors.newspaper import GratisOrder, StandardOrder, check_gratis_order, check_standard_order
from connectors.newspaper.validation import ensure_valid
from fileio.errors import InputError
from fileio.structured_files import UnusableFile, body_problems, read_structured

OrderKind = Literal["standard", "gratis"]


def load_order(path: Path, kind: OrderKind) -> StandardOrder | GratisOrder:
    """Read an order body (§2.1 JSON) from ``path``.

    Raises:
        InputError: the file is missing, not JSON, or not an order object (each problem named by line,
            column and field).
    """
    if not path.is_file():
        raise InputError("order file not found", path=path)
    try:
        document = read_structured(path, "json")
    except OSError as exc:
        raise InputError(f"cannot be read: {exc.strerror or type(exc).__name__}", path=path) from None
    except UnusableFile as exc:
        raise InputError(f"not a JSON order: {exc.problem}", path=path) from None
    if not isinstance(document.data, dict):
        problem = "the order must be a JSON object (§2.1)"
        raise InputError(document.problem_at(document.locate(()), problem), path=path)
    model = GratisOrder if kind == "gratis" else StandardOrder
    try:
        return model.model_validate(document.data)
    except ValidationError as exc:
        problems = document.validation_problems(exc, model)
        raise InputError(f"not a valid {kind} order: {problems}", path=path) from None


def order_from_body(body: Any, kind: OrderKind, *, source: Path | str) -> StandardOrder | GratisOrder:
    """The order of a request body (§2.1) filled in a form (named by ``source``).

    Raises:
        InputError: not an order object, or a field of the wrong type (named by its path).
    """
    if not isinstance(body, dict):
        raise InputError("the order must be a JSON object (§2.1)", path=source)
    model = GratisOrder if kind == "gratis" else StandardOrder
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise InputError(f"not a valid {kind} order: {body_problems(exc, model)}", path=source) from None


def check_order(order: StandardOrder | GratisOrder, *, today: dt.date) -> None:
    """Validate before anything is sent; raises ``OrderInvalid`` naming each bad field."""
    if isinstance(order, StandardOrder):
        ensure_valid("standard order", check_standard_order(order, today=today))
    else:
        ensure_valid("gratis order", check_gratis_order(order, today=today))
