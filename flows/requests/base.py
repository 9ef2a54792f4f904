"""How a flow's options are declared once: a pydantic model per part of a run (what to do, how long to wait,
where the results go) whose fields carry the Prefect form's title and description, the command line's flag,
and whether the field defines the work (its identity, which the idempotency key hashes).

Nothing here imports Prefect or the flows' engine: the ``postflows`` command reads these models to build its
options before any flow is imported.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_type_hints

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.fields import FieldInfo

_UNSET: Any = object()
Takes = Literal["pairs", "widths", "escaped", "date", "text", "duration"]
"""How a command-line value is written when it is not the field's own type: ``pairs`` HEADER=FIELD
(repeatable) for a mapping, ``widths`` NAME:WIDTH,… for fixed widths, ``escaped`` a text with ``\\t``,
``date`` YYYY-MM-DD, ``text`` a word the field reads (a choice checked with its own message), ``duration``
7d, 12h, 30m or a bare number of hours for a field in hours."""


@dataclass(frozen=True)
class Cli:
    """How a field is given on the ``postflows`` command line.

    Attributes:
        flags: the option's names (``--out``, ``-o``; ``--split/--no-split`` for an on/off switch); none for
            an argument.
        argument: the argument's name (its metavar in upper case) when the field is a positional argument.
        takes: how the value is written when it is not the field's own type (see :data:`Takes`).
        required: required on the command line although the form may leave it empty.
        unset: the command line shows no default: a value not given is the field's default, and the part
            does not count the field as set (``model_fields_set``), so a command can tell.
    """

    flags: tuple[str, ...] = ()
    argument: str | None = None
    takes: Takes | None = None
    required: bool = False
    unset: bool = False


def flag(*flags: str, takes: Takes | None = None, required: bool = False, unset: bool = False) -> Cli:
    """A command-line option: ``flag("--out", "-o")``."""
    return Cli(flags=flags, takes=takes, required=required, unset=unset)


def argument(name: str, *, required: bool = False) -> Cli:
    """A positional command-line argument named ``name``."""
    return Cli(argument=name, required=required)


class Work:
    """Marks a field that defines the work: it is part of :meth:`RequestPart.identity`."""


WORK = Work()


def option(
    title: str,
    description: str,
    default: Any = _UNSET,
    *,
    blank: Any = _UNSET,
    ge: float | None = None,
    le: float | None = None,
    **schema: Any,
) -> Any:
    """One field of a request: its title and description (the form's label and help, the command line's
    help), its default, and JSON schema keywords the form checks (``exclusiveMinimum``, ``examples`` …).

    Args:
        title: the label, in words ("Address file").
        description: what to enter; the command line's ``--help`` says the same.
        default: the value when not given; none for a required field.
        blank: the value an optional field's form starts with ("" for text and paths, [] for lists, {} for
            mappings); the flow reads it as "not given" (see :mod:`flows.forms`).
        ge: the smallest value accepted (checked, shown as the form's ``minimum``).
        le: the largest value accepted (checked, shown as the form's ``maximum``).
        **schema: JSON schema keywords of the form.
    """
    extra: dict[str, Any] = dict(schema)
    if blank is not _UNSET:
        extra["default"] = blank
    if default is _UNSET:
        return Field(title=title, description=description, ge=ge, le=le, json_schema_extra=extra or None)
    return Field(
        default=default, title=title, description=description, ge=ge, le=le, json_schema_extra=extra or None
    )


class RequestPart(BaseModel):
    """A part of a flow's request: one parameter of the flow, one group of the Prefect form.

    As JSON (the form's default of a parameter, a deployment's parameters), a field not given is the value
    its form starts with ("", [], {}), never null: the form would send the null, and the server refuses
    null for a typed field.
    """

    model_config = ConfigDict(extra="forbid")

    @model_serializer(mode="wrap")
    def _blank_for_none(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        dumped = handler(self)
        if info.mode != "json" or not isinstance(dumped, dict):
            return dumped
        for name, value in dumped.items():
            extra = (
                type(self).model_fields[name].json_schema_extra if name in type(self).model_fields else None
            )
            if value is None and isinstance(extra, dict) and "default" in extra:
                dumped[name] = extra["default"]
        return dumped

    def identity(self) -> dict[str, Any]:
        """The fields that define the work (marked :data:`WORK`), by name: what the idempotency key
        hashes, so a re-run with the same work resumes it."""
        return {name: getattr(self, name) for name in work_fields(type(self))}


def work_fields(model: type[BaseModel]) -> list[str]:
    """The names of ``model``'s fields marked :data:`WORK`."""
    return [
        name
        for name, info in model.model_fields.items()
        if any(isinstance(item, Work) for item in info.metadata)
    ]


def cli_of(info: FieldInfo) -> Cli | None:
    """A field's command-line declaration, or None when the command line does not offer it."""
    return next((item for item in info.metadata if isinstance(item, Cli)), None)


Part = type[RequestPart] | RequestPart
"""A part as a flow or command takes it: the model (its defaults) or an instance (defaults of its own)."""


def model_of(part: Part) -> type[RequestPart]:
    """The model of a part given as a model or an instance."""
    return part if isinstance(part, type) else type(part)


def defaults_of(part: Part) -> dict[str, Any]:
    """The values a part starts with: the instance's, or the model's defaults (required fields left out)."""
    if isinstance(part, RequestPart):
        return {name: getattr(part, name) for name in type(part).model_fields}
    return {
        name: info.get_default(call_default_factory=True)
        for name, info in part.model_fields.items()
        if not info.is_required()
    }


def split_values(parts: Sequence[Part], values: Mapping[str, Any]) -> list[RequestPart]:
    """The parts filled from one flat mapping of field names (each part's own defaults for the rest).

    Raises:
        KeyError: a name no part has; pydantic.ValidationError: a value a part refuses.
    """
    known = {name for part in parts for name in model_of(part).model_fields}
    unknown = sorted(set(values) - known)
    if unknown:
        raise KeyError(f"no part has {', '.join(unknown)}")
    filled = []
    for part in parts:
        model = model_of(part)
        given = {name: value for name, value in values.items() if name in model.model_fields}
        start = part.model_dump(exclude_unset=True) if isinstance(part, RequestPart) else {}
        filled.append(model.model_validate({**start, **given}))
    return filled


def flow_parts(function: Callable[..., Any]) -> dict[str, type[RequestPart]]:
    """The request parts a flow function takes, by parameter name."""
    hints = get_type_hints(function)
    return {
        name: hints[name]
        for name in inspect.signature(function).parameters
        if isinstance(hints.get(name), type) and issubclass(hints[name], RequestPart)
    }


def parameters_of(function: Callable[..., Any], **values: Any) -> dict[str, Any]:
    """A flow's parameters from one flat mapping of field names: each part filled from the names it has
    (the parameter's default part, else the model's defaults, for the rest); other names as they are."""
    parts = flow_parts(function)
    signature = inspect.signature(function)
    parameters: dict[str, Any] = {}
    taken: set[str] = set()
    for name, model in parts.items():
        default = signature.parameters[name].default
        start: Part = default if isinstance(default, RequestPart) else model
        given = {key: value for key, value in values.items() if key in model.model_fields}
        taken |= set(given)
        if given or isinstance(start, RequestPart) or not _has_required(model):
            parameters[name] = split_values([start], given)[0]
    parameters.update({key: value for key, value in values.items() if key not in taken})
    return parameters


def _has_required(model: type[BaseModel]) -> bool:
    return any(info.is_required() for info in model.model_fields.values())
