"""Answers already received for the rows of one piece of work, kept on disk so that a resumed run does not ask
for them again.

A checkpoint belongs to an idempotency key (the input's bytes, the options and the service: see
:func:`tasks.idempotency.derive_key`); the key's lease lets one run at a time write it. Answers are buffered
and written as numbered parts, each through the one atomic writer, so a crash loses at most the answers
since the last part and never leaves half a line. Each entry carries a hash of what was sent for its row: a
resumed run reuses an answer only for the same request.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tasks.files import write_text

_PART = re.compile(r"^part-(\d{6})\.jsonl$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def request_fingerprint(body: Any) -> str:
    """A hash of what is sent for a row (its JSON body or query), to tell the same request from another."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class RowCheckpoint:
    """The answered rows of one key: ``row → entry`` with the request's fingerprint and the outcome.

    Args:
        directory: where the parts are kept (one directory per key).
        flush_rows: write a part when this many answers wait.
        flush_seconds: write a part when the oldest waiting answer is this old.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        directory: Path,
        *,
        flush_rows: int = 200,
        flush_seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.directory = directory
        self._flush_rows = max(1, flush_rows)
        self._flush_seconds = flush_seconds
        self._clock = clock
        self._pending: list[dict[str, Any]] = []
        self._pending_since: float | None = None

    @classmethod
    def for_key(cls, root: Path, key: str, **options: Any) -> RowCheckpoint:
        """The checkpoint of ``key`` under ``root`` (the key made a safe directory name)."""
        return cls(root / _UNSAFE.sub("-", key), **options)

    def load(self) -> dict[int, dict[str, Any]]:
        """Every entry written so far, by row; a later part's entry for a row replaces an earlier one.

        A part that cannot be read (it never should: parts are written atomically) is skipped, so its
        rows are simply asked again.
        """
        entries: dict[int, dict[str, Any]] = {}
        for part in self._parts():
            try:
                lines = part.read_text(encoding="utf-8").splitlines()
                parsed = [json.loads(line) for line in lines if line.strip()]
            except (OSError, ValueError):
                continue
            for entry in parsed:
                if isinstance(entry, dict) and isinstance(entry.get("row"), int):
                    entries[entry["row"]] = entry
        return entries

    def add(self, row: int, fingerprint: str, outcome: dict[str, Any]) -> None:
        """Keep one row's outcome; a part is written when enough answers wait or the oldest is old enough."""
        self._pending.append({"row": row, "sent": fingerprint, **outcome})
        if self._pending_since is None:
            self._pending_since = self._clock()
        if (
            len(self._pending) >= self._flush_rows
            or self._clock() - self._pending_since >= self._flush_seconds
        ):
            self.flush()

    def flush(self) -> None:
        """Write the waiting answers as the next part."""
        if not self._pending:
            return
        numbers = [int(match.group(1)) for part in self._parts() if (match := _PART.match(part.name))]
        part = self.directory / f"part-{max(numbers, default=0) + 1:06d}.jsonl"
        text = "".join(json.dumps(entry, ensure_ascii=False, default=str) + "\n" for entry in self._pending)
        write_text(part, text)
        self._pending.clear()
        self._pending_since = None

    def clear(self) -> None:
        """Forget every answer (the work is done): the directory goes."""
        self._pending.clear()
        self._pending_since = None
        shutil.rmtree(self.directory, ignore_errors=True)

    def _parts(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(path for path in self.directory.iterdir() if _PART.match(path.name))
