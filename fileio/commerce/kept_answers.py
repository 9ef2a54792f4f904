"""The answers to requests that create something (address labels, return orders), kept as received under the
data dir by the request's idempotency key: the service gives such an answer once, so a resumed run takes it
from here instead of asking again. The run history records each answer's SHA-256 and content type; an
answer whose file is gone or changed is not used.

An answer is written to disk once: the file of it in a run's output directory is the kept file itself (a
hard link), or, where no link can be made (another filesystem), the output directory's file is written and
the data dir keeps a record of its path and SHA-256 instead of a second copy.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from connectors.commerce import ReceivedAnswer
from connectors.limits import RESPONSE_MAX_BYTES
from core.json_text import json_text
from fileio.files import ReadTooLarge, hard_link, read_bounded, write_bytes, write_received

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
RECORD_MAX_BYTES = 64 << 10


@dataclass(frozen=True)
class KeptAnswer:
    """Where an answer is kept and how to know it again."""

    sha256: str
    content_type: str


class KeptAnswers:
    """The answers of one kind of request (``root``: a folder under the data dir), one file per key.

    Args:
        root: the folder.
        max_bytes: the most bytes of a kept answer read back (``POSTFLOWS_RESPONSE_MAX_BYTES``: no longer
            answer was read).
    """

    def __init__(self, root: Path, *, max_bytes: int = RESPONSE_MAX_BYTES) -> None:
        self.root = root
        self.max_bytes = max_bytes

    def path(self, key: str) -> Path:
        """The file of the answer to ``key`` (``address-label:3f…`` → ``address-label-3f….answer``)."""
        return self.root / f"{_UNSAFE.sub('-', key).strip('.-')}.answer"

    def record_path(self, key: str) -> Path:
        """The record of where the answer to ``key`` is when it is not kept here (``….answer-at``)."""
        return self.path(key).with_suffix(".answer-at")

    def keep(self, key: str, answer: ReceivedAnswer) -> tuple[KeptAnswer, ReceivedAnswer]:
        """Keep ``answer`` as the answer to the request of ``key``. Returns what is kept: its digest and the
        answer as written (scrubbed of this run's secrets), which replaces the one received."""
        written = write_received(self.path(key), answer.content, durable=True)
        self.record_path(key).unlink(missing_ok=True)
        kept = KeptAnswer(hashlib.sha256(written).hexdigest(), answer.content_type)
        return kept, ReceivedAnswer(written, answer.content_type)

    def place(self, key: str, answer: ReceivedAnswer, target: Path) -> Path:
        """Put the answer kept for ``key`` (``answer``, as :meth:`keep` or :meth:`load` returned it) at
        ``target`` in an output directory without a second copy on disk: ``target`` becomes the kept file
        (a hard link: one file, its owner's alone like the data dir's); where no link can be made, ``target``
        is written and the kept file gives way to a record of ``target`` and its SHA-256. Returns
        ``target``."""
        kept = self.path(key)
        if kept.exists() and hard_link(kept, target):
            return target
        written = write_received(target, answer.content, durable=True)
        if kept.exists():
            record = {"path": str(target.resolve()), "sha256": hashlib.sha256(written).hexdigest()}
            write_bytes(self.record_path(key), json_text(record, ascii_only=True).encode(), durable=True)
            kept.unlink()
        return target

    def load(self, key: str, kept: KeptAnswer | None) -> ReceivedAnswer | None:
        """The answer kept for ``key`` (here, or at the path its record names); None when its file is gone,
        longer than an answer read, or is not the answer recorded. Without a record (a run that ended
        between keeping the answer and recording it) the file is taken as it is: only an answer that arrived
        is kept, the newest request's last."""
        content = self._kept_bytes(key)
        if content is None:
            return None
        if kept is None:
            return ReceivedAnswer(content)
        if hashlib.sha256(content).hexdigest() != kept.sha256:
            return None
        return ReceivedAnswer(content, kept.content_type)

    def _kept_bytes(self, key: str) -> bytes | None:
        try:
            return read_bounded(self.path(key), self.max_bytes)
        except FileNotFoundError:
            pass
        except ReadTooLarge:
            return None
        try:
            record = json.loads(read_bounded(self.record_path(key), RECORD_MAX_BYTES))
            content = read_bounded(Path(record["path"]), self.max_bytes)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return content if hashlib.sha256(content).hexdigest() == record.get("sha256") else None
