"""Every environment variable of the settings, with the place in the settings model it sets: the one table
the settings read the environment by, the reference pages list and configuration errors name.

A setting of an API's model is ``POSTFLOWS_<API>_<FIELD>`` (``POSTFLOWS_COMMERCE_URL``, the names users
have always set) or, as pydantic-settings nests them, ``POSTFLOWS_<API>__<FIELD>``; a field whose
``json_schema_extra`` has a ``variable`` (or ``variables`` per field of a connector's dataclass) is named
so instead. The same names (lower case, without the prefix) are accepted as keyword arguments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource

from core import environment


@dataclass(frozen=True)
class Variable:
    """One environment variable: its name, the fields it sets (``("commerce", "paths", "address")``),
    its default and what it sets."""

    name: str
    path: tuple[str, ...]
    description: str
    default: Any
    secret: bool = False
    limit: str | None = None

    @property
    def setting(self) -> str:
        """The name as a keyword argument and a Prefect block field: ``commerce_url``."""
        return self.name.removeprefix(environment.PREFIX).lower()

    def of(self, settings: BaseModel) -> Any:
        """This variable's value in ``settings``."""
        value: Any = settings
        for name in self.path:
            value = getattr(value, name)
        return value


def _of_field(setting: str, path: tuple[str, ...], field: FieldInfo) -> Variable:
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    limit = extra.get("limit")
    return Variable(
        name=f"{environment.PREFIX}{setting.upper()}",
        path=path,
        description=field.description or "",
        default=field.get_default(call_default_factory=True),
        secret=SecretStr in _types_of(field.annotation),
        limit=str(limit) if limit else None,
    )


def _types_of(annotation: Any) -> Iterator[Any]:
    yield annotation
    for argument in getattr(annotation, "__args__", ()):
        yield from _types_of(argument)


def _group_variables(group: str, model: type[BaseModel]) -> Iterator[Variable]:
    for name, field in model.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        named = extra.get("variables")
        if isinstance(named, Mapping) and dataclasses.is_dataclass(field.annotation):
            for leaf in dataclasses.fields(field.annotation):
                entry = named[leaf.name]
                if not isinstance(entry, tuple | list) or len(entry) != 2:
                    raise TypeError(f"{group}.{name}.{leaf.name}: name its variable and what it sets")
                setting, description = str(entry[0]), str(entry[1])
                yield Variable(
                    name=f"{environment.PREFIX}{setting.upper()}",
                    path=(group, name, leaf.name),
                    description=description,
                    default=leaf.default,
                )
        else:
            yield _of_field(str(extra.get("variable") or f"{group}_{name}"), (group, name), field)


@cache
def variables_of(model: type[BaseModel]) -> tuple[Variable, ...]:
    """Every variable of the settings ``model``, in the order of its fields."""
    found: list[Variable] = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found += _group_variables(name, annotation)
        else:
            found.append(_of_field(name, (name,), field))
    return tuple(found)


def variable_named(model: type[BaseModel], *path: str) -> str:
    """The environment variable of the field at ``path`` (``"commerce", "url"``)."""
    return next(variable.name for variable in variables_of(model) if variable.path == path)


def fold(model: type[BaseModel], values: Mapping[str, Any], nested: dict[str, Any]) -> dict[str, Any]:
    """``nested`` (values shaped as ``model``) with the values of ``values`` named by a variable's
    :attr:`~Variable.setting` set at their place; a flat name wins over the nested form."""
    for variable in variables_of(model):
        if len(variable.path) < 2 or variable.setting not in values:
            continue
        *groups, leaf = variable.path
        place = nested
        for group in groups:
            inner = place.get(group)
            if isinstance(inner, BaseModel):
                inner = inner.model_dump()
            elif dataclasses.is_dataclass(inner) and not isinstance(inner, type):
                inner = dataclasses.asdict(inner)
            place[group] = inner = dict(inner) if isinstance(inner, dict) else {}
            place = inner
        place[leaf] = values[variable.setting]
    return nested


class PostflowsEnvironment(EnvSettingsSource):
    """The settings' values from :func:`core.environment.variables` (the environment over ``.env``):
    ``POSTFLOWS_<FIELD>``, ``POSTFLOWS_<API>__<FIELD>`` and the flat name of every API setting.

    The source reads what it parses from its ``env_vars``, set here to those variables (names in lower case,
    as a source that is not case-sensitive keeps them); the settings model may not ask for case-sensitive
    names or a text read as None, which that table does not carry."""

    def __init__(self, settings_cls: type[BaseSettings], env_file: Path | None) -> None:
        super().__init__(settings_cls)
        if self.case_sensitive or self.env_parse_none_str is not None:
            raise TypeError(
                f"{settings_cls.__name__}: case_sensitive and env_parse_none_str are not supported"
            )
        self.env_vars = {
            name: text
            for name, text in environment.variables(env_file=env_file).items()
            if not (self.env_ignore_empty and text == "")
        }

    def __call__(self) -> dict[str, Any]:
        prefix = environment.PREFIX.lower()
        flat = {
            name.removeprefix(prefix): text
            for name, text in self.env_vars.items()
            if name.startswith(prefix) and text is not None
        }
        return fold(self.settings_cls, flat, super().__call__())
