"""Model building blocks shared by the connectors' pydantic models: :class:`OpenEnum` for the enums a spec
leaves open ("other values: not shown"), which accept any value and know which ones the spec names.
"""

from __future__ import annotations

from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema


class OpenEnum(str):
    """A string enum that the spec leaves open: known values are class constants, others are accepted."""

    @classmethod
    def known_values(cls) -> frozenset[str]:
        return frozenset(
            value
            for klass in cls.__mro__
            for name, value in vars(klass).items()
            if name.isupper() and isinstance(value, str)
        )

    @property
    def is_known(self) -> bool:
        return str(self) in type(self).known_values()

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            cls, core_schema.str_schema(), serialization=core_schema.to_string_ser_schema()
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"
