"""JSON of an answer, its nesting measured before it is parsed: the parser recurses once per level, so a deep
answer would end in a ``RecursionError``. :func:`parse_json` is the one way connectors read JSON.
"""

from __future__ import annotations

import json
import math
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


MAX_NUMBER_DIGITS = 4300
"""Most digits of a number in a JSON input (Python's own limit for converting an integer from text)."""

# A string, or a token outside strings that the strict reading looks at: a number or a non-finite name.
_TOKEN = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"|-?(?:NaN|Infinity)\b|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?', re.DOTALL
)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def strict_json_problem(text: str) -> tuple[int, str] | None:
    """Where and why ``text``, a JSON input, holds a value that JSON does not define or that cannot be used
    as given: ``NaN`` or ``Infinity``, a number out of the range of a float (``1e999999``), a number of more
    than :data:`MAX_NUMBER_DIGITS` digits, a lone surrogate (``"\\ud800"``): the offset of the value and the
    problem, or None. Text that is not JSON may give either answer: the parser refuses it."""
    for match in _TOKEN.finditer(text):
        token = match.group()
        problem = _token_problem(token)
        if problem is not None:
            return match.start(), problem
    return None


def _token_problem(token: str) -> str | None:
    if token.startswith('"'):
        if _SURROGATE_ESCAPE.search(token) is None:
            return None
        try:
            value = json.loads(token)
        except ValueError:
            return None  # the parser refuses it
        if _SURROGATE.search(value):
            return "a string with a lone surrogate (\\ud800-\\udfff), which is no character"
        return None
    if token.lstrip("-")[:1].isalpha():
        return f"{token.lstrip('-')} is not a JSON number"
    digits = sum(char.isdigit() for char in token)
    if digits > MAX_NUMBER_DIGITS:
        return f"a number of {digits:,} digits, more than {MAX_NUMBER_DIGITS:,}"
    if ("." in token or "e" in token or "E" in token) and not math.isfinite(float(token)):
        return "a number out of the range of a double-precision float"
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def strict_loads(text: str) -> Any:
    """``json.loads`` refusing what :func:`strict_json_problem` finds (the readers of a user's file call that
    first to name the position; this is the guard behind it).

    Raises:
        ValueError: not JSON, or such a value.
    """
    found = strict_json_problem(text)
    if found is not None:
        raise ValueError(found[1])
    return json.loads(text, parse_constant=_refuse_constant)
