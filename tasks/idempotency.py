"""Idempotency keys: the same input and parameters give the same key, so a re-run finds its recorded work."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def derive_key(
    flow: str, *, files: tuple[Path, ...] = (), parameters: Mapping[str, Any] | None = None
) -> str:
    """A stable key from the flow name, the content of ``files`` and the identifying ``parameters``."""
    digest = hashlib.sha256(flow.encode())
    for path in files:
        digest.update(file_digest(path).encode())
    if parameters:
        digest.update(json.dumps(parameters, sort_keys=True, default=str).encode())
    return f"{flow}:{digest.hexdigest()[:24]}"
