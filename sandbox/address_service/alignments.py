"""Alignments the sandbox holds per key (§1: the input and output structure agreed with the operator and
stored with the service; §4.1: the key selects it), read from the YAML a customer's profile is written in.

The sandbox reads the file on its own terms, not through the client's code: ``upload`` (columns, record_id,
encoding, delimiter or fixed_widths, line_ending, header), ``result.record_id``, ``outputs`` (name → replace
item such as ``{###STATISTICFILE_FR###}``) and ``moves`` (the output holding the move notifications); other
keys are ignored. Whether an aligned key maintains or only validates follows the spec's naming of keys: a
key naming ``validation`` or ``verification`` validates, any other maintains.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sandbox.address_service.fields import input_field

_REPLACE_ITEM = re.compile(r"^\{###[A-Za-z0-9_]+###\}$")
_LINE_ENDINGS = {"crlf": "\r\n", "lf": "\n", "\r\n": "\r\n", "\n": "\n"}
_VALIDATING_KEY = re.compile(r"validation|verification", re.IGNORECASE)

# German column names an alignment may agree on (lower case, spaces and punctuation dropped) → input field.
_GERMAN_NAMES: dict[str, str] = {
    "firma": "Company",
    "vorname": "Prename",
    "vorname2": "Prename2",
    "zweitervorname": "Prename2",
    "nachname": "Name",
    "ledigname": "MaidenName",
    "adresszusatz": "AddressAddition",
    "co": "CoAddress",
    "strasse": "Streetname",
    "hausnummer": "HouseNo",
    "hausnr": "HouseNo",
    "hausnummerzusatz": "HouseNoAddition",
    "stockwerk": "Floor",
    "plz": "ZIPCode",
    "plzzusatz": "ZIPAddition",
    "ort": "TownName",
    "kanton": "Canton",
    "land": "CountryCode",
    "postfach": "PoBoxNo",
    "postfachnummer": "PoBoxNo",
    "postfachplz": "PoBoxZIP",
    "postfachort": "PoBoxTownName",
}


class AlignmentError(ValueError):
    """An alignment file the sandbox cannot hold: unreadable, not YAML, or missing what it needs."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


# The upload layout in the words of an alignment profile (fileio.address_service.profiles), read here by
# the sandbox's own model: it never imports the client's (STYLE.md 10, 12).
# pylint: disable=duplicate-code
class AgreedUpload(_Lenient):
    """The upload file as agreed: exact header and order, the id column, encoding and separators."""

    columns: tuple[str, ...] = Field(min_length=1)
    record_id: str
    encoding: str = "utf-8"
    delimiter: str | None = "\t"
    fixed_widths: dict[str, int] | None = None
    line_ending: str = "\r\n"
    header: bool = True

    # pylint: enable=duplicate-code
    @field_validator("columns")
    @classmethod
    def _named(cls, columns: tuple[str, ...]) -> tuple[str, ...]:
        names = tuple(str(column).strip() for column in columns)
        if any(not name for name in names):
            raise ValueError("a column name is empty")
        if len(set(names)) != len(names):
            raise ValueError("a column appears twice")
        return names

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, encoding: str) -> str:
        try:
            return codecs.lookup(encoding.strip()).name
        except LookupError:
            raise ValueError(f"unknown encoding {encoding!r}") from None

    @field_validator("line_ending")
    @classmethod
    def _line_ending(cls, ending: str) -> str:
        found = _LINE_ENDINGS.get(ending if ending in _LINE_ENDINGS else ending.strip().lower())
        if found is None:
            raise ValueError(f"line_ending {ending!r} is neither CRLF nor LF")
        return found

    @model_validator(mode="after")
    def _layout(self) -> AgreedUpload:
        if self.record_id not in self.columns:
            raise ValueError(f"record_id {self.record_id!r} is not one of the columns")
        if self.fixed_widths is not None:
            if list(self.fixed_widths) != list(self.columns):
                raise ValueError("fixed_widths must give every column a width, in column order")
            if any(width <= 0 for width in self.fixed_widths.values()):
                raise ValueError("fixed_widths must be positive")
        elif self.delimiter is None or len(self.delimiter) != 1:
            raise ValueError("delimiter must be one character (or give fixed_widths)")
        return self

    @property
    def widths(self) -> tuple[int, ...] | None:
        """The column widths of a fixed-width file, in column order; None for a delimited one."""
        return tuple(self.fixed_widths.values()) if self.fixed_widths is not None else None


class AgreedResult(_Lenient):
    record_id: str | None = None


class SandboxAlignment(_Lenient):
    """One key's agreed alignment as the service stores it."""

    upload: AgreedUpload
    result: AgreedResult = AgreedResult()
    outputs: dict[str, str] = Field(default_factory=dict)
    moves: str | None = None
    key: str | None = None

    @field_validator("outputs")
    @classmethod
    def _replace_items(cls, outputs: dict[str, str]) -> dict[str, str]:
        for name, item in outputs.items():
            if not _REPLACE_ITEM.match(str(item)):
                raise ValueError(
                    f"output {name}: {item!r} is not a replace item like {{###STATISTICFILE###}}"
                )
        if len(set(outputs.values())) != len(outputs):
            raise ValueError("two outputs name the same replace item")
        return outputs

    @model_validator(mode="after")
    def _moves_declared(self) -> SandboxAlignment:
        if self.moves is not None and self.moves not in self.outputs:
            raise ValueError(f"moves names {self.moves!r}, which is not one of the outputs")
        return self

    @property
    def result_record_id(self) -> str:
        """How the result file names the id column."""
        return self.result.record_id or self.upload.record_id

    @property
    def moves_item(self) -> str | None:
        """The replace item of the output that receives the move notifications, if one is declared."""
        return self.outputs[self.moves] if self.moves is not None else None

    def field_of(self, column: str) -> str | None:
        """The input field an agreed column carries (its §2.2/§2.3 name, else a German name), or None for
        the id and customer columns."""
        if column == self.upload.record_id:
            return None
        return input_field(column) or _GERMAN_NAMES.get(re.sub(r"[^a-z0-9]", "", column.lower()))


def validates(key: str) -> bool:
    """Whether an aligned key (not one of the configured batch keys) only validates."""
    return bool(_VALIDATING_KEY.search(key))


def load_alignment(path: Path, key: str) -> SandboxAlignment:
    """The alignment in YAML file ``path``, held for ``key``.

    Raises:
        AlignmentError: the file cannot be read, is not a YAML mapping, breaks the schema, or names another
            key (the message is one line naming the file and the problem).
    """
    try:
        content: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        reason = str(error).replace("\n", " ")
        raise AlignmentError(f"alignment {path}: cannot be read as YAML ({reason})") from None
    if not isinstance(content, dict):
        raise AlignmentError(f"alignment {path}: expected a mapping with upload: columns, record_id")
    try:
        alignment = SandboxAlignment.model_validate(content)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc']) or 'alignment'}: "
            f"{problem['msg'].removeprefix('Value error, ')}"
            for problem in error.errors()
        )
        raise AlignmentError(f"alignment {path}: {problems}") from None
    if alignment.key is not None and alignment.key != key:
        raise AlignmentError(f"alignment {path}: names key {alignment.key!r} but is given for {key!r}")
    return alignment


def parse_alignments(pairs: Iterable[str]) -> dict[str, SandboxAlignment]:
    """Alignments from ``KEY=FILE`` pairs (the later of two pairs for one key wins).

    Raises:
        AlignmentError: a pair is not ``KEY=FILE`` or its file cannot be held (see :func:`load_alignment`).
    """
    alignments: dict[str, SandboxAlignment] = {}
    for pair in pairs:
        key, separator, path = pair.partition("=")
        if not separator or not key.strip() or not path.strip():
            raise AlignmentError(f"alignment {pair!r}: expected KEY=FILE")
        alignments[key.strip()] = load_alignment(Path(path.strip()), key.strip())
    return alignments


def alignments_setting(value: str | None) -> dict[str, SandboxAlignment]:
    """Alignments from a ``KEY=FILE[,KEY=FILE]`` setting (None or blank: none)."""
    if not value or not value.strip():
        return {}
    return parse_alignments(part for part in value.split(",") if part.strip())
