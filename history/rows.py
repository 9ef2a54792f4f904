"""Objects handed between sessions, and values made storable: the helpers every store module shares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from sqlalchemy import inspect
from sqlalchemy.orm import Session

from core.redaction import json_safe
from history.models import Base

_Row = TypeVar("_Row", bound=Base)


def attached(session: Session, obj: _Row) -> _Row:
    """``obj`` as an instance of ``session``: re-attached when detached, or the session's own copy."""
    if obj in session:
        return obj
    state = inspect(obj)
    if state.detached and state.key is not None and state.key not in session.identity_map:
        session.add(obj)
        return obj
    found = session.get(type(obj), state.identity)
    if found is None:
        raise LookupError(f"{obj!r} is not in the history database")
    return found


def mirror(targets: tuple[Base, ...], **values: Any) -> None:
    """Set ``values`` on every distinct object in ``targets``."""
    # The caller's object and the session's copy may differ; both should show the new state.
    for target in {id(t): t for t in targets}.values():
        for name, value in values.items():
            setattr(target, name, value)


def json_mapping(value: Mapping[str, Any] | Any | None, *, mask_secret_keys: bool) -> dict[str, Any]:
    """``value`` as a JSON-safe dict (see ``json_safe``); a non-mapping is wrapped as ``{"value": ...}``."""
    if value is None:
        return {}
    safe = json_safe(value, mask_secret_keys=mask_secret_keys)
    return safe if isinstance(safe, dict) else {"value": safe}
