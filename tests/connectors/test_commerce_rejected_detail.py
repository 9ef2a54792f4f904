"""A refused commerce request keeps the service's message alone, for reports that show it on a row."""

from __future__ import annotations

import httpx

from connectors.commerce import CommerceRejected
from connectors.commerce.errors import error_for_response


def _answer(status: int, body: bytes) -> httpx.Response:
    request = httpx.Request("POST", "https://api.example/address/v1/addresses/validation")
    return httpx.Response(status, content=body, request=request, headers={"Content-Type": "application/json"})


def test_the_service_message_is_kept_as_the_detail() -> None:
    error = error_for_response(_answer(400, b'{"code": "INVALID", "message": "zip needs 4 digits"}'))
    assert isinstance(error, CommerceRejected)
    assert error.detail == "zip needs 4 digits" and error.status_code == 400
    assert str(error).endswith("/address/v1/addresses/validation: zip needs 4 digits")


def test_without_a_message_the_detail_is_the_meaning_of_the_status() -> None:
    error = error_for_response(_answer(400, b""))
    assert isinstance(error, CommerceRejected)
    assert error.detail == "incomplete or invalid parameters"
