"""JSON of an answer, its nesting measured before it is parsed: the parser recurses once per level, so a deep
answer would end in a ``RecursionError``. :func:`parse_json` is the one way connectors read JSON.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from connectors.errors import JsonTooDeep
from connectors.limits import JSON_MAX_DEPTH

if TYPE_CHECKING:  # httpx is loaded by the clients that hand its responses here
    import httpx

# Where a JSON text starts with an array or object: only such a text can nest.
_CONTAINER_START = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*[\[{]")
# A string; an unterminated one runs to the end, as the parser reads it, so its brackets are never counted
# and no match restarts inside it.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_OPENING = frozenset(b"[{")
_CLOSING = frozenset(b"]}")


def json_nesting_exceeds(content: bytes, max_depth: int = JSON_MAX_DEPTH) -> bool:
    """Whether ``content``, read as JSON, nests arrays and objects deeper than ``max_depth``; measured without
    parsing and without recursion. Text that is not JSON may give either answer: the parser refuses it."""
    encoding = json.detect_encoding(content)
    if encoding not in ("utf-8", "utf-8-sig"):
        try:
            content = content.decode(encoding, "surrogatepass").encode("utf-8", "surrogatepass")
        except UnicodeError:
            return False  # the parser refuses it before it nests anything
    if not _CONTAINER_START.match(content):
        return False
    if b'"' in content:
        content = _STRING.sub(b"", content)
    structure = content.translate(None, _NOT_BRACKETS)
    # Usually a few rounds of taking out the innermost pairs (one level or more each) leave nothing; when
    # they do not within a few passes over the text, the brackets are counted one by one.
    peeled, budget = structure, 4 * len(structure)
    for _ in range(max_depth):
        shorter = peeled.replace(b"[]", b"").replace(b"{}", b"")
        if not shorter:
            return False
        budget -= len(peeled)
        if len(shorter) == len(peeled) or budget < 0:
            break
        peeled = shorter
    depth = 0
    for byte in structure:
        if byte in _OPENING:
            depth += 1
            if depth > max_depth:
                return True
        elif byte in _CLOSING:
            depth -= 1
            if depth < 0:
                return False  # the parser stops at this bracket
    return False


def parse_json(content: bytes, *, api: str) -> Any:
    """The JSON value of an answer's body.

    Raises:
        JsonTooDeep: nested deeper than :data:`~connectors.limits.JSON_MAX_DEPTH` (a ``MalformedResponse``,
            and a ``ValueError`` like the parser's own refusals).
        ValueError: not JSON.
    """
    if json_nesting_exceeds(content):
        raise JsonTooDeep(
            f"{api}: the answer nests arrays and objects deeper than {JSON_MAX_DEPTH} levels; not read",
            api=api,
        )
    return json.loads(content)


def json_of(response: httpx.Response, *, api: str) -> Any:
    """:func:`parse_json` of a response that has been read."""
    return parse_json(response.content, api=api)
