"""Heavy libraries imported on first use, so that what only checks a file's header (the CLI's prechecks) or
prints help never pays for pandas or numpy.

A module using this writes::

    if TYPE_CHECKING:
        import pandas as pd
    else:
        pd = lazy_module("pandas")

and uses ``pd`` as before: the first attribute looked up imports pandas (under the import system's lock, so
threads are safe), later look-ups go straight to the module.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands in for the module ``name`` until an attribute of it is wanted."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)

    def _load(self) -> ModuleType:
        module: ModuleType | None = self._module
        if module is None:
            module = importlib.import_module(self._name)
            object.__setattr__(self, "_module", module)
        return module

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._load(), attribute)

    def __setattr__(self, attribute: str, value: Any) -> None:
        setattr(self._load(), attribute, value)  # e.g. a test patching pandas.read_csv through ``pd``

    def __delattr__(self, attribute: str) -> None:
        delattr(self._load(), attribute)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r} ({state})>"


def lazy_module(name: str) -> Any:
    """A stand-in for ``import name`` that imports it on first use (see the module's docstring)."""
    return LazyModule(name)
