"""The suite's secret watch itself: it lets a secret through only as a form body's client_secret field."""

from __future__ import annotations

import httpx
import pytest

from tests.secret_watch import SecretLeak, check_request

SECRET = "sandbox-commerce-secret"


def test_a_form_body_client_secret_passes() -> None:
    request = httpx.Request("POST", "https://auth.test/OAuth/token", data={"client_secret": SECRET, "a": "b"})
    check_request(request, [SECRET])


@pytest.mark.parametrize(
    "request_",
    [
        httpx.Request("POST", "https://auth.test/OAuth/token", params={"client_secret": SECRET}),
        httpx.Request("GET", "https://api.test/x", headers={"X-Client": SECRET}),
        httpx.Request("POST", "https://api.test/x", json={"client_secret": SECRET}),
        httpx.Request("POST", "https://auth.test/OAuth/token", data={"client_id": SECRET}),
    ],
    ids=["query", "header", "json body", "other form field"],
)
def test_a_secret_anywhere_else_is_caught(request_: httpx.Request) -> None:
    with pytest.raises(SecretLeak):
        check_request(request_, [SECRET])
