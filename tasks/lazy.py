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
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r} ({state})>"


def lazy_module(name: str) -> Any:
    """A stand-in for ``import name`` that imports it on first use (see the module's docstring)."""
    return LazyModule(name)
