"""Answers already received for the rows of one piece of work, kept on disk so that a resumed run does not ask
for them again.

A checkpoint belongs to an idempotency key (the input's bytes, the options and the service: see
:func:`history.identity.derive_key`); the key's lease lets one run at a time write it. Answers are buffered
and written as numbered parts, each through the one atomic writer, so a crash loses at most the answers
since the last part and never leaves half a line. Each entry carries a hash of what was sent for its row: a
resumed run reuses an answer only for the same request. Several writers of one run (the chunk tasks of a
fan-out, on threads or on other processes) each write parts named after themselves, so that none replaces
another's.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import shutil
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from core.json_text import json_text
from fileio.files import write_text

FLUSH_CHECK_S = 1.0
"""How often :func:`kept_on_disk` looks whether waiting answers are due while none comes in."""

_PART = re.compile(r"^part-(\d{6})(?:-[A-Za-z0-9]+)?\.jsonl$")
_WRITER = re.compile(r"^[A-Za-z0-9]+$")
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
        writer: names this writer's parts (``part-000003-c2.jsonl``); None for the only writer.
    """

    def __init__(
        self,
        directory: Path,
        *,
        flush_rows: int = 200,
        flush_seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        writer: str | None = None,
    ) -> None:
        if writer is not None and not _WRITER.match(writer):
            raise ValueError(f"a checkpoint writer's name is letters and digits, got {writer!r}")
        self.directory = directory
        self.writer = writer
        self._flush_rows = max(1, flush_rows)
        self._flush_seconds = flush_seconds
        self._clock = clock
        self._pending: list[dict[str, Any]] = []
        self._pending_since: float | None = None

    @classmethod
    def for_key(cls, root: Path, key: str, **options: Any) -> RowCheckpoint:
        """The checkpoint of ``key`` under ``root`` (the key made a safe directory name)."""
        return cls(root / _UNSAFE.sub("-", key), **options)

    def for_writer(self, writer: str) -> RowCheckpoint:
        """Another writer of the same checkpoint: its own waiting answers, its own parts."""
        return RowCheckpoint(
            self.directory,
            flush_rows=self._flush_rows,
            flush_seconds=self._flush_seconds,
            clock=self._clock,
            writer=writer,
        )

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
        if len(self._pending) >= self._flush_rows:
            self.flush()
        else:
            self.flush_if_due()

    def flush_if_due(self) -> None:
        """Write the waiting answers when the oldest has waited ``flush_seconds``: called as answers come in
        and, by a run whose requests stall, between them."""
        if self._pending_since is not None and self._clock() - self._pending_since >= self._flush_seconds:
            self.flush()

    def flush(self) -> None:
        """Write the waiting answers as the next part."""
        if not self._pending:
            return
        # Writers of one run may pick the same number; their names keep the parts apart. A later run's parts
        # come after every part of the runs before it, so its entries win.
        numbers = [int(match.group(1)) for part in self._parts() if (match := _PART.match(part.name))]
        suffix = f"-{self.writer}" if self.writer else ""
        part = self.directory / f"part-{max(numbers, default=0) + 1:06d}{suffix}.jsonl"
        text = "".join(json_text(entry, default=str) + "\n" for entry in self._pending)
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
        parts = [(match, path) for path in self.directory.iterdir() if (match := _PART.match(path.name))]
        return [path for match, path in sorted(parts, key=lambda item: (int(item[0].group(1)), item[1].name))]


@asynccontextmanager
async def kept_on_disk(checkpoint: RowCheckpoint | None) -> AsyncIterator[None]:
    """Ask rows inside this block: answers already received reach the disk when due even while the requests
    in flight stall (a process killed then keeps them), and every waiting answer is written when it ends."""
    if checkpoint is None:
        yield
        return

    async def keep_flushing() -> None:
        while True:
            await asyncio.sleep(FLUSH_CHECK_S)
            checkpoint.flush_if_due()

    flushing = asyncio.ensure_future(keep_flushing())
    try:
        yield
    finally:
        flushing.cancel()
        await asyncio.gather(flushing, return_exceptions=True)
        checkpoint.flush()
