"""Limits on what a service's answer may cost us: bytes read, seconds waited, JSON nesting; their defaults and
the names of the settings that change them, which the refusals quote.
"""

from __future__ import annotations

from dataclasses import dataclass

RESPONSE_MAX_BYTES = 16 << 20
"""Largest answer read whole (JSON, an error body, a token response), in bytes (16 MiB)."""

RESPONSE_MAX_BYTES_SETTING = "POSTFLOWS_RESPONSE_MAX_BYTES"

REQUEST_DEADLINE_S = 120.0
"""Longest an attempt of a request may take from sending to the last byte of its answer, in seconds."""

DOWNLOAD_DEADLINE_S = 600.0
"""The same for a request that moves a file: a download, a document answer, an upload."""

HTTP_DEADLINE_SETTING = "POSTFLOWS_HTTP_DEADLINE_S"

JSON_MAX_DEPTH = 64
"""Deepest nesting of arrays and objects read from a JSON answer; no answer of the three APIs nears it."""

DOCUMENT_MAX_BYTES = 1 << 30
"""Largest document accepted (decoded), in bytes: the default of ``POSTFLOWS_DOWNLOAD_MAX_BYTES``."""

DOCUMENT_MAX_BYTES_SETTING = "POSTFLOWS_DOWNLOAD_MAX_BYTES"

BODY_LIMIT_EXTENSION = "postflows.body_limit"
"""Where the HTTP core records a request's :class:`BodyLimit` (``request.extensions``), so an auth flow reads
the answers it handles itself (token answers) within it too."""

BASE64_SLACK_BYTES = 64 << 10
"""Room for the JSON around a base64 document (its type, size and name) and for line breaks in the base64."""


@dataclass(frozen=True)
class BodyLimit:
    """The most bytes of one answer that are read, and what a refusal names as its source."""

    max_bytes: int
    source: str = RESPONSE_MAX_BYTES_SETTING

    def describe(self) -> str:
        return f"the limit of {self.max_bytes:,} bytes ({self.source})"


@dataclass(frozen=True)
class ResponseLimits:
    """How much of an answer a client reads and how long an attempt may take.

    Attributes:
        max_bytes: the most bytes of an answer read whole.
        deadline_s: the deadline of every attempt, downloads included, from sending the request to the last
            byte of its answer; None: :data:`REQUEST_DEADLINE_S`, for a request that moves a file (a
            download, a document answer, an upload) :data:`DOWNLOAD_DEADLINE_S`.
    """

    max_bytes: int = RESPONSE_MAX_BYTES
    deadline_s: float | None = None

    @property
    def body(self) -> BodyLimit:
        return BodyLimit(self.max_bytes)

    def deadline_for(self, *, transfer: bool) -> float:
        """Seconds an attempt may take: the configured deadline, else the default for its kind (``transfer``:
        the request moves a file)."""
        if self.deadline_s is not None:
            return self.deadline_s
        return DOWNLOAD_DEADLINE_S if transfer else REQUEST_DEADLINE_S


def base64_length(size: int) -> int:
    """Characters of the base64 text of ``size`` bytes (padded, without line breaks)."""
    return -(-size // 3) * 4


def document_answer_limit(document_max_bytes: int) -> BodyLimit:
    """The most bytes read of an answer carrying a document of at most ``document_max_bytes`` (base64 in
    JSON, or the bytes themselves)."""
    return BodyLimit(
        base64_length(document_max_bytes) + BASE64_SLACK_BYTES,
        f"4/3 of {DOCUMENT_MAX_BYTES_SETTING} for base64, and {BASE64_SLACK_BYTES:,} bytes more",
    )
