"""Idempotency keys: the same work gives the same key, so a re-run finds what an earlier run recorded.

A key covers the input's bytes, every option that changes what is sent or how results are built, and the
service it goes to (base address and user, never a secret): a run against the sandbox and a later run against
the real service never share a key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from history import file_digest


@dataclass(frozen=True)
class Endpoint:
    """The service a submission goes to: its base address and the user or client id that acts."""

    base_url: str
    user: str | None

    def fingerprint(self) -> str:
        text = json.dumps([self.base_url.rstrip("/").lower(), self.user or ""])
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def derive_key(
    flow: str,
    *,
    endpoint: Endpoint,
    files: tuple[Path, ...] = (),
    parameters: Mapping[str, Any] | None = None,
) -> str:
    """A stable key from the flow name, the content of ``files``, the identifying ``parameters`` and the
    ``endpoint``."""
    digest = hashlib.sha256(flow.encode())
    digest.update(endpoint.fingerprint().encode())
    for path in files:
        digest.update(file_digest(path)[1].encode())
    if parameters:
        digest.update(json.dumps(parameters, sort_keys=True, default=str).encode())
    return f"{flow}:{digest.hexdigest()[:24]}"


def body_fingerprint(body: Any) -> str:
    """The SHA-256 of a request body as canonical JSON: a resumed submission must have sent this one."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def named_key(name: str, *, endpoint: Endpoint) -> str:
    """A readable key (an order's newspaper, issue and date) scoped to the service it goes to."""
    return f"{name}@{endpoint.fingerprint()}"
