"""The remote steps of a flow, learnt from a clean run: each request's API, method and endpoint with its ids
replaced by ``*`` (the glob a fault rule matches, one path segment per ``*``), and what the step's answer
carried, which decides the faults that apply to it: a download can be cut short or spoiled, a status can say
something the specification does not list, the POST that starts a job can start one that fails.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import json
import re
from dataclasses import dataclass
from typing import Any

import httpx

from sandbox.answer_faults import STATUS_FIELDS, ZIP_MAGIC
from sandbox.faults import FaultRule, split_api_path
from sandbox.inprocess import SandboxTransport

_ID = re.compile(r"^(\d+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$")
# POSTs that ask and change nothing: a query is no submission, however often it is sent. The address
# service's individual queries (runquery2*) are not among them: each is billed, so it submits.
QUERY_POSTS = ("*addresses/validation", "*deliverabilities/when", "*pickup/v1/points")
# Endpoint prefixes left out of a step's label (the newspaper API's long paths).
_LABEL_PREFIXES = (
    "logistics/newspaper/submission/v1/",
    "logistics/newspaper/address/v1/",
    "logistics/newspaper/statistic/v1/",
)


@dataclass(frozen=True)
class Seen:
    """One request of a clean run, with the answer it got."""

    method: str
    path: str
    status: int
    content_type: str
    body: bytes


class RecordingTransport(httpx.AsyncBaseTransport):
    """The sandbox transport; while :attr:`seen` is a list, every request and its answer are appended."""

    def __init__(self, inner: SandboxTransport) -> None:
        self.inner = inner
        self.seen: list[Seen] | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if self.seen is None:
            return response
        body = await response.aread()
        content_type = response.headers.get("content-type", "")
        self.seen.append(Seen(request.method, request.url.path, response.status_code, content_type, body))
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            content=body,
            request=request,
            extensions=response.extensions,
        )


@dataclass(frozen=True)
class Step:
    """One remote step of a flow, as its clean run showed it.

    Attributes:
        api, method, endpoint: what a fault rule matches (``endpoint`` with ids as ``*``).
        downloads: the answer carries a file: ``raw`` (the body), ``document`` (base64 ``data``) or None.
        zipped: that file is a ZIP archive.
        reports_status: a status check whose answer carries a job or order status.
        starts_job: the POST that starts the job the flow then waits for.
        submits: a POST that changes or bills something on the service (not a token request, not a free
            query).
    """

    api: str
    method: str
    endpoint: str
    downloads: str | None = None
    zipped: bool = False
    reports_status: bool = False
    starts_job: bool = False
    submits: bool = False

    @property
    def key(self) -> tuple[str, str, str]:
        return self.api, self.method, self.endpoint

    @property
    def label(self) -> str:
        endpoint = self.endpoint
        for prefix in _LABEL_PREFIXES:
            endpoint = endpoint.removeprefix(prefix)
        return f"{self.method} {endpoint}"

    def rule(self, **fault: Any) -> FaultRule:
        """The fault rule that fires at this step's requests (a ``*`` standing for one path segment)."""
        return FaultRule(api=self.api, method=self.method, endpoint=self.endpoint, per_segment=True, **fault)

    def matches(self, api: str, method: str, endpoint: str) -> bool:
        return self.rule(kind="drop").matches(api, method, endpoint)


def step_of(method: str, path: str) -> tuple[str, str, str]:
    """(api, method, endpoint glob) of a request path of the combined sandbox."""
    api, endpoint = split_api_path(path)
    return api, method.upper(), glob_of(endpoint)


def learn_steps(seen: list[Seen]) -> list[Step]:
    """The steps of a clean run, in the order they first happened, with what their answers carried."""
    first: dict[tuple[str, str, str], Seen] = {}
    for request in seen:
        first.setdefault(step_of(request.method, request.path), request)
    status_keys = [key for key, request in first.items() if _reports_status(key, request)]
    job_start = _job_start(list(first), status_keys[0]) if status_keys else None
    steps = []
    for key, request in first.items():
        api, method, endpoint = key
        downloads, zipped = _download_of(request)
        steps.append(
            Step(
                api,
                method,
                endpoint,
                downloads=downloads,
                zipped=zipped,
                reports_status=key in status_keys,
                starts_job=key == job_start,
                submits=method == "POST"
                and api != "auth"
                and not any(fnmatch.fnmatchcase(endpoint, query) for query in QUERY_POSTS),
            )
        )
    for request in seen:
        api, endpoint = split_api_path(request.path)
        matching = [step.key for step in steps if step.matches(api, request.method.upper(), endpoint)]
        assert matching == [step_of(request.method, request.path)], (request.path, matching)
    return steps


def _reports_status(key: tuple[str, str, str], request: Seen) -> bool:
    _, method, endpoint = key
    named = any("status" in part or "progress" in part for part in endpoint.split("/"))
    return method == "GET" and named and _has_status(_json(request))


def _has_status(node: Any) -> bool:
    if isinstance(node, dict):
        return any(key in STATUS_FIELDS or _has_status(value) for key, value in node.items())
    return isinstance(node, list) and any(_has_status(item) for item in node)


def _job_start(
    order: list[tuple[str, str, str]], first_status: tuple[str, str, str]
) -> tuple[str, str, str] | None:
    """The last POST (token requests aside) before the first status check."""
    posts = [key for key in order[: order.index(first_status)] if key[1] == "POST" and key[0] != "auth"]
    return posts[-1] if posts else None


def _json(request: Seen) -> Any:
    if "json" not in request.content_type:
        return None
    try:
        return json.loads(request.body)
    except ValueError:
        return None


def _download_of(request: Seen) -> tuple[str | None, bool]:
    payload = _json(request)
    if payload is None:
        binary = request.body and "text/plain" not in request.content_type
        return ("raw", request.body.startswith(ZIP_MAGIC)) if binary else (None, False)
    data = _first_data(payload)
    if data is None:
        return None, False
    try:
        content = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None, False
    return "document", content.startswith(ZIP_MAGIC)


def _first_data(node: Any) -> str | None:
    if isinstance(node, dict):
        if isinstance(node.get("data"), str):
            return str(node["data"])
        return next((found for value in node.values() if (found := _first_data(value)) is not None), None)
    if isinstance(node, list):
        return next((found for item in node if (found := _first_data(item)) is not None), None)
    return None


def glob_of(endpoint: str) -> str:
    """``endpoint`` with its ids (numbers, UUIDs) written ``*``."""
    return "/".join("*" if _ID.match(part) else part for part in endpoint.split("/"))
