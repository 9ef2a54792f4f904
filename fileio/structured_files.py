"""Reading the structured files a user names (an alignment profile, an order, purchase parameters; YAML or
JSON) so that a file which does not parse or does not validate is named by line, column and field path, and
its content never quoted: the file may be any file (a password file given by mistake). Only a file inside
the working directory or the data dir has up to :data:`EXCERPT_CHARS` characters of its offending line shown.

Parser and validation messages quote the input (YAML's shows the line, pydantic's custom checks the value),
so the problems are written here from the positions and the schema's own field names instead.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ValidationError

from connectors.jsontext import MAX_NUMBER_DIGITS, strict_json_problem
from fileio.files import private_root, read_bounded

Format = Literal["yaml", "json"]
EXCERPT_CHARS = 80
STRUCTURED_MAX_BYTES = 1 << 20
"""Largest structured file read (1 MiB): a profile, an order or purchase parameters need a few KiB."""
MAX_PROBLEMS = 5
FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
UNNAMED = "…"
# What a parser message quotes: a token's kind ('<scalar>') and a punctuation character (',') are kept;
# anything else (letters or digits of the file) is left out.
_QUOTED = re.compile(r"""\s*(['"])(.*?)\1""")
_KEPT_QUOTE = re.compile(r"<[\w ]+>|[^\w\s]")


class UnusableFile(ValueError):
    """A structured file that does not parse or does not validate; ``problem`` says where and why without
    quoting the file (but the short excerpt a quotable file allows)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


@dataclass(frozen=True)
class Position:
    """A 1-based line and column of a file."""

    line: int
    column: int


@dataclass(frozen=True)
class StructuredFile:
    """A parsed file: its data, the node tree that locates every value, and whether lines may be quoted."""

    path: Path
    lines: Sequence[str]
    data: Any
    root: yaml.Node | None
    quotable: bool

    def where(self, position: Position | None) -> str:
        """``line L, column C``, or ``""`` when unknown."""
        return "" if position is None else f"line {position.line}, column {position.column}"

    def quote(self, position: Position | None) -> str:
        """`` — line L reads `…` `` for a quotable file (at most :data:`EXCERPT_CHARS` characters of the
        line), else ``""``."""
        if position is None or not self.quotable or not 0 < position.line <= len(self.lines):
            return ""
        return f" — line {position.line} reads {excerpt(self.lines[position.line - 1])}"

    def problem_at(self, position: Position | None, problem: str) -> str:
        """``line L, column C: problem``, with the excerpt a quotable file allows."""
        where = self.where(position)
        return f"{where + ': ' if where else ''}{problem}{self.quote(position)}"

    def locate(self, loc: Sequence[int | str], *, key: bool = False) -> Position | None:
        """Where the value at ``loc`` (a pydantic error location) is written: the deepest node the path
        reaches (the mapping holding a missing field); with ``key`` the key of the last part found."""
        node = self.root
        if node is None:
            return None
        key_node: yaml.Node | None = None
        for part in loc:
            found = _child(node, part)
            if found is None:
                break
            key_node, node = found
        mark = (key_node if key and key_node is not None else node).start_mark
        return Position(mark.line + 1, mark.column + 1)

    def validation_problems(self, error: ValidationError, model: type[BaseModel]) -> str:
        """The problems of ``error`` (from validating this file's data against ``model``), each as
        ``field.path (line L, column C): what is wrong``, the first :data:`MAX_PROBLEMS` of them; a field
        name the schema does not have is not shown."""
        names = schema_names(model)
        details = error.errors(include_input=False, include_url=False)
        problems = []
        for detail in details[:MAX_PROBLEMS]:
            loc = tuple(detail["loc"])
            unknown = detail["type"] == "extra_forbidden"
            position = self.locate(loc, key=unknown)
            where = self.where(position)
            message = "not a field of this file" if unknown else str(detail["msg"])
            message = message.removeprefix("Value error, ")
            head = field_path(loc, names) + (f" ({where})" if where else "")
            problems.append(f"{head}: {message}{self.quote(position)}")
        if len(details) > MAX_PROBLEMS:
            problems.append(f"and {len(details) - MAX_PROBLEMS} more problems")
        return "; ".join(problems)


def read_structured(path: Path, fmt: Format) -> StructuredFile:
    """Read and parse ``path`` as UTF-8 YAML or JSON.

    At most :data:`STRUCTURED_MAX_BYTES` are read, whatever the path is (a device, a pipe).

    Raises:
        OSError: the file cannot be read, or is over :data:`STRUCTURED_MAX_BYTES`
            (:class:`fileio.files.ReadTooLarge`).
        UnusableFile: it is not UTF-8 text or does not parse (named by line and column).
    """
    data = read_bounded(path, STRUCTURED_MAX_BYTES)
    quotable = may_quote(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        undecodable = _position(data.decode("latin-1"), exc.start)
        problem = f"line {undecodable.line}, column {undecodable.column}: not UTF-8 text; save it as UTF-8"
        raise UnusableFile(problem) from None
    lines = text.splitlines()
    unparsed = StructuredFile(path, lines, None, None, quotable)
    if fmt == "json":
        unusable = strict_json_problem(text)
        if unusable is not None:
            where = _position(text, unusable[0])
            raise UnusableFile(unparsed.problem_at(where, f"not usable JSON ({unusable[1]})"))
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            position = Position(exc.lineno, exc.colno)
            raise UnusableFile(unparsed.problem_at(position, f"not JSON ({exc.msg})")) from None
        return StructuredFile(path, lines, parsed, _compose(text), quotable)
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:
        problem = "not YAML (a control character YAML does not allow)"
        raise UnusableFile(unparsed.problem_at(_position(text, exc.position), problem)) from None
    try:
        root = loader.get_single_node()
        unusable_number = _yaml_number_problem(root)
        if unusable_number is not None:
            where, why = unusable_number
            raise UnusableFile(unparsed.problem_at(where, f"not usable YAML ({why})"))
        parsed = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = None if mark is None else Position(mark.line + 1, mark.column + 1)
        reason = _unquoted(exc.problem or exc.context or "") or "invalid"
        raise UnusableFile(unparsed.problem_at(at, f"not YAML ({reason})")) from None
    except yaml.YAMLError:
        raise UnusableFile("not YAML") from None
    finally:
        loader.dispose()
    return StructuredFile(path, lines, parsed, root, quotable)


_YAML_FLOAT = "tag:yaml.org,2002:float"
_YAML_INT = "tag:yaml.org,2002:int"


def _yaml_number_problem(root: yaml.Node | None) -> tuple[Position, str] | None:
    """Where and why a number of a YAML document cannot be used as written, as JSON inputs refuse it
    (:func:`~connectors.jsontext.strict_json_problem`): ``.nan``, ``.inf`` or ``-.inf``, a float out of
    the range of a double, an integer of more than :data:`~connectors.jsontext.MAX_NUMBER_DIGITS` digits;
    the first one found, or None. Each node is visited once, however often aliases name it."""
    pending = [root] if root is not None else []
    seen: set[int] = set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            problem = _scalar_number_problem(node)
            if problem is not None:
                return Position(node.start_mark.line + 1, node.start_mark.column + 1), problem
        elif isinstance(node, yaml.SequenceNode):
            pending.extend(reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            pending.extend(part for pair in reversed(node.value) for part in reversed(pair))
    return None


def _scalar_number_problem(node: yaml.ScalarNode) -> str | None:
    value = str(node.value).replace("_", "")
    if node.tag == _YAML_INT:
        digits = sum(char.isdigit() for char in value)
        return (
            f"a number of {digits:,} digits, more than {MAX_NUMBER_DIGITS:,}"
            if digits > MAX_NUMBER_DIGITS
            else None
        )
    if node.tag != _YAML_FLOAT:
        return None
    if value.lower().lstrip("+-") in (".nan", "nan"):
        return "NaN is not a number"
    if value.lower().lstrip("+-") in (".inf", "inf", "infinity"):
        return "infinity is not a number"
    try:
        number = float(value)
    except ValueError:
        return None  # a sexagesimal float (190:20:30.15): finite
    return None if math.isfinite(number) else "a number out of the range of a double-precision float"


def _position(text: str, offset: int) -> Position:
    """The line and column of the character at ``offset`` of ``text``."""
    before = text[:offset]
    return Position(before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1)


def _unquoted(message: str) -> str:
    """A parser's message without what it quotes of the file (see :data:`_QUOTED`)."""

    def keep(match: re.Match[str]) -> str:
        return match.group(0) if _KEPT_QUOTE.fullmatch(match.group(2)) else ""

    return _QUOTED.sub(keep, message).strip()


def odd_key(data: Any, loc: tuple[int | str, ...] = ()) -> tuple[int | str, ...] | None:
    """The location of the first mapping key in ``data`` that no field of a JSON body can have (not text,
    or not a name such as ``depositDate``, ``sorting_module``), or None."""
    if isinstance(data, dict):
        for key, value in data.items():
            if not isinstance(key, str) or not FIELD_NAME.fullmatch(key):
                return (*loc, key if isinstance(key, str) else str(key))
            found = odd_key(value, (*loc, key))
            if found is not None:
                return found
    elif isinstance(data, list):
        for index, item in enumerate(data):
            found = odd_key(item, (*loc, index))
            if found is not None:
                return found
    return None


def may_quote(path: Path) -> bool:
    """Whether a line of ``path`` may be quoted in an error: the file (its links resolved) is inside the
    working directory or a data dir (a private root of :mod:`fileio.files`)."""
    resolved = path.resolve()
    try:
        inside_cwd = resolved.is_relative_to(Path(os.getcwd()).resolve())
    except OSError:
        inside_cwd = False
    return inside_cwd or private_root(resolved) is not None


def excerpt(line: str) -> str:
    """The first :data:`EXCERPT_CHARS` characters of ``line``, trailing blanks dropped, quoted."""
    text = line.rstrip()
    if len(text) > EXCERPT_CHARS:
        text = text[: EXCERPT_CHARS - 1] + "…"
    return f"`{text}`"


def field_path(loc: Iterable[int | str], names: frozenset[str]) -> str:
    """A pydantic location as ``upload.columns[2]``; a name the schema does not have (a key the file made
    up, a union member's tag) is shown as ``…``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + (part if part in names else UNNAMED)
    return text or "the file"


def schema_names(model: type[BaseModel]) -> frozenset[str]:
    """Every field name and alias of ``model`` and of the models its fields hold, at any depth."""
    names: set[str] = set()
    seen: set[type[BaseModel]] = set()
    pending: list[type[BaseModel]] = [model]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        for name, info in current.model_fields.items():
            names.add(name)
            for alias in (info.alias, info.validation_alias):
                if isinstance(alias, str):
                    names.add(alias)
            pending += _models_in(info.annotation)
    return frozenset(names)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in get_args(annotation) for model in _models_in(argument)]


def _child(node: yaml.Node, part: int | str) -> tuple[yaml.Node, yaml.Node] | None:
    """(key node, value node) of ``part`` in a mapping node, or (item, item) of an index in a sequence."""
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                return key, value
        return None
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        item = node.value[part]
        return item, item
    return None


def _compose(text: str) -> yaml.Node | None:
    """The node tree of a JSON text (JSON is YAML), for positions only; None when YAML reads it otherwise."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None


def body_problems(exc: ValidationError, model: type[BaseModel]) -> str:
    """The problems of a request body filled in a form, each named by its field path (never quoting the
    value), as a file's are but without a line to point at."""
    names = schema_names(model)
    return "; ".join(
        f"{field_path(error['loc'], names)}: {error['msg']}"
        for error in exc.errors(include_input=False, include_url=False)
    )
