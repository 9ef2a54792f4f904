"""Every flow returns a result model: its return annotation names pydantic models only (a union of them where
a run may end more than one way, e.g. parked), never a dict."""

from __future__ import annotations

import importlib
import pkgutil
import types
import typing

from prefect import Flow
from pydantic import BaseModel

import flows


def _flows() -> list[Flow[..., typing.Any]]:
    found = []
    for module_info in pkgutil.iter_modules(flows.__path__):
        module = importlib.import_module(f"flows.{module_info.name}")
        found += [value for value in vars(module).values() if isinstance(value, Flow)]
    return list({flow.name: flow for flow in found}.values())


def _models(annotation: object) -> list[object]:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return list(typing.get_args(annotation))
    return [annotation]


def test_every_flow_returns_result_models() -> None:
    found = _flows()
    assert len(found) >= 20
    for flow in found:
        returned = typing.get_type_hints(flow.fn)["return"]
        for model in _models(returned):
            assert isinstance(model, type) and issubclass(model, BaseModel), (flow.name, model)
            assert not issubclass(model, dict), flow.name
