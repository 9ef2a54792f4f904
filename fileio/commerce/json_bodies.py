"""Reading the request bodies a user supplies as JSON, for the operations whose fields the commerce spec does
not show (address labels, return orders, §2.13): one JSON object, an array of objects, or JSON lines (one
object per line). The bodies are passed on unchanged; nothing is checked but that each is an object.

The file is bounded before it is parsed: its size (:data:`MAX_BYTES`), its nesting
(:data:`~connectors.limits.JSON_MAX_DEPTH`, measured without parsing) and the number of bodies
(:data:`MAX_BODIES`). Values JSON does not define or that cannot be sent as given (``NaN``, ``Infinity``,
``1e999999``, numbers of more than 4,300 digits, lone surrogates) are refused when it is read
(:func:`~connectors.jsontext.strict_json_problem`). A file that cannot be used is refused naming the line
and column, or the body's position, and the problem, never quoting more of the file than
:mod:`fileio.structured_files` allows.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectors.jsontext import json_nesting_exceeds, strict_json_problem
from connectors.limits import JSON_MAX_DEPTH
from fileio.errors import InputError
from fileio.files import ReadTooLarge, read_bounded
from fileio.structured_files import Position, StructuredFile, may_quote

MAX_BYTES = 16 << 20
"""Largest file of request bodies read, in bytes (16 MiB)."""
MAX_BODIES = 10_000
"""Most request bodies in one file."""
_BLANKS = " \t\r\n"


@dataclass(frozen=True)
class JsonBody:
    """One request body of the file: its 1-based position, the line it starts on and the object."""

    position: int
    line: int
    body: dict[str, Any]


def read_json_bodies(
    path: Path,
    *,
    what: str = "request body",
    max_bytes: int = MAX_BYTES,
    max_bodies: int = MAX_BODIES,
    max_depth: int = JSON_MAX_DEPTH,
) -> list[JsonBody]:
    """The request bodies of ``path``: a JSON object, an array of objects, or one object per line.

    Raises:
        InputError: the file is missing, unreadable, over a limit, not UTF-8 JSON, holds no body or a body
            that is not an object (each named by line and column, or by position; ``what`` names a body).
    """
    if not path.is_file():
        raise InputError("file not found", path=path)
    size = path.stat().st_size
    if size > max_bytes:
        raise InputError(f"{size:,} bytes, more than the limit of {max_bytes:,} bytes; not read", path=path)
    try:
        content = read_bounded(path, max_bytes)
    except ReadTooLarge:
        raise InputError(f"more than the limit of {max_bytes:,} bytes; not read", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot be read: {exc.strerror or type(exc).__name__}", path=path) from None
    if json_nesting_exceeds(content, max_depth):
        raise InputError(f"nests arrays and objects deeper than {max_depth} levels; not read", path=path)
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text; save it as UTF-8", path=path) from None
    reader = _Reader(path, text, what, max_bodies)
    unusable = strict_json_problem(text)
    if unusable is not None:
        raise reader.refuse(unusable[0], f"not usable JSON ({unusable[1]})")
    bodies = reader.bodies()
    if not bodies:
        expected = "expected a JSON object, an array of objects or JSON lines"
        raise InputError(f"holds no {what}: {expected}", path=path)
    return bodies


class _Reader:
    """One file's text, read as one of the three forms."""

    def __init__(self, path: Path, text: str, what: str, max_bodies: int) -> None:
        self.path = path
        self.text = text
        self.what = what
        self.max_bodies = max_bodies
        self.file = StructuredFile(path, text.splitlines(), None, None, may_quote(path))
        self._line_starts = [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]
        self._decoder = json.JSONDecoder()

    def position(self, index: int) -> Position:
        line = bisect.bisect_right(self._line_starts, index)
        return Position(line, index - self._line_starts[line - 1] + 1)

    def refuse(self, index: int, problem: str) -> InputError:
        return InputError(self.file.problem_at(self.position(index), problem), path=self.path)

    def bodies(self) -> list[JsonBody]:
        start = _skip(self.text, 0)
        if start == len(self.text):
            return []
        values = self._array(start + 1) if self.text[start] == "[" else self._documents(start)
        bodies = []
        for position, (index, value) in enumerate(values, start=1):
            line = self.position(index).line
            if not isinstance(value, dict):
                raise self.refuse(index, f"{self.what} {position} must be a JSON object, not {_kind(value)}")
            bodies.append(JsonBody(position, line, value))
        return bodies

    def _decode(self, index: int) -> tuple[Any, int]:
        try:
            return self._decoder.raw_decode(self.text, index)
        except json.JSONDecodeError as exc:
            raise self.refuse(exc.pos, f"not JSON ({exc.msg})") from None

    def _array(self, index: int) -> list[tuple[int, Any]]:
        """The items of the array whose ``[`` is just before ``index``; nothing may follow it."""
        items: list[tuple[int, Any]] = []
        index = _skip(self.text, index)
        if self.text.startswith("]", index):
            return self._only_blanks(index + 1, items)
        while True:
            value, end = self._decode(index)
            self._add(items, index, value)
            index = _skip(self.text, end)
            if self.text.startswith(",", index):
                index = _skip(self.text, index + 1)
            elif self.text.startswith("]", index):
                return self._only_blanks(index + 1, items)
            else:
                raise self.refuse(index, "not JSON (expecting ',' or ']' after an item of the array)")

    def _documents(self, index: int) -> list[tuple[int, Any]]:
        """One JSON value, or several one after the other (JSON lines)."""
        values: list[tuple[int, Any]] = []
        while index < len(self.text):
            value, end = self._decode(index)
            self._add(values, index, value)
            index = _skip(self.text, end)
        return values

    def _add(self, values: list[tuple[int, Any]], index: int, value: Any) -> None:
        if len(values) == self.max_bodies:
            raise self.refuse(
                index, f"more than {self.max_bodies:,} bodies, the most one file may hold; none is sent"
            )
        values.append((index, value))

    def _only_blanks(self, index: int, items: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        rest = _skip(self.text, index)
        if rest < len(self.text):
            raise self.refuse(rest, "not JSON (something follows the array)")
        return items


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _BLANKS:
        index += 1
    return index


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"
