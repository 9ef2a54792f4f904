"""Flows called with their options by name, as before they took request parts: each name goes into the part
(see :mod:`flows.requests`) that has it, so a test says only what it sets."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from flows.requests import parameters_of

# The options a flow took by position before it took request parts.
POSITIONAL = {
    "address-batch": ("input_path", "output_dir"),
    "newspaper-order": ("order_path", "output_dir"),
    "address-purchase": ("addresses_path", "parameters_path", "output_dir"),
    "address-query": ("input_path", "output_dir"),
    "pickup-registration": ("input_path", "output_dir"),
    "pickup-points": ("input_path", "output_dir"),
    "address-labels": ("input_path", "output_dir"),
    "return-order": ("order_path", "output_dir"),
    "delivery-reference-sync": ("output_dir",),
    "structure-files": ("file_code", "output_dir"),
    "newspaper-statistics": ("input_path", "output_dir", "calendar_path"),
    "newspaper-reports": ("order_id", "output_dir"),
    "newspaper-master-data": ("newspaper_number", "output_dir"),
}


def call(flow: Any, *given: Any, **options: Any) -> Any:
    """``flow`` (a flow or its ``.fn``) called with ``options`` put into its request parts."""
    function = getattr(flow, "fn", flow)
    if given:
        names = POSITIONAL[function.__name__.replace("_", "-")]
        options = {**dict(zip(names, given, strict=False)), **options}
    return flow(**parameters_of(function, **options))


def json_parameters(flow: Any, **options: Any) -> dict[str, Any]:
    """The parameters of a deployment run of ``flow`` with ``options``, as JSON (what the API sends)."""
    parameters = parameters_of(getattr(flow, "fn", flow), **options)
    return {
        name: value.model_dump(mode="json", exclude_defaults=True) if isinstance(value, BaseModel) else value
        for name, value in parameters.items()
    }
