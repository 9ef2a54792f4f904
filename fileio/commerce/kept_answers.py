"""The answers to requests that create something (address labels, return orders), kept as received under the
data dir by the request's idempotency key: the service gives such an answer once, so a resumed run takes it
from here instead of asking again. The run history records each answer's SHA-256 and content type; an
answer whose file is gone or changed is not used.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from connectors.commerce import ReceivedAnswer
from fileio.files import write_received

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class KeptAnswer:
    """Where an answer is kept and how to know it again."""

    sha256: str
    content_type: str


class KeptAnswers:
    """The answers of one kind of request (``root``: a folder under the data dir), one file per key."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        """The file of the answer to ``key`` (``address-label:3f…`` → ``address-label-3f….answer``)."""
        return self.root / f"{_UNSAFE.sub('-', key).strip('.-')}.answer"

    def keep(self, key: str, answer: ReceivedAnswer) -> KeptAnswer:
        """Keep ``answer`` as the answer to the request of ``key``."""
        written = write_received(self.path(key), answer.content, durable=True)
        return KeptAnswer(hashlib.sha256(written).hexdigest(), answer.content_type)

    def load(self, key: str, kept: KeptAnswer | None) -> ReceivedAnswer | None:
        """The answer kept for ``key``; None when its file is gone or is not the answer recorded. Without a
        record (a run that ended between keeping the answer and recording it) the file is taken as it is:
        only an answer that arrived is kept, the newest request's last."""
        try:
            content = self.path(key).read_bytes()
        except FileNotFoundError:
            return None
        if kept is None:
            return ReceivedAnswer(content)
        if hashlib.sha256(content).hexdigest() != kept.sha256:
            return None
        return ReceivedAnswer(content, kept.content_type)
