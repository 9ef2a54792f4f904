"""The faults of the matrix: what each injects (a sandbox fault rule for a step), which steps it applies to,
and what an error naming it says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.answer_faults import STATUS_FIELDS
from tests.reliability.steps import Step


@dataclass(frozen=True)
class Fault:
    """One fault of the matrix.

    Attributes:
        label: how the table names it.
        rule: the fault rule's fields for a step (kind, value, times).
        applies: whether the fault applies to a step.
        causes: what an error naming this fault says (one of them).
    """

    label: str
    rule: Callable[[Step], dict[str, Any]]
    applies: Callable[[Step], bool]
    causes: tuple[str, ...]


def _always(step: Step) -> bool:
    return True


def _fixed(kind: str, value: Any = None, times: int | None = 1) -> Callable[[Step], dict[str, Any]]:
    return lambda step: {"kind": kind, "value": value, "times": times}


def _error_in_200(step: Step) -> dict[str, Any]:
    value = 201 if step.api == "address" else "0000"
    return {"kind": "service_status", "value": value, "times": 1}


FAULTS: tuple[Fault, ...] = (
    Fault("HTTP 500", _fixed("http_status", 500), _always, ("HTTP 500",)),
    Fault("HTTP 502", _fixed("http_status", 502), _always, ("HTTP 502",)),
    Fault("HTTP 503", _fixed("http_status", 503), _always, ("HTTP 503",)),
    Fault("dropped connection", _fixed("drop"), _always, ("RemoteProtocolError", "dropped connection")),
    Fault("read timeout", _fixed("read_timeout"), _always, ("ReadTimeout", "read timeout")),
    Fault("HTTP 429", _fixed("http_status", 429), _always, ("HTTP 429",)),
    Fault(
        "Status 106 (per-minute limit)",
        _fixed("service_status", 106),
        lambda step: step.api == "address",
        ("Status 106",),
    ),
    Fault(
        "Status 501 (upload limit)",
        _fixed("service_status", 501),
        lambda step: step.api == "address" and step.endpoint == "uploadfile",
        ("Status 501",),
    ),
    Fault(
        "token expired (401)",
        _fixed("token_expired"),
        lambda step: step.api in ("newspaper", "commerce"),
        ("HTTP 401",),
    ),
    Fault(
        "HTTP 200 carrying an error",
        _error_in_200,
        lambda step: step.api in ("address", "newspaper"),
        ("Status 201", "0000"),
    ),
    Fault(
        "truncated download (size)",
        _fixed("corrupt_download", "size"),
        lambda step: step.downloads is not None,
        ("size", "truncated", "bytes"),
    ),
    Fault(
        "corrupt download (base64)",
        _fixed("corrupt_download", "base64"),
        lambda step: step.downloads == "document",
        ("base64",),
    ),
    Fault(
        "corrupt download (ZIP)",
        _fixed("corrupt_download", "zip"),
        lambda step: step.zipped,
        ("ZIP", "zip", "CRC"),
    ),
    Fault("job fails", _fixed("job_outcome", "failed"), lambda step: step.starts_job, ("FAILED", "Failed")),
    Fault(
        "job is cancelled",
        _fixed("job_outcome", "canceled"),
        lambda step: step.starts_job,
        ("CANCELED", "Canceled"),
    ),
    Fault(
        "status not in the spec",
        _fixed("unlisted_status", times=None),
        lambda step: step.reports_status,
        tuple(str(value) for value in STATUS_FIELDS.values()),
    ),
)
