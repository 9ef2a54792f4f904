"""Reading the commerce API's answers: a model or a list of models from a JSON answer, a JSON object of a
shape the spec does not show, or the answer as received. An answer that cannot be read is a
:class:`~connectors.errors.MalformedResponse` naming what was expected and its first problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from connectors.commerce.errors import API
from connectors.errors import MalformedResponse
from connectors.jsontext import json_of

M = TypeVar("M", bound=BaseModel)

# What an address label request accepts back: the spec shows no answer (§2.13), a label may be PDF itself.
LABEL_ACCEPT = "application/json, application/pdf;q=0.9"


@dataclass(frozen=True)
class ReceivedAnswer:
    """An answer whose shape the spec does not show, as received: its bytes and content type."""

    content: bytes = field(repr=False)
    content_type: str = ""

    @property
    def media_type(self) -> str:
        """The content type without its parameters, lower case (``application/pdf``)."""
        return self.content_type.split(";", 1)[0].strip().lower()


def parse(model: type[M], response: httpx.Response, what: str) -> M:
    try:
        return model.model_validate(json_of(response, api=API))
    except (ValueError, ValidationError) as error:
        raise MalformedResponse(
            f"{API}: the {what} cannot be read: {first_problem(error)}", api=API
        ) from None


def parse_list(model: type[M], response: httpx.Response, what: str) -> list[M]:
    try:
        body = json_of(response, api=API)
    except ValueError as error:
        raise MalformedResponse(f"{API}: the {what} cannot be read: {error}", api=API) from None
    if isinstance(body, dict):
        # Tolerate a wrapper object around the array ({"addresses": [...]}).
        arrays = [value for value in body.values() if isinstance(value, list)]
        body = arrays[0] if len(arrays) == 1 else body
    if not isinstance(body, list):
        raise MalformedResponse(f"{API}: the {what} are not an array", api=API)
    try:
        return [model.model_validate(item) for item in body]
    except ValidationError as error:
        raise MalformedResponse(
            f"{API}: the {what} cannot be read: {first_problem(error)}", api=API
        ) from None


def json_object(response: httpx.Response, what: str) -> dict[str, Any]:
    try:
        body = json_of(response, api=API)
    except ValueError:
        raise MalformedResponse(f"{API}: the {what} answer is not JSON", api=API) from None
    return body if isinstance(body, dict) else {"result": body}


def first_problem(error: Exception) -> str:
    if isinstance(error, ValidationError):
        problem = error.errors()[0]
        location = ".".join(str(part) for part in problem["loc"])
        return f"{location}: {problem['msg']}" if location else str(problem["msg"])
    return str(error)
