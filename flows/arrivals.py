"""The flows a file arriving can start (a ``postflows.file.arrived`` event): each one's name, the command
that runs the same flow, and the parameter that takes the file's path.

Prefect-free: the dispatcher flow (:mod:`flows.file_arrived`) routes by it, and the deployment catalog
(which sits above the flows) reads it to say which deployments a file can start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

FILE_ARRIVED_EVENT = "postflows.file.arrived"
FILE_ARRIVED_FLOW = "file-arrived"


@dataclass(frozen=True)
class FileFlow:
    """A flow that takes one file.

    Attributes:
        name: the flow's name, which its deployment has too (``<name>/<name>`` to ``run_deployment``).
        command: the ``postflows`` sub-command that runs the same flow (an event's ``kind`` may name it).
        parameter: the parameter a ``postflows.file.arrived`` event fills with the file's path
            (``part.field`` for a field of a request part).
        output_parameter: the parameter (or ``part.field``) such a run gets its output folder in.
    """

    name: str
    command: str
    parameter: str
    output_parameter: str = "output.output_dir"

    def parameters(self, file: str, output_dir: str) -> dict[str, Any]:
        """The parameters of a run on a file that arrived: the file and the output folder, each in its
        parameter or in its field of a request part."""
        parameters: dict[str, Any] = {}
        for name, value in ((self.parameter, file), (self.output_parameter, output_dir)):
            part, _, field = name.partition(".")
            if field:
                parameters.setdefault(part, {})[field] = value
            else:
                parameters[part] = value
        return parameters

    @property
    def deployment(self) -> str:
        """``<flow name>/<deployment name>``: how ``run_deployment`` names the flow's deployment."""
        return f"{self.name}/{self.name}"


FILE_FLOWS: Mapping[str, FileFlow] = MappingProxyType(
    {
        file_flow.name: file_flow
        for file_flow in (
            FileFlow("address-batch", "address-batch", "request.input_path"),
            FileFlow("address-query", "address-query", "request.input_path"),
            FileFlow("newspaper-statistics", "newspaper-statistics", "request.input_path"),
            FileFlow("address-validation", "address-validation", "request.input_path"),
            FileFlow("deliverability-check", "deliverability", "request.input_path"),
            FileFlow("pickup-registration", "pickup-register", "request.input_path"),
        )
    }
)
"""Flow name → the flow, for every flow a file arriving can start."""


def arrival_kinds() -> dict[str, FileFlow]:
    """Every ``kind`` a ``postflows.file.arrived`` event may name (flow and command names) → the flow."""
    kinds: dict[str, FileFlow] = {}
    for file_flow in FILE_FLOWS.values():
        kinds[file_flow.name] = file_flow
        kinds[file_flow.command] = file_flow
    return kinds
