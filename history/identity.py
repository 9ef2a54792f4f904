"""Idempotency keys: the same work gives the same key, so a re-run finds what an earlier run recorded.

A key covers what is sent (the bytes of an upload, the canonical JSON of a posted body, and the options that
go with them) and the service it goes to (base address and user, never a secret): options that produce the
same request are the same work, and a run against the sandbox and a later run against the real service never
share a key. A run that learns what it sends only once it has read its input starts under a key of its input
and options and goes on under the key of what it sends (``RunRecorder.rekey``).
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


def body_key(flow: str, *, endpoint: Endpoint, body: Any, **sent: Any) -> str:
    """The key of a submission from what is posted: its JSON body (canonical: key order and spacing do not
    count) and anything else that goes with it (``sent``: the kind of order), with the service it goes to."""
    return derive_key(flow, endpoint=endpoint, parameters={"body": body, **sent})


def body_fingerprint(body: Any) -> str:
    """The SHA-256 of a request body as canonical JSON: a resumed submission must have sent this one."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def named_key(name: str, *, endpoint: Endpoint) -> str:
    """A readable key (an order's newspaper, issue and date) scoped to the service it goes to."""
    return f"{name}@{endpoint.fingerprint()}"
