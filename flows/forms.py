"""How a flow's parameters read as a form in the Prefect UI: a title and a description on every field, and
optional values shown as a typed field with a default instead of a ``null`` toggle.

Prefect builds the form from the flow's signature; it titles every parameter with its Python name and takes
the description from the docstring, overriding what a ``Field`` says. What ``json_schema_extra`` holds is
merged last, so :func:`form` puts the title and description (and the default the form shows) there too.

An optional parameter is ``Blank[X]``: ``X`` in the form, ``X | None`` in Python, where None (an omitted
field, or an empty one: ``""``, ``[]``, ``{}``) means "not given". The form must not show ``"default":
null``: the UI would send that null, and the server refuses null for a field typed ``X``; so each
``Blank`` field names the empty value its form starts with (``blank=""``).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator, Field, GetJsonSchemaHandler, WithJsonSchema
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

T = TypeVar("T")
_UNSET: Any = object()
NULL = {"type": "null"}
DATE_OR_EMPTY = r"^(\d{4}-\d{2}-\d{2})?$"


def form(title: str, description: str, *, blank: Any = _UNSET, **schema: Any) -> Any:
    """The field of one flow parameter in the UI's form.

    Args:
        title: the label, in words ("Address file").
        description: what to enter, for the clerk filling the form.
        blank: the value an optional field's form starts with ("" for text and paths, [] for lists, {}
            for mappings and objects); the flow reads it as "not given".
        **schema: JSON schema keywords the form and the server check (``minimum``, ``maximum``,
            ``examples`` …); the flow checks its limits itself too, with its own message.
    """
    extra: dict[str, Any] = {"title": title, "description": description, **schema}
    if blank is not _UNSET:
        extra["default"] = blank
    return Field(title=title, description=description, json_schema_extra=extra)


def blank_to_none(value: Any) -> Any:
    """An empty form field ("", blanks, [], {}) as None; anything else as it is."""
    if isinstance(value, str) and not value.strip():
        return None
    if isinstance(value, list | dict) and not value:
        return None
    return value


class NullFreeSchema:
    """Shows ``X | None`` as ``X`` in the JSON schema: the form gets a typed field, not a type toggle."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        branches = schema.get("anyOf")
        if not isinstance(branches, list) or NULL not in branches:
            return schema
        kept = [branch for branch in branches if branch != NULL]
        schema = {key: value for key, value in schema.items() if key != "anyOf"}
        if len(kept) == 1:
            schema.update(kept[0])
        else:
            schema["anyOf"] = kept
        return schema


Blank = Annotated[T | None, BeforeValidator(blank_to_none), NullFreeSchema()]
"""An optional value: ``X`` in the form, None in Python when not given or left empty."""

BlankDate = Annotated[
    dt.date | None,
    BeforeValidator(blank_to_none),
    WithJsonSchema({"type": "string", "pattern": DATE_OR_EMPTY, "examples": ["2026-03-02"]}),
]
"""An optional date: YYYY-MM-DD or empty in the form (a date format would refuse the empty default)."""


def _separator(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in {"tab", "\\t"}:
        return "\t"
    return value if isinstance(value, str) and value else blank_to_none(value)


Separator = Annotated[str | None, BeforeValidator(_separator), NullFreeSchema()]
"""A field separator: empty = the default; ``tab`` or ``\\t`` for a tab (a typed tab is invisible)."""


def _yes_no(value: Any) -> Any:
    if isinstance(value, str):
        word = value.strip().lower()
        if word in {"yes", "true"}:
            return True
        if word in {"no", "false"}:
            return False
        if not word or word.startswith("as "):
            return None
    return value


AS_GIVEN = "as in the parameters"
YesNoOrAsGiven = Annotated[
    bool | None,
    BeforeValidator(_yes_no),
    WithJsonSchema({"type": "string", "enum": [AS_GIVEN, "yes", "no"]}),
]
"""A yes/no choice that may be left to another input: ``as in the parameters``, yes or no."""


# Descriptions several flows share.
COLUMN_MAPPING = (
    'Header → address field, for headers the flow does not recognise by name, e.g. {"Kundenname": "Name"}; '
    '"ignore" leaves a column out of the address, e.g. {"Land": "ignore"} (it is passed through); '
    '"ZIPCode+TownName" splits a column holding postcode and town in one, e.g. '
    '{"Wohnort": "ZIPCode+TownName"}.'
)
SPLIT_HOUSE_NUMBERS = (
    "Split a street cell that holds the house number too ('Bahnhofstr. 1a') where a row has none; a line "
    "that cannot be split with certainty rejects its row with the reason."
)
INPUT_SEPARATOR = "Field separator of a text input. Empty: detected. Write tab or \\t for a tab."
INPUT_ENCODING = (
    "Encoding of a text input, e.g. utf-8 or cp1252. Empty: UTF-8 (with or without BOM), else Windows-1252."
)
INPUT_SHEET = "Worksheet of an .xlsx input. Empty: the first."
FIXED_WIDTHS = (
    'Column name → width, in column order, for a fixed-width .txt input, e.g. {"Name": 30, "Street": 40}.'
)
