"""Alignment profiles: what was agreed with the service's operator for one batch key, written as YAML.

Spec §1: the alignment configuration (input and output structure) is agreed with the operator and stored
with the service; the key selects it. A profile states that agreement on our side: the upload's exact header
and order, which column carries our row id, the file's encoding, delimiter (or fixed widths) and line ending,
how the result file names the id column, and the extra files (replace items) the alignment writes.

Two profiles are built in: ``standard`` (the full ``_in`` layout, UTF-8, tab, CRLF) and ``legacy-de`` (German
headers, Windows-1252). Any other profile is a YAML file; ``postflows profiles show NAME`` prints a built-in
one as a starting point. A file that is not a profile is refused naming the line, column and field of the
problem, never quoting what it holds (:mod:`fileio.structured_files`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from core.errors import PostflowsError
from fileio.headers import field_for_header
from fileio.structured_files import UnusableFile, field_path, read_structured, schema_names

ENCODINGS = {"utf-8": "utf-8", "utf8": "utf-8", "cp1252": "cp1252", "windows-1252": "cp1252"}
LINE_ENDINGS = {"\r\n": "\r\n", "\n": "\n", "crlf": "\r\n", "lf": "\n"}
REPLACE_ITEM = re.compile(r"^\{###[A-Z0-9_]+###\}$")
OUTPUT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
PASSTHROUGH = re.compile(r"^PassThrough_\d{2}$", re.IGNORECASE)


class ProfileError(PostflowsError):
    """A profile that cannot be used: unknown name, unreadable file, or a field that breaks the schema."""

    exit_code = 2


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UploadLayout(_Strict):
    """The upload file as agreed: exact header and order, id column, encoding, separators."""

    columns: tuple[str, ...] = Field(min_length=1)
    record_id: str
    encoding: str = "utf-8"
    delimiter: str | None = "\t"
    fixed_widths: dict[str, int] | None = None
    line_ending: str = "\r\n"
    header: bool = True

    @field_validator("columns")
    @classmethod
    def _distinct(cls, columns: tuple[str, ...]) -> tuple[str, ...]:
        stripped = tuple(column.strip() for column in columns)
        if any(not column for column in stripped):
            raise ValueError("a column name is empty")
        first: dict[str, int] = {}
        for position, column in enumerate(stripped, start=1):
            if column in first:
                raise ValueError(f"columns {first[column]} and {position} have the same name")
            first[column] = position
        return stripped

    @field_validator("record_id")
    @classmethod
    def _one_of_the_columns(cls, record_id: str, info: ValidationInfo) -> str:
        columns = info.data.get("columns")
        if columns is not None and record_id not in columns:
            raise ValueError("is not one of the columns")
        return record_id

    @field_validator("encoding")
    @classmethod
    def _encoding(cls, encoding: str) -> str:
        try:
            return ENCODINGS[encoding.strip().lower()]
        except KeyError:
            raise ValueError("is not one of utf-8, cp1252") from None

    @field_validator("line_ending")
    @classmethod
    def _line_ending(cls, ending: str) -> str:
        try:
            return LINE_ENDINGS[ending if ending in LINE_ENDINGS else ending.strip().lower()]
        except KeyError:
            raise ValueError(r'must be "\r\n" (or crlf) or "\n" (or lf)') from None

    @model_validator(mode="after")
    def _consistent(self) -> UploadLayout:
        if self.fixed_widths is not None:
            if list(self.fixed_widths) != list(self.columns):
                raise ValueError("fixed_widths must name every column, in the order of columns")
            if any(width <= 0 for width in self.fixed_widths.values()):
                raise ValueError("fixed_widths must be positive")
            object.__setattr__(self, "delimiter", None)
        elif not self.delimiter or len(self.delimiter) != 1:
            raise ValueError("delimiter must be one character (or give fixed_widths)")
        return self


class ResultLayout(_Strict):
    """How the result file is shaped where it differs from the upload."""

    record_id: str | None = None


class AlignmentProfile(_Strict):
    """One agreed alignment.

    Attributes:
        name: the profile's name (a built-in name, or the file's stem).
        key: the batch key it belongs to; None uses the configured key.
        upload: the upload file's layout.
        result: the result file's layout.
        outputs: extra files of the alignment: our name → its replace item (``{###STATISTICFILE_FR###}``).
        moves: the output holding the move notifications, if the alignment writes them to a file of their own.
    """

    name: str = "custom"
    key: str | None = None
    upload: UploadLayout
    result: ResultLayout = ResultLayout()
    outputs: dict[str, str] = Field(default_factory=dict)
    moves: str | None = None

    @field_validator("outputs")
    @classmethod
    def _outputs(cls, outputs: dict[str, str]) -> dict[str, str]:
        for position, (name, item) in enumerate(outputs.items(), start=1):
            if not OUTPUT_NAME.match(name):
                raise ValueError(f"the name of output {position}: use lower-case letters, digits, - and _")
            if not REPLACE_ITEM.match(item):
                raise ValueError(f"output {position} is not a replace item like {{###STATISTICFILE_FR###}}")
        items = list(outputs.values())
        if len(set(items)) != len(items):
            raise ValueError("two outputs name the same replace item")
        return outputs

    @model_validator(mode="after")
    def _moves_is_an_output(self) -> AlignmentProfile:
        if self.moves is not None and self.moves not in self.outputs:
            raise ValueError("moves names an output that is not one of the outputs")
        return self

    @property
    def result_record_id(self) -> str:
        """The id column's name in the result file."""
        return self.result.record_id or self.upload.record_id

    def fields(self) -> dict[str, str]:
        """Upload column → the address field it carries (columns without one are absent: sent empty or
        filled by ``--map``)."""
        mapped: dict[str, str] = {}
        for column in self.upload.columns:
            if column == self.upload.record_id or PASSTHROUGH.match(column):
                continue
            field = field_for_header(column)
            if field is not None and field not in mapped.values():
                mapped[column] = field
        return mapped

    def with_upload(self, *, delimiter: str | None = None, encoding: str | None = None) -> AlignmentProfile:
        """This profile with its upload delimiter or encoding overridden (validated as if read).

        Raises:
            ProfileError: an override the schema refuses.
        """
        overrides = {
            name: value
            for name, value in (("delimiter", delimiter), ("encoding", encoding))
            if value is not None
        }
        if not overrides:
            return self
        upload = self.upload.model_dump()
        if "delimiter" in overrides:
            upload["fixed_widths"] = None
        try:
            layout = UploadLayout.model_validate({**upload, **overrides})
        except ValidationError as error:
            names = schema_names(UploadLayout)
            problems = "; ".join(
                f"{field_path(p['loc'], names)}: {str(p['msg']).removeprefix('Value error, ')}"
                for p in error.errors(include_input=False, include_url=False)
            )
            raise ProfileError(f"profile {self.name}, upload override: {problems}") from None
        return self.model_copy(update={"upload": layout})

    def fingerprint(self) -> str:
        """The SHA-256 of the profile's content (not its name): part of the work's resume key."""
        content = self.model_dump(mode="json", exclude={"name"})
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()

    def to_yaml(self) -> str:
        """The profile as YAML, in the schema it is read from."""
        content = self.model_dump(mode="json", exclude={"name"}, exclude_none=True)
        if content.get("result") == {}:
            del content["result"]
        for empty in ("outputs",):
            if not content.get(empty):
                content.pop(empty, None)
        return yaml.safe_dump(content, sort_keys=False, allow_unicode=True, width=100)


# The standard profile's upload layout as agreed with the service, a data table of its own: its ``_in``
# names follow the agreed layout's spelling (CoAddress_in, StreetName_in, ZIPCode_in), not §2.2's
# (connectors.address_service.codes.INPUT_FIELD_NAMES), and the sandbox holds its own copy.
# pylint: disable=duplicate-code
STANDARD_COLUMNS = (
    "CustomID_01_in",
    "Company_in",
    "Prename_in",
    "Prename2_in",
    "Name_in",
    "MaidenName_in",
    "AddressAddition_in",
    "CoAddress_in",
    "StreetName_in",
    "HouseNo_in",
    "HouseNoAddition_in",
    "Floor_in",
    "ZIPCode_in",
    "ZIPAddition_in",
    "TownName_in",
    "Canton_in",
    "CountryCode_in",
    "PoBoxTerm_in",
    "PoBoxNo_in",
    "PoBoxZIP_in",
    "PoBoxZIPAddition_in",
    "PoBoxTownName_in",
    *(f"PassThrough_{number:02d}" for number in range(1, 11)),
)
# pylint: enable=duplicate-code

BUILTIN: dict[str, AlignmentProfile] = {
    "standard": AlignmentProfile(
        name="standard",
        upload=UploadLayout(
            columns=STANDARD_COLUMNS,
            record_id="CustomID_01_in",
            encoding="utf-8",
            delimiter="\t",
            line_ending="\r\n",
        ),
    ),
    "legacy-de": AlignmentProfile(
        name="legacy-de",
        upload=UploadLayout(
            columns=(
                "KDNR (QSTAT)",
                "Firma",
                "Vorname",
                "Nachname",
                "c/o",
                "Strasse",
                "Hausnummer",
                "Postfach",
                "PLZ",
                "Ort",
            ),
            record_id="KDNR (QSTAT)",
            encoding="cp1252",
            delimiter="\t",
            line_ending="\r\n",
        ),
        result=ResultLayout(record_id="KDNR"),
    ),
}


def load_profile(name_or_path: str | Path) -> AlignmentProfile:
    """A built-in profile by name, or a profile read from a YAML file.

    Raises:
        ProfileError: no such built-in profile or file, the file is not YAML, or a field breaks the schema
            (the message names the line, column and field and the problem; it never quotes the file, but for
            a short excerpt of the line of a file in the working directory or the data dir).
    """
    text = str(name_or_path)
    if text in BUILTIN:
        return BUILTIN[text]
    path = Path(text)
    if not path.is_file():
        known = ", ".join(BUILTIN)
        raise ProfileError(f"profile {text!r}: neither a built-in profile ({known}) nor a file")
    try:
        document = read_structured(path, "yaml")
    except OSError as error:
        raise ProfileError(
            f"profile {path}: cannot be read: {error.strerror or type(error).__name__}"
        ) from None
    except UnusableFile as error:
        raise ProfileError(f"profile {path}: {error.problem}") from None
    if not isinstance(document.data, dict):
        problem = "expected a mapping with upload: columns, record_id, …"
        raise ProfileError(f"profile {path}: {document.problem_at(document.locate(()), problem)}")
    try:
        return AlignmentProfile.model_validate({"name": path.stem} | document.data)
    except ValidationError as error:
        raise ProfileError(
            f"profile {path}: {document.validation_problems(error, AlignmentProfile)}"
        ) from None


def split_mapping(
    mapping: dict[str, str] | None, profile: AlignmentProfile | None
) -> tuple[dict[str, str] | None, dict[str, str]]:
    """The user's ``header → field`` mapping, and its entries that fill a column of the profile that no
    address field feeds (``Kundennummer=PassThrough_01``) as ``profile column → header``."""
    if not mapping or profile is None:
        return mapping, {}
    fed = set(profile.fields()) | {profile.upload.record_id}
    slots = {
        header: column
        for header, column in mapping.items()
        if column in profile.upload.columns and column not in fed
    }
    rest = {header: field for header, field in mapping.items() if header not in slots}
    return rest or None, {column: header for header, column in slots.items()}
