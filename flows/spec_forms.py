"""Prefect forms generated from a connector's request models: the request body is declared once, in the
connector, with its titles, descriptions and constraints; the form a clerk fills is derived from it.

:func:`form_model` derives, recursively, a model in which every field is optional and blank by default: a
scalar is ``Blank[X]`` (no ``null`` default the UI would send), a yes/no field starts as ``false``, a nested
object starts empty and a list starts as ``[]``. Each field keeps its connector's title and description,
and its constraints in the JSON schema (a pattern also matches the empty field), so the form and the server
show them; they are enforced where the body is read into the connector's model, for a form as for a file.
Fields whose shape the specification does not show (``dict[str, Any]``) are not offered; like every field
the form does not show, an API caller may still give them: they are kept.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from connectors.models import OpenEnum
from flows.forms import Blank

# A connector field's constraints (annotated-types' and pydantic's metadata attributes) as the JSON schema
# keywords the form shows and the server checks.
_KEYWORDS = {
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
    "min_length": "minLength",
    "max_length": "maxLength",
    "pattern": "pattern",
}
CONSTRAINT_KEYWORDS = frozenset({*_KEYWORDS.values(), "examples"})
# The generic types a form field is made of, parametrised at run time with the connector's types.
_LIST: Any = list
_BLANK: Any = Blank


class SpecForm(BaseModel):
    """Base: the spec's camelCase names in the form and the body, Python names in code, extra fields kept."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def to_body(self) -> dict[str, Any]:
        """The request body: spec names; empty values, lists and objects left out."""
        pruned = _prune(self.model_dump(mode="json", by_alias=True, exclude_none=True))
        return pruned if isinstance(pruned, dict) else {}

    def is_empty(self) -> bool:
        """Nothing but defaults filled in (the form's untouched object)."""
        return not _prune(self.model_dump(mode="json", by_alias=True, exclude_defaults=True))


def _prune(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {key: _prune(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if item not in ("", [], {}, None)}
    if isinstance(value, list):
        return [item for item in (_prune(item) for item in value) if item not in ("", [], {}, None)]
    return value


def form_model(
    name: str, *models: type[BaseModel], exclude: frozenset[str] = frozenset(), doc: str = ""
) -> type[SpecForm]:
    """The form of one or more connector models (their fields in order, a field they share once).

    Args:
        name: the form model's name, as the deployment's schema shows it.
        models: the connector models; a field two of them declare must be declared alike.
        exclude: Python names of top-level fields the form does not offer (they are still kept when given).
        doc: the form model's docstring.
    """
    fields: dict[str, FieldInfo] = {}
    for model in models:
        for field_name, info in model.model_fields.items():
            if field_name in exclude:
                continue
            if field_name in fields and repr(info) != repr(fields[field_name]):
                raise TypeError(f"{name}: {field_name} is declared differently in {model.__name__}")
            fields.setdefault(field_name, info)
    return _build(name, doc, fields, {})


def _build(
    name: str,
    doc: str,
    fields: dict[str, FieldInfo],
    made: dict[type[BaseModel], type[SpecForm]],
) -> type[SpecForm]:
    definitions: dict[str, Any] = {}
    for field_name, info in fields.items():
        definition = _form_field(field_name, info, made)
        if definition is not None:
            definitions[field_name] = definition
    form: type[SpecForm] = create_model(name, __base__=SpecForm, __doc__=doc or None, **definitions)
    return form


def _nested(model: type[BaseModel], made: dict[type[BaseModel], type[SpecForm]]) -> type[SpecForm]:
    """The form of a nested connector model, made once however often it occurs."""
    if model not in made:
        made[model] = _build(f"{model.__name__}Form", "", dict(model.model_fields), made)
    return made[model]


def _form_field(
    field_name: str, info: FieldInfo, made: dict[type[BaseModel], type[SpecForm]]
) -> tuple[Any, FieldInfo] | None:
    """The form's (type, field) of one connector field; None for a field whose shape is not shown."""
    inner = _without_none(info.annotation)
    words: dict[str, Any] = {"title": info.title, "description": info.description}
    if info.alias is not None and info.alias != to_camel(field_name):
        words["alias"] = info.alias
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        nested = _nested(inner, made)
        return nested, Field(default_factory=nested, **words)
    if get_origin(inner) is list:
        (item,) = get_args(inner)
        if isinstance(item, type) and issubclass(item, BaseModel):
            return _LIST[_nested(item, made)], Field(default_factory=list, **words)
        return (_LIST[item], Field(default_factory=list, **words)) if _shown(item) else None
    if not _shown(inner):
        return None
    if inner is bool:
        return bool, Field(default=False, **words)
    schema = _constraints(info, inner)
    value_type = str if isinstance(inner, type) and issubclass(inner, OpenEnum) else inner
    return _BLANK[value_type], Field(default=None, json_schema_extra=_without_default(schema), **words)


def _shown(annotation: Any) -> bool:
    """Whether the form offers a value of this type (not one whose shape the spec leaves open)."""
    return annotation is not Any and get_origin(annotation) is not dict and annotation is not dict


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(kept) == 1:
            return kept[0]
    return annotation


def _constraints(info: FieldInfo, inner: Any) -> dict[str, Any]:
    """The connector field's constraints as JSON schema keywords; a pattern also matches the empty field
    (the form's blank), an open enum names the values the spec shows as examples."""
    found: dict[str, Any] = {}
    for constraint in info.metadata:
        for attribute, keyword in _KEYWORDS.items():
            value = getattr(constraint, attribute, None)
            if value is not None:
                found[keyword] = value
    pattern = found.get("pattern")
    if isinstance(pattern, str) and pattern.startswith("^") and pattern.endswith("$"):
        found["pattern"] = f"^({pattern[1:-1]})?$"
    if info.examples:
        found["examples"] = list(info.examples)
    elif isinstance(inner, type) and issubclass(inner, OpenEnum):
        found["examples"] = sorted(inner.known_values())
    return found


def _without_default(extra: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    # An empty optional field is omitted by the form; a `null` default would be sent and refused.
    def update(schema: dict[str, Any]) -> None:
        schema.pop("default", None)
        schema.update(extra)

    return update
