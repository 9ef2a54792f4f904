"""Flow-run names that say what runs: the flow, what it works on, when it started in Swiss time and a short
suffix of the run's id that keeps two runs started in the same second apart
(``address-batch-customers.xlsx-20260302-081500-3f9a``), instead of Prefect's random two words."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from pathlib import PurePath, PurePosixPath
from typing import Any

from core.swiss_time import SWISS_ZONE

Describe = Callable[[Mapping[str, Any]], str | None]


def run_name(flow_name: str, *parts: str | Describe) -> Callable[[], str]:
    """A ``flow_run_name`` callable for ``@flow``.

    Args:
        flow_name: the first word.
        *parts: parameter names, or ``part.field`` for a field of a request part (a path is named by its
            file name, other values as they are; empty ones are left out), or functions of all parameters
            returning a word or None.
    """

    def name() -> str:
        from prefect.runtime import flow_run

        parameters: Mapping[str, Any] = flow_run.parameters or {}
        words = [flow_name]
        for part in parts:
            word = part(parameters) if callable(part) else _word(parameter_value(parameters, part))
            if word:
                words.append(word)
        words.append(_now().astimezone(SWISS_ZONE).strftime("%Y%m%d-%H%M%S"))
        run_id = str(flow_run.id or "")
        if run_id:
            words.append(run_id.replace("-", "")[:SUFFIX_LENGTH])
        return "-".join(words)

    return name


SUFFIX_LENGTH = 4
"""Hex digits of the run's id a name ends with."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def parameter_value(parameters: Mapping[str, Any], name: str) -> Any:
    """A parameter, or a field of one (``request.input_path``): a request part or its JSON object."""
    head, _, field = name.partition(".")
    value = parameters.get(head)
    if not field:
        return value
    return value.get(field) if isinstance(value, Mapping) else getattr(value, field, None)


def _word(value: Any) -> str | None:
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, PurePath) or (isinstance(value, str) and ("/" in value or "\\" in value)):
        return PurePosixPath(str(value).replace("\\", "/")).name or None
    return str(value)
