"""The one secret scrubber of the process: every configured secret, found literally in any spelling (as is,
URL-, form-, JSON- and HTML-escaped, base64 at any alignment, HTTP Basic), every token issued to the process
(as is or URL-encoded), and the patterns that recognise credentials nobody registered (secret-named fields,
Bearer/Basic values, JSON web tokens, long opaque strings), for the text a response body lends to an error.

Secrets are registered where they enter the process: the composition root registers the configured ones, the
Basic and OAuth auth of the connectors register what they are given, the token code what a server issues.
:data:`SCRUBBER` is process-wide and only grows (issued tokens are kept up to :data:`MAX_ISSUED`, the newest).

Values kept as JSON (a run's parameters and summary in the run history) pass :func:`json_safe` first: the
values of keys that name a credential and every ``SecretStr``/``SecretBytes`` are masked (:data:`MASK`)
whatever they hold, and everything else is reduced to JSON types (paths and UUIDs as text, datetimes ISO);
:func:`scrubbed_json` then scrubs the texts left as any text is.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import html
import json
import math
import re
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import Any
from urllib.parse import quote, quote_plus
from uuid import UUID

from pydantic import BaseModel, SecretBytes, SecretStr

REDACTED = "[redacted]"
# Shorter values cannot be told from ordinary text ("pw" is in "pwd"); they are not matched literally.
MIN_SECRET_LENGTH = 4
# A cut secret is still a leak: a text that ends with at least this much of a secret's start loses it.
MIN_CUT_PREFIX = 6
MAX_ISSUED = 256

_SECRET_FIELDS = (
    r"access_token|refresh_token|id_token|token|client_secret|secret|password|passwd|pwd|api_?key|"
    r"authorization|credentials?|session(?:_?id)?|cookie"
)
PATTERNS = (
    # Bearer / Basic credentials
    re.compile(r"(?i)(\b(?:bearer|basic)\s+)([A-Za-z0-9._~+/=-]{8,})"),
    # "access_token": "...", password=..., Authorization: ... (JSON, form and header spellings)
    re.compile(rf"""(?i)(["']?(?:{_SECRET_FIELDS})["']?\s*[:=]\s*)(["'])(?:\\.|(?!\2).)*\2"""),
    re.compile(rf"""(?i)(\b(?:{_SECRET_FIELDS})\b\s*[:=]\s*)(?!["'])([^\s&,;"'}}]+)"""),
    # JSON web tokens
    re.compile(r"()(\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)"),
    # long opaque strings (keys, hashes, session ids), but not the service's UUID file and job tokens
    re.compile(
        r"()(?<![A-Za-z0-9_+/=-])(?![0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
        r"(?![A-Za-z0-9_+/=-]))([A-Za-z0-9_+/=-]*[0-9][A-Za-z0-9_+/=-]*[A-Za-z][A-Za-z0-9_+/=-]*"
        r"|[A-Za-z0-9_+/=-]*[A-Za-z][A-Za-z0-9_+/=-]*[0-9][A-Za-z0-9_+/=-]*)(?<=[A-Za-z0-9_+/=-]{32})"
        r"(?![A-Za-z0-9_+/=-])"
    ),
)


@functools.lru_cache(maxsize=256)
def spellings(secret: str) -> frozenset[str]:
    """Every way ``secret`` is written down in text that passed through an encoder: as is, URL-encoded,
    form-encoded, JSON- and HTML-escaped, and the base64 characters that encode only it at each of the
    three alignments (standard and URL-safe alphabet), so it is found inside a longer base64 text too."""
    raw = secret.encode("utf-8")
    found = {
        secret,
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        html.escape(secret),
    }
    whole = base64.b64encode(raw).decode("ascii")
    found |= {whole, whole.replace("+", "-").replace("/", "_")}
    for offset in range(3):
        core = _base64_core(raw, offset)
        found |= {core, core.replace("+", "-").replace("/", "_")}
    return frozenset(spelling for spelling in found if len(spelling) >= MIN_SECRET_LENGTH)


def _base64_core(raw: bytes, offset: int) -> str:
    """The base64 characters that encode only ``raw`` when it starts ``offset`` bytes into a 3-byte group."""
    encoded = base64.b64encode(b"\x00" * offset + raw).decode("ascii")
    start = {0: 0, 1: 2, 2: 3}[offset]
    end = (8 * (offset + len(raw))) // 6
    return encoded[start:end]


class SecretScrubber:
    """Replaces every registered secret (in each of its :func:`spellings`) by :data:`REDACTED`; with
    ``patterns`` also whatever looks like a credential (:data:`PATTERNS`). Thread-safe; the one pattern of
    every spelling is built anew by the first scrub after secrets were registered."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._configured: set[str] = set()
        self._issued: deque[str] = deque(maxlen=MAX_ISSUED)
        # (the pattern of every spelling, the secrets long enough to be found cut off); None: to be built.
        self._compiled: tuple[re.Pattern[str] | None, tuple[str, ...]] | None = (None, ())
        # The same pattern over UTF-8 bytes and the longest spelling's length in bytes, for streams.
        self._in_bytes: tuple[re.Pattern[bytes] | None, int] = (None, 0)

    def register(self, secret: str | None, *, issued: bool = False) -> None:
        """Scrub ``secret`` from now on in every one of its :func:`spellings`; ``issued``: a token handed out
        to this process, found as is or URL-encoded, of which only the newest :data:`MAX_ISSUED` are kept.
        Values shorter than :data:`MIN_SECRET_LENGTH` are ignored."""
        if not secret or len(secret) < MIN_SECRET_LENGTH:
            return
        with self._guard:
            if secret in self._configured or secret in self._issued:
                return
            if issued:
                self._issued.append(secret)
            else:
                self._configured.add(secret)
            self._compiled = None

    def register_basic(self, username: str, password: str) -> None:
        """Scrub ``password`` and the HTTP Basic credentials ``username:password`` (as base64)."""
        self.register(password)
        self.register(f"{username}:{password}")

    def scrub(self, text: str, *, patterns: bool = False) -> str:
        """``text`` without any registered secret; with ``patterns`` also without what looks like one."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compile()
        literal, prefixes = compiled
        if literal is not None and text:
            text = _cut_tail(literal.sub(REDACTED, text), prefixes)
        if patterns:
            for pattern in PATTERNS:
                text = pattern.sub(lambda match: match.group(1) + REDACTED, text)
        return text

    def scrub_bytes(self, data: bytes) -> bytes:
        """``data`` without any registered secret, every other byte as it was: UTF-8 text is scrubbed as
        :meth:`scrub` does, bytes that are not UTF-8 (a PDF's binary parts) pass through untouched, so a
        binary file changes only where a secret occurs literally. ``data`` itself when nothing was found."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compile()
        if compiled[0] is None or not data:
            return data
        text = data.decode("utf-8", "surrogateescape")
        scrubbed = self.scrub(text)
        return data if scrubbed == text else scrubbed.encode("utf-8", "surrogateescape")

    def snapshot(self) -> tuple[frozenset[str], tuple[str, ...]]:
        """What is registered, to :meth:`restore` later (tests keep one test's secrets out of the next)."""
        with self._guard:
            return frozenset(self._configured), tuple(self._issued)

    def restore(self, saved: tuple[Iterable[str], Iterable[str]]) -> None:
        configured, issued = saved
        with self._guard:
            self._configured = set(configured)
            self._issued = deque(issued, maxlen=MAX_ISSUED)
            self._compiled = None

    def _compile(self) -> tuple[re.Pattern[str] | None, tuple[str, ...]]:
        with self._guard:
            if self._compiled is not None:
                return self._compiled
            secrets = self._configured | set(self._issued)
            forms = {spelling for secret in self._configured for spelling in spellings(secret)}
            # A token is handed on as it was issued (a Bearer header, a form field): as is or URL-encoded.
            forms |= {form for token in self._issued for form in (token, quote(token, safe=""))}
            pattern = _trie_pattern(forms)
            literal = re.compile(pattern) if forms else None
            self._in_bytes = (
                re.compile(pattern.encode("utf-8")) if forms else None,
                max((len(form.encode("utf-8")) for form in forms), default=0),
            )
            self._compiled = (literal, tuple(secret for secret in secrets if len(secret) > MIN_CUT_PREFIX))
            return self._compiled

    def in_bytes(self) -> tuple[re.Pattern[bytes] | None, int]:
        """The pattern of every spelling over UTF-8 bytes (None: nothing registered) and the length of the
        longest spelling in bytes: what :class:`StreamScrubber` needs."""
        with self._guard:
            if self._compiled is not None:
                return self._in_bytes
        self._compile()
        return self._in_bytes


def _cut_tail(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` without a secret's start at its very end (a quote cut off in the middle of the secret), an
    ellipsis after it kept."""
    body, ellipsis = (text[:-1], "…") if text.endswith("…") else (text, "")
    for secret in secrets:
        start = body.rfind(secret[:MIN_CUT_PREFIX], max(0, len(body) - len(secret)))
        if start >= 0 and secret.startswith(body[start:]):
            return body[:start] + REDACTED + ellipsis
    return text


def _trie_pattern(words: Iterable[str]) -> str:
    """One regular expression matching any of ``words``, the longest where one is the start of another,
    built as a trie: each position of a text is tried against the words' common prefixes once, not against
    every word (hundreds of tokens and their spellings)."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _node_pattern(root)


def _node_pattern(node: dict[str, Any]) -> str:
    branches = []
    for char in sorted(key for key in node if key):
        text = re.escape(char)
        child = node[char]
        while len(child) == 1 and "" not in child:  # a chain of single characters: no group needed
            ((char, child),) = child.items()
            text += re.escape(char)
        rest = _node_pattern(child)
        branches.append(text + rest)
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    # A word may end here: what follows is tried first (greedy), so the longest word wins.
    return f"(?:{body})?" if "" in node else body


SCRUBBER = SecretScrubber()


class StreamScrubber:
    """Scrubs a byte stream chunk by chunk as :func:`scrubbed_bytes` scrubs it whole, never holding more than
    a chunk and the longest spelling of a secret: the last bytes of what came (one less than that spelling)
    wait for the next chunk, so a secret cut by a chunk boundary is found too. Feed every chunk, then
    :meth:`finish` once."""

    def __init__(self, scrubber: SecretScrubber | None = None) -> None:
        self._scrubber = scrubber or SCRUBBER
        self._pattern, longest = self._scrubber.in_bytes()
        self._keep = max(0, longest - 1)
        self._pending = b""
        self.found = 0  # secrets replaced so far (:meth:`finish` counts its part as one)

    def feed(self, chunk: bytes) -> bytes:
        """What of the stream so far can be written, scrubbed."""
        if self._pattern is None:
            return chunk
        data = self._pending + chunk
        cut = len(data) - self._keep  # a match starting before here is whole in ``data``
        if cut <= 0:
            self._pending = data
            return b""
        parts: list[bytes] = []
        done = 0
        for match in self._pattern.finditer(data):
            if match.start() >= cut:
                break
            parts += [data[done : match.start()], REDACTED.encode()]
            done = match.end()
            self.found += 1
        end = max(cut, done)
        parts.append(data[done:end])
        self._pending = data[end:]
        return b"".join(parts)

    def finish(self) -> bytes:
        """The rest of the stream, scrubbed (its end as :func:`scrubbed_bytes` scrubs a text's end)."""
        rest, self._pending = self._pending, b""
        scrubbed = self._scrubber.scrub_bytes(rest)
        self.found += scrubbed != rest
        return scrubbed


def register_secret(secret: str | None, *, issued: bool = False) -> None:
    """Register ``secret`` with the process's :data:`SCRUBBER` (see :meth:`SecretScrubber.register`)."""
    SCRUBBER.register(secret, issued=issued)


def redact(text: str) -> str:
    """``text`` without any registered secret: for text of our own making (logs, history, output), which
    carries a secret only when something echoed one."""
    return SCRUBBER.scrub(text)


def scrubbed_bytes(data: bytes) -> bytes:
    """``data`` without any registered secret (see :meth:`SecretScrubber.scrub_bytes`): for an answer kept
    as received, which carries a secret only when the service echoed one (the credentials, the
    ``Authorization`` header)."""
    return SCRUBBER.scrub_bytes(data)


def scrub_secrets(text: str) -> str:
    """``text`` with every registered secret and whatever looks like a credential replaced by ``[redacted]``:
    values of secret-named fields (JSON, form or header spelling), Bearer/Basic credentials, JSON web tokens,
    and opaque strings of 32 or more letters and digits (the service's UUID tokens are kept: they name files
    and jobs). For text a remote side wrote (a response body quoted in an error)."""
    return SCRUBBER.scrub(text, patterns=True)


MASK = "**********"
SECRET_KEY_PARTS: tuple[str, ...] = ("password", "secret", "token", "authorization", "api_key", "apikey")


def is_secret_key(key: object) -> bool:
    """Whether a mapping key names a credential (case-insensitive, ``-`` and ``_`` alike)."""
    name = str(key).lower().replace("-", "_")
    return any(part in name for part in SECRET_KEY_PARTS)


def json_safe(value: Any, *, mask_secret_keys: bool = True) -> Any:
    """A JSON-serialisable copy of ``value`` with secrets replaced by ``MASK``.

    Args:
        value: Anything a flow might take as a parameter: mappings, sequences, pydantic models,
            dataclasses, paths, datetimes, enums, secrets.
        mask_secret_keys: Mask values under keys such as ``password`` or ``client_secret`` (see
            ``SECRET_KEY_PARTS``). Secret-typed values are masked either way.

    Returns:
        Plain dicts (string keys), lists, strings, numbers, booleans and ``None`` only.
    """
    if isinstance(value, SecretStr | SecretBytes):
        return MASK
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        # JSON has no NaN or infinity and PostgreSQL rejects them.
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Enum):
        return json_safe(value.value, mask_secret_keys=mask_secret_keys)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, PurePath | UUID | Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    if isinstance(value, BaseModel):
        return json_safe(value.model_dump(), mask_secret_keys=mask_secret_keys)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
        return json_safe(fields, mask_secret_keys=mask_secret_keys)
    if isinstance(value, Mapping):
        return {
            str(key): MASK
            if mask_secret_keys and is_secret_key(key) and item is not None
            else json_safe(item, mask_secret_keys=mask_secret_keys)
            for key, item in value.items()
        }
    if isinstance(value, set | frozenset):
        items = [json_safe(item, mask_secret_keys=mask_secret_keys) for item in value]
        return sorted(items, key=repr)
    if isinstance(value, list | tuple):
        return [json_safe(item, mask_secret_keys=mask_secret_keys) for item in value]
    # Unknown objects are kept by type name only: their str() could carry anything, credentials included.
    return f"<{type(value).__qualname__}>"


def scrubbed_json(value: Any) -> Any:
    """``value`` made JSON-safe with the values of secret-named keys masked (:func:`json_safe`), and every
    text left in it, keys too, scrubbed of the registered secrets (:func:`redact`)."""
    return _redact_json(json_safe(value, mask_secret_keys=True))


def _redact_json(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(key): _redact_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_json(item) for item in value]
    return value
