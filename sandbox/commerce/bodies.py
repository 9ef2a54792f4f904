"""Reading the commerce API's JSON request bodies field by field, with a 400 naming the field at fault.

Bodies are read by hand rather than by FastAPI so that the bearer check always runs first (an unauthorised
caller never learns that its body was bad), a GET may carry a body (§2.8), and every refusal has the §7 shape.
A missing or ``null`` field counts as absent.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from sandbox.commerce.errors import CommerceError


async def json_object(request: Request, code: str) -> JSONBody:
    """The request's body as a JSON object; 400 ``code`` when it is empty, not JSON or not an object."""
    raw = await request.body()
    if not raw.strip():
        raise CommerceError(400, code, "the request needs a JSON object body")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CommerceError(400, code, f"the body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise CommerceError(400, code, f"the body must be a JSON object, not {type(data).__name__}")
    return JSONBody(data, code)


class JSONBody:
    """A JSON object whose fields are read by dotted path (``address.zip.zip``)."""

    def __init__(self, data: dict[str, Any], code: str) -> None:
        self.data = data
        self.code = code

    def _refuse(self, message: str) -> CommerceError:
        return CommerceError(400, self.code, message)

    def value(self, path: str) -> Any:
        """The value at ``path``, or None when it or a parent is absent; 400 when a parent is no object."""
        node: Any = self.data
        walked: list[str] = []
        for name in path.split("."):
            if node is None:
                return None
            if not isinstance(node, dict):
                raise self._refuse(f"field {'.'.join(walked)} must be an object")
            node = node.get(name)
            walked.append(name)
        return node

    def object(self, path: str) -> dict[str, Any]:
        found = self.value(path)
        if found is None:
            return {}
        if not isinstance(found, dict):
            raise self._refuse(f"field {path} must be an object")
        return found

    def text(self, path: str, *, required: bool = False) -> str:
        """The string at ``path`` ("" when absent); 400 when it is another type, or blank but required."""
        found = self.value(path)
        if found is None:
            found = ""
        if not isinstance(found, str):
            raise self._refuse(f"field {path} must be a string, not {type(found).__name__}")
        if required and not found.strip():
            raise self._refuse(f"field {path} is required")
        return found

    def boolean(self, path: str) -> bool | None:
        found = self.value(path)
        if found is not None and not isinstance(found, bool):
            raise self._refuse(f"field {path} must be a boolean, not {type(found).__name__}")
        return found

    def strings(self, path: str) -> list[str]:
        """The array of strings at ``path`` ([] when absent)."""
        found = self.value(path)
        if found is None:
            return []
        if not isinstance(found, list) or not all(isinstance(item, str) for item in found):
            raise self._refuse(f"field {path} must be an array of strings")
        return found
